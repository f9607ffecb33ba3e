/* heaplab core test: memory goes back. A large live set of small and medium
 * blocks, all written; most of it freed at random. Then:
 *  - decay: after a pause, a few slow-path events purge the free pages
 *    without any trim call (RSS drops, stats move bytes to untouched);
 *  - freeing more and calling hl_trim() returns it at once;
 *  - pages emptied in one size class serve another (mapped does not grow);
 *  - budget: 160 MiB freed in a burst goes back down to the 64 MiB budget
 *    once the core's 100 ms reuse grace has passed (decay_policy.c checks
 *    what stays within the grace). */
#include <string.h>
#include <time.h>

#include "heaplab.h"
#include "testutil.h"

#define BLOCKS 60000

static void *blocks[BLOCKS];

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* slow-path events: medium blocks always take the slow path */
static void slow_events(int n)
{
    for (int i = 0; i < n; i++)
        hl_free(hl_malloc(40000));
}

/* free and resident small and medium bytes */
static size_t free_resident(void)
{
    hl_stats_t st;
    hl_stats(&st);
    return st.page_free + st.medium_free;
}

int main(void)
{
    uint64_t rng = 42;
    size_t rss0 = tu_rss();
    for (int i = 0; i < BLOCKS; i++) {
        /* log-uniform 16 B .. 32 KiB, like the harness's memory test */
        size_t size = (size_t)16 << (tu_rand(&rng) % 12);
        size += tu_rand(&rng) % size;
        blocks[i] = hl_malloc(size);
        memset(blocks[i], 0x77, size);
    }
    size_t rss_full = tu_rss();
    hl_stats_t full;
    hl_stats(&full);

    for (int i = 0; i < BLOCKS; i++)
        if (tu_rand(&rng) % 10 < 8) {
            hl_free(blocks[i]);
            blocks[i] = NULL;
        }
    /* longer than the reuse grace (100 ms) */
    pause_ms(150);
    slow_events(64);
    size_t rss_decayed = tu_rss();
    hl_stats_t decayed;
    hl_stats(&decayed);
    printf("info rss: start %zu KiB, full %zu KiB, after free 80%% + decay %zu KiB\n", rss0 >> 10, rss_full >> 10,
           rss_decayed >> 10);
    CHECK("decay alone (no trim) returned most of the freed memory: RSS below half of full",
          rss_decayed - rss0 < (rss_full - rss0) / 2);
    CHECK("decay moved bytes to untouched", decayed.untouched > full.untouched + (full.live / 4));
    CHECK("purge calls counted", decayed.purge_count > full.purge_count);

    /* free half of what is left and trim at once, before any decay */
    hl_stats_t before_trim;
    hl_stats(&before_trim);
    size_t rss_before_trim = tu_rss();
    for (int i = 0; i < BLOCKS; i += 2) {
        hl_free(blocks[i]);
        blocks[i] = NULL;
    }
    size_t released = hl_trim();
    size_t rss_trimmed = tu_rss();
    hl_stats_t trimmed;
    hl_stats(&trimmed);
    printf("info rss before trim %zu KiB, after %zu KiB, released %zu KiB\n", rss_before_trim >> 10, rss_trimmed >> 10,
           released >> 10);
    CHECK("hl_trim reports bytes released", released > 0);
    CHECK("hl_trim lowers RSS right away", rss_trimmed < rss_before_trim);
    CHECK("hl_trim moves the freed bytes to untouched",
          trimmed.untouched > before_trim.untouched && trimmed.page_free + trimmed.medium_free < before_trim.live / 4);
    CHECK("stats balanced after trim", hl_stats_balanced(&trimmed));
    CHECK("hl_check clean after trim", hl_check() == 0);

    /* free the rest, trim, then allocate a different class: the memory of
     * the emptied pages is reused instead of mapping more */
    for (int i = 0; i < BLOCKS; i++) {
        hl_free(blocks[i]);
        blocks[i] = NULL;
    }
    /* keep one small segment mapped, then fill it with another class */
    void *pin = hl_malloc(24);
    hl_trim();
    hl_stats_t before;
    hl_stats(&before);
    static void *other[8000];
    for (int i = 0; i < 8000; i++)
        other[i] = hl_malloc(200); /* 1.6 MB of a class the first phase barely used */
    hl_stats_t after;
    hl_stats(&after);
    CHECK("an emptied page serves another class: small mapped does not grow", after.mapped <= before.mapped);
    for (int i = 0; i < 8000; i++)
        hl_free(other[i]);
    hl_free(pin);
    CHECK("hl_check clean at the end", hl_check() == 0);

    static void *burst[20480];
    for (int i = 0; i < 20480; i++) {
        burst[i] = hl_malloc(8192);
        memset(burst[i], 0x55, 8192);
    }
    for (int i = 0; i < 20480; i++)
        hl_free(burst[i]);
    pause_ms(150);
    slow_events(64);
    size_t later = free_resident();
    printf("info 160 MiB freed in a burst, 150 ms later: free and resident %zu KiB\n", later >> 10);
    /* the budget is checked every 16 slow-path events: what those free (a
     * few 40 KiB flushes here) may be on top of it */
    CHECK("160 MiB freed in a burst: once the grace has passed, at most the 64 MiB budget (+ 2 MiB) is resident",
          later <= ((size_t)66 << 20));
    hl_stats_t burst_freed;
    hl_stats(&burst_freed);
    CHECK("stats balanced after the burst", hl_stats_balanced(&burst_freed));
    return tu_finish();
}
