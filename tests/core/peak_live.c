/* heaplab core test: hl_stats' peak_live, sampled from the threads' slow
 * paths, sees a thread's burst of small blocks and does not drift as
 * threads exit. The threads tell the sampler their small-block changes only
 * once these reach 64 KiB either way (so that a refill or flush of the
 * thread cache does not write a line every thread writes); what a thread
 * has not told it when it exits must be told then, or each exit would leave
 * up to 64 KiB behind in the sample.
 *
 * Checked: a thread that allocates 512 KiB and frees it raises peak_live to
 * at least 448 KiB; 300 threads in turn that each allocate 100 KiB, free 70
 * and hand 30 to main (which frees it) leave peak_live under 1 MiB, where a
 * sampler that forgot each thread's remainder would reach megabytes. */
#include <pthread.h>

#include "heaplab.h"
#include "testutil.h"

#define BLOCK 64
#define KIB 1024
#define BURST_BLOCKS (512 * KIB / BLOCK)
#define TURN_BLOCKS (100 * KIB / BLOCK)
#define KEPT_BLOCKS (30 * KIB / BLOCK)
#define TURNS 300

static void *burst(void *arg)
{
    (void)arg;
    static void *blocks[BURST_BLOCKS];
    for (int i = 0; i < BURST_BLOCKS; i++)
        blocks[i] = hl_malloc(BLOCK);
    for (int i = 0; i < BURST_BLOCKS; i++)
        hl_free(blocks[i]);
    return NULL;
}

/* allocates a turn's blocks, frees all but the last KEPT_BLOCKS, which it
 * leaves in `arg` for main */
static void *turn(void *arg)
{
    void **blocks = arg;
    for (int i = 0; i < TURN_BLOCKS; i++)
        blocks[i] = hl_malloc(BLOCK);
    for (int i = 0; i < TURN_BLOCKS - KEPT_BLOCKS; i++)
        hl_free(blocks[i]);
    return NULL;
}

static size_t peak_live_now(void)
{
    hl_stats_t st;
    hl_stats(&st);
    return st.peak_live;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, burst, NULL);
    pthread_join(t, NULL);
    size_t after_burst = peak_live_now();
    printf("peak_live after a 512 KiB burst on a thread: %zu bytes\n", after_burst);
    CHECK("a thread's 512 KiB burst of small blocks reaches the sampled peak (within 64 KiB)",
          after_burst >= 448 * KIB);

    /* the peak stays at the burst's (about 512 KiB): under 1 MiB */
    static void *blocks[TURN_BLOCKS];
    for (int n = 0; n < TURNS; n++) {
        pthread_create(&t, NULL, turn, blocks);
        pthread_join(t, NULL);
        for (int i = TURN_BLOCKS - KEPT_BLOCKS; i < TURN_BLOCKS; i++)
            hl_free(blocks[i]);
    }
    size_t after_turns = peak_live_now();
    printf("peak_live after %d threads of 100 KiB each: %zu bytes\n", TURNS, after_turns);
    CHECK("threads that exit with changes not yet sampled leave no drift in peak_live",
          after_turns < 1024 * KIB);
    return tu_finish();
}
