/* heaplab core tests: what the decay tests read and do between bursts. */
#ifndef HEAPLAB_DECAY_UTIL_H
#define HEAPLAB_DECAY_UTIL_H

#include <stddef.h>
#include <time.h>

#include "heaplab.h"
#include "testutil.h"

#define DECAY_BLOCK 8192

/* The core's decay figures the tests check against (core/internal.h) */
#define MIB ((size_t)1 << 20)
#define GRACE_MS 100         /* REUSE_GRACE_MS */
#define BUDGET (64 * MIB)    /* RETAIN_BYTES */
/* the budget is checked every 16 slow-path events: what those free (a few
 * flushes) may be on top of a limit */
#define SLACK (2 * MIB)

static inline double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* sleeps until now_ms() is past t */
static inline void pause_until(double t)
{
    double left = t - now_ms();
    if (left > 0)
        pause_ms((long)left + 1);
}

/* n blocks of `size` bytes into blocks[], the first byte of each 4 KiB of
 * each written */
static inline void alloc_written_sized(void **blocks, size_t n, size_t size)
{
    for (size_t i = 0; i < n; i++) {
        blocks[i] = hl_malloc(size);
        for (size_t off = 0; off < size; off += 4096)
            ((volatile char *)blocks[i])[off] = 1;
    }
}

/* n blocks of DECAY_BLOCK bytes into blocks[], both OS pages of each written */
static inline void alloc_written(void **blocks, size_t n)
{
    alloc_written_sized(blocks, n, DECAY_BLOCK);
}

static inline void free_all(void **blocks, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hl_free(blocks[i]);
}

/* frees every block but one in `k` (blocks[0], blocks[k], ... stay live),
 * which leaves spans in use with most of their pages free */
static inline void free_all_but_one_in(void **blocks, size_t n, size_t k)
{
    for (size_t i = 0; i < n; i++)
        if (i % k != 0)
            hl_free(blocks[i]);
}

/* frees the blocks free_all_but_one_in left live */
static inline void free_one_in(void **blocks, size_t n, size_t k)
{
    for (size_t i = 0; i < n; i += k)
        hl_free(blocks[i]);
}

/* what every decay test checks last: the counters agree and the heap's
 * invariants hold; returns the test's exit status */
static inline int decay_test_finish(void)
{
    hl_stats_t st;
    hl_stats(&st);
    CHECK("stats balanced", hl_stats_balanced(&st));
    CHECK("hl_check clean", hl_check() == 0);
    return tu_finish();
}

/* free small pages and medium blocks still resident */
static inline size_t free_resident(void)
{
    hl_stats_t st;
    hl_stats(&st);
    return st.page_free + st.medium_free;
}

/* slow-path events, on which the decay runs: medium blocks always take the
 * slow path */
static inline void slow_events(int n)
{
    for (int i = 0; i < n; i++)
        hl_free(hl_malloc(40000));
}

#endif
