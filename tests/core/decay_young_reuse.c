/* heaplab core test: a threaded program that carves again, each round,
 * what the last purge of its young free memory gave back gets to keep it
 * resident, even when that is less than a budget's worth.
 *
 * With more than one thread, the purge of young memory over the allowance
 * (128 MiB) gives back only small spans with no live block, often less
 * than a budget (64 MiB). A program that carved all of it again each round
 * (mstress's generations) never carved a budget's worth, so the allowance
 * never doubled and every round faulted the same pages in again
 * (docs/core-development.md has the runs). Now carving half of what the
 * last young purge gave back is enough.
 *
 * Each round (with one idle thread, so the process counts as threaded):
 *  - the kept part, written once: 100 MiB of 1 KiB blocks of which one in
 *    64 stays live, so its free pages sit in spans in use, which such a
 *    purge passes over;
 *  - the reused part: 48 MiB of 2 KiB blocks, written and all freed, whole
 *    spans that such a purge gives back.
 * Together about 146 MiB are free, over the allowance. The first round's
 * purge gives the reused part back; the second round carves it again
 * (48 MiB, less than a budget); from the third on it stays resident.
 * The rounds must end before the kept part's free pages reach the long
 * decay (1 s), which would take them whatever the allowance; a run too
 * slow for that (sanitizers, a loaded machine) skips the check with a line
 * saying so. */
#include "heaplab.h"
#include "decay_util.h"
#include "idle_threads.h"
#include "testutil.h"

#define KEPT_BLOCK 1024
#define KEEP_ONE_IN 64
#define KEPT_BYTES (100 * MIB)
#define REUSED_BLOCK 2048
#define REUSED_BYTES (48 * MIB)
#define ROUNDS 4
#define LONG_DECAY_MS 1000

static void *kept[KEPT_BYTES / KEPT_BLOCK];
static void *reused[REUSED_BYTES / REUSED_BLOCK];

int main(void)
{
    hl_free(hl_malloc(64));
    idle_threads_start(1);

    const size_t nkept = KEPT_BYTES / KEPT_BLOCK, nreused = REUSED_BYTES / REUSED_BLOCK;
    alloc_written_sized(kept, nkept, KEPT_BLOCK);
    free_all_but_one_in(kept, nkept, KEEP_ONE_IN);
    /* from here the kept part's free pages age towards the long decay */
    double start = now_ms();

    size_t after[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        alloc_written_sized(reused, nreused, REUSED_BLOCK);
        free_all(reused, nreused);
        slow_events(64);
        after[r] = free_resident();
        printf("info round %d: %zu MiB free and resident, %.0f ms from the start\n", r + 1, after[r] / MIB,
               now_ms() - start);
    }
    double took = now_ms() - start;

    CHECK("the first round's purge gave the reused part back",
          after[0] + REUSED_BYTES / 2 <= KEPT_BYTES + REUSED_BYTES);
    if (took < LONG_DECAY_MS - 200)
        CHECK("from the third round on, the reused part stays resident",
              after[ROUNDS - 1] + SLACK >= KEPT_BYTES / 4 * 3 + REUSED_BYTES);
    else
        printf("skip the rounds took %.0f ms, too slow to tell the young purge from the long decay\n", took);

    free_one_in(kept, nkept, KEEP_ONE_IN);
    hl_trim();
    idle_threads_stop();
    return decay_test_finish();
}
