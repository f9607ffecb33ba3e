/* The steady-state live set shared by tmalloc-st-mixed and
 * tmalloc-st-medium (see wl_steady.h). */
#include "wl_steady.h"

#include <string.h>

int wl_steady_prepare(wl_ctx *ctx, wl_steady *st, size_t live, long long pairs,
                      wl_touch_mode touch, wl_size_draw_fn draw, const void *cfg)
{
    memset(st, 0, sizeof *st);
    st->live = live;
    st->touch = touch;
    /* sizes are needed for the fill and every pair; victims for every pair */
    const unsigned long long need = (unsigned long long)live + (unsigned long long)pairs;
    st->ring = 1;
    while (st->ring < WL_STEADY_RING && st->ring < need)
        st->ring *= 2;

    wl_rng rng;
    wl_rng_seed(&rng, ctx->seed);
    st->blocks = wl_scratch_get(ctx, live * sizeof *st->blocks);
    if (st->blocks == NULL)
        return -1;
    st->block_size = wl_scratch_get(ctx, live * sizeof *st->block_size);
    if (st->block_size == NULL)
        return -1;
    st->sizes = wl_scratch_get(ctx, st->ring * sizeof *st->sizes);
    if (st->sizes == NULL)
        return -1;
    st->victims = wl_scratch_get(ctx, st->ring * sizeof *st->victims);
    if (st->victims == NULL)
        return -1;
    for (size_t i = 0; i < st->ring; i++) {
        st->sizes[i] = draw(&rng, cfg);
        st->victims[i] = (uint32_t)wl_rng_range(&rng, 0, live - 1);
    }
    return 0;
}

/* One new block of the next ring size into slot i; NULL means failure. */
static inline void *steady_new(wl_steady *st, const alloc_table *a, size_t i)
{
    uint32_t size = st->sizes[st->next++ & (st->ring - 1)];
    void *p = a->malloc(size);
    if (p != NULL)
        wl_touch_block(p, size, st->touch);
    st->blocks[i] = p;
    st->block_size[i] = size;
    return p;
}

int wl_steady_fill(wl_ctx *ctx, wl_steady *st)
{
    const alloc_table *a = ctx->a;
    for (size_t i = 0; i < st->live; i++) {
        if (steady_new(st, a, i) == NULL) {
            wl_fail(ctx, "malloc(%u) returned NULL while building the live set (%zu of %zu)",
                    (unsigned)st->block_size[i], i, st->live);
            return -1;
        }
    }
    return 0;
}

int wl_steady_churn(wl_ctx *ctx, wl_steady *st, long long pairs)
{
    const alloc_table *a = ctx->a;
    for (long long k = 0; k < pairs; k++) {
        size_t victim = st->victims[(size_t)k & (st->ring - 1)];
        a->free(st->blocks[victim]);
        if (steady_new(st, a, victim) == NULL) {
            wl_fail(ctx, "malloc(%u) returned NULL in steady state after %lld pairs",
                    (unsigned)st->block_size[victim], k);
            return -1;
        }
    }
    return 0;
}

size_t wl_steady_live_bytes(const wl_steady *st)
{
    size_t total = 0;
    for (size_t i = 0; i < st->live; i++)
        if (st->blocks[i] != NULL)
            total += st->block_size[i];
    return total;
}

void wl_steady_release(wl_ctx *ctx, wl_steady *st)
{
    if (st->blocks != NULL) {
        for (size_t i = 0; i < st->live; i++) {
            ctx->a->free(st->blocks[i]);
            st->blocks[i] = NULL;
        }
    }
    wl_scratch_put(st->victims, st->ring * sizeof *st->victims);
    wl_scratch_put(st->sizes, st->ring * sizeof *st->sizes);
    wl_scratch_put(st->block_size, st->live * sizeof *st->block_size);
    wl_scratch_put(st->blocks, st->live * sizeof *st->blocks);
    memset(st, 0, sizeof *st);
}
