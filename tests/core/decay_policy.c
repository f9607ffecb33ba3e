/* heaplab core test: when free memory goes back, in a fresh process (the
 * young allowance starts at its floor). Each burst allocates 8 KiB blocks
 * with both OS pages written and frees them all.
 *  - a burst under the young allowance (128 MiB) stays resident right after
 *    its frees (the next burst reuses it), and once the reuse grace (100 ms)
 *    has passed it goes back down to the 64 MiB budget;
 *  - a program that gives up more than the allowance gets most of it back
 *    at once;
 *  - one that frees and reallocates that much over and over soon keeps it
 *    resident (each purge of young memory after a reuse doubles the
 *    allowance), and after seconds without such a purge it gets it back
 *    at once again.
 * "Stays resident" holds only if the frees took less than the grace: on a
 * slower run (sanitizers, a loaded machine) those checks are skipped with
 * a line saying so; the checks that memory went back always run. */
#include <string.h>
#include <time.h>

#include "heaplab.h"
#include "decay_util.h"
#include "testutil.h"

#define BLOCK DECAY_BLOCK
#define ALLOWANCE_FLOOR (128 * MIB)

static void *blocks[400 * MIB / BLOCK];

/* Allocates and frees `bytes`; returns the free resident bytes right after,
 * and in *fast whether the frees took less than the grace. */
static size_t burst(size_t bytes, int *fast)
{
    size_t n = bytes / BLOCK;
    alloc_written(blocks, n);
    double t0 = now_ms();
    free_all(blocks, n);
    double took = now_ms() - t0;
    size_t after = free_resident();
    *fast = took < GRACE_MS / 2;
    printf("info %zu MiB freed in %.1f ms: %zu MiB free and resident\n", bytes / MIB, took, after / MIB);
    return after;
}

static void check_if_fast(int fast, const char *name, int cond)
{
    if (fast)
        CHECK(name, cond);
    else
        printf("skip %s (the frees took longer than the grace)\n", name);
}

static void settle(void)
{
    pause_ms(GRACE_MS + 50);
    slow_events(64);
}

int main(void)
{
    int fast;
    size_t after = burst(100 * MIB, &fast);
    check_if_fast(fast, "100 MiB freed in a burst stays resident right after (under the young allowance)",
                  after >= 94 * MIB);
    settle();
    after = free_resident();
    printf("info after the grace: %zu MiB free and resident\n", after / MIB);
    CHECK("once the grace has passed, free memory goes back down to the budget", after <= BUDGET + SLACK);

    after = burst(400 * MIB, &fast);
    CHECK("400 MiB given up in a burst: most of it goes back at once (under the allowance of 128 MiB)",
          after <= ALLOWANCE_FLOOR + SLACK);

    /* reallocated and freed again: each purge of young memory after the
     * reuse doubles the allowance, 128 -> 256 -> 512 MiB */
    for (int cycle = 1; cycle <= 3; cycle++)
        after = burst(400 * MIB, &fast);
    check_if_fast(fast, "400 MiB freed and reallocated over and over: after three cycles it stays resident",
                  after >= 390 * MIB);

    /* more than LONG_DECAY_MS (1 s) per halving without a young purge:
     * the allowance is back at its floor */
    pause_ms(3500);
    slow_events(64);
    after = burst(400 * MIB, &fast);
    CHECK("after seconds without such a purge, most of a 400 MiB burst goes back at once again",
          after <= 2 * ALLOWANCE_FLOOR + SLACK);
    settle();
    CHECK("and the rest after the grace", free_resident() <= BUDGET + SLACK);

    return decay_test_finish();
}
