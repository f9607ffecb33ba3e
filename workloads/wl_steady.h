/* A steady-state live set: `live` blocks are built, then each step frees
 * one live block chosen at random and allocates a replacement of a freshly
 * drawn size in its slot, so the live count never changes. tmalloc's
 * "50,000 live, steady state" and "2,000 live" rows are this shape.
 *
 * Victims and sizes are drawn before the clock starts into a ring of at
 * most WL_STEADY_RING entries (fewer when the run needs fewer); a run
 * longer than the ring goes round it again (same victim slots, now holding
 * different blocks).
 */
#ifndef HEAPLAB_WORKLOADS_WL_STEADY_H
#define HEAPLAB_WORKLOADS_WL_STEADY_H

#include "wl_common.h"

enum { WL_STEADY_RING = 1 << 20 };

/* Draws one block size; `cfg` is the workload's own description. */
typedef uint32_t (*wl_size_draw_fn)(wl_rng *rng, const void *cfg);

typedef struct wl_steady {
    size_t live;          /* blocks in the live set */
    wl_touch_mode touch;  /* what is written into every new block */
    void **blocks;        /* [live] the live set */
    uint32_t *block_size; /* [live] bytes requested for blocks[i] */
    size_t ring;          /* entries in sizes and victims: a power of two */
    uint32_t *sizes;      /* [ring] pre-drawn sizes */
    uint32_t *victims;    /* [ring] pre-drawn slots to replace */
    size_t next;          /* next ring entry to use */
} wl_steady;

/* Draws the ring for a run of `pairs` replacements and maps the live
 * set's arrays. Returns 0, or -1 after wl_fail(); wl_steady_release() is
 * safe to call either way. */
int wl_steady_prepare(wl_ctx *ctx, wl_steady *st, size_t live, long long pairs,
                      wl_touch_mode touch, wl_size_draw_fn draw, const void *cfg);

/* Allocates the whole live set. Returns 0, or -1 after wl_fail(). */
int wl_steady_fill(wl_ctx *ctx, wl_steady *st);

/* Performs `pairs` free+allocate replacements. Returns 0, or -1 after
 * wl_fail(). */
int wl_steady_churn(wl_ctx *ctx, wl_steady *st, long long pairs);

/* Bytes requested by the blocks now live. */
size_t wl_steady_live_bytes(const wl_steady *st);

/* Allocator calls of a successful run: the fill, a free and an allocation
 * per pair, and the release. */
static inline long long wl_steady_operations(size_t live, long long pairs)
{
    return 2 * (long long)live + 2 * pairs;
}

/* Frees every live block (through the table) and unmaps the arrays. */
void wl_steady_release(wl_ctx *ctx, wl_steady *st);

#endif
