/* tmalloc-st-mixed: "mixed sizes to 400 KB, 50,000 live, steady state"
 * (workload published by the tmalloc README). Metric: nanoseconds per
 * free+allocate pair in the steady state.
 *
 * The seed does not say how its sizes are mixed, so this is our choice: a
 * mixture with one tier per path tmalloc routes requests to, weighted the
 * way programs allocate (most blocks small, a few large):
 *   small   16 B .. 8 KiB,        log-uniform  (size classes)
 *   medium  8 KiB .. 256 KiB,     log-uniform  (boundary-tag heap)
 *   large   256 KiB .. max_size,  uniform      (direct mappings)
 * with medium_permille and large_permille of the draws in the two upper
 * tiers (9% and 1% by default). Plain log-uniform up to 400 KB would make
 * the mean block ~40 KB and the live set ~2 GB; this mixture keeps it near
 * 550 MB of address space. Each new block is written as `touch` says
 * (default: its first byte); the seed's row wrote nothing, so reproducing
 * its table runs it with touch=none.
 */
#include "wl_steady.h"

enum {
    MIXED_SMALL_MAX = 8 * 1024,    /* tmalloc's size-class limit */
    MIXED_MEDIUM_MAX = 256 * 1024, /* tmalloc's direct-mapping threshold */
    PERMILLE = 1000,
};

typedef struct mixed_cfg {
    uint32_t min_size, max_size;
    uint32_t medium_permille, large_permille;
} mixed_cfg;

static uint32_t draw_mixed(wl_rng *rng, const void *cfgp)
{
    const mixed_cfg *cfg = cfgp;
    uint64_t tier = wl_rng_range(rng, 0, PERMILLE - 1);
    if (tier < cfg->large_permille)
        return (uint32_t)wl_rng_range(rng, MIXED_MEDIUM_MAX + 1, cfg->max_size);
    if (tier < cfg->large_permille + cfg->medium_permille)
        return (uint32_t)wl_rng_logrange(rng, MIXED_SMALL_MAX + 1, MIXED_MEDIUM_MAX);
    return (uint32_t)wl_rng_logrange(rng, cfg->min_size, MIXED_SMALL_MAX);
}

static int run_st_mixed(wl_ctx *ctx)
{
    const long long live = wl_param(ctx, "live");
    const long long pairs = wl_param(ctx, "pairs");
    mixed_cfg cfg = {
        .min_size = (uint32_t)wl_param(ctx, "min_size"),
        .max_size = (uint32_t)wl_param(ctx, "max_size"),
        .medium_permille = (uint32_t)wl_param(ctx, "medium_permille"),
        .large_permille = (uint32_t)wl_param(ctx, "large_permille"),
    };
    if (cfg.medium_permille + cfg.large_permille > PERMILLE) {
        wl_fail(ctx, "parameters medium_permille=%u and large_permille=%u add up to more "
                "than %d", (unsigned)cfg.medium_permille, (unsigned)cfg.large_permille, PERMILLE);
        return -1;
    }

    wl_steady st;
    int rc = -1;
    if (wl_steady_prepare(ctx, &st, (size_t)live, pairs, wl_touch_param(ctx), draw_mixed, &cfg) != 0)
        goto out;
    /* phases end outside the timed stretch: wl_phase reads RSS and stats */
    wl_phase(ctx, "prepared", 0, 0);
    if (wl_steady_fill(ctx, &st) != 0)
        goto out;
    wl_phase(ctx, "built", live, wl_steady_live_bytes(&st));

    uint64_t start = wl_now_ns();
    if (wl_steady_churn(ctx, &st, pairs) != 0)
        goto out;
    uint64_t elapsed = wl_now_ns() - start;
    wl_phase(ctx, "steady", pairs, wl_steady_live_bytes(&st));
    wl_metric(ctx, "ns_per_pair", (double)elapsed / (double)pairs, "ns", "lower");
    rc = 0;
out:
    wl_steady_release(ctx, &st);
    if (rc == 0) {
        wl_phase(ctx, "freed", live, 0);
        wl_operations(ctx, wl_steady_operations((size_t)live, pairs));
    }
    return rc;
}

const workload wl_tmalloc_st_mixed = {
    .name = "tmalloc-st-mixed",
    .group = "tmalloc",
    .describe = "mixed sizes up to 400 KB (90% <=8 KiB, 9% <=256 KiB, 1% above), "
                "50,000 live, steady state",
    .metric = "ns_per_pair", .unit = "ns", .better = "lower",
    .default_threads = 1, .threaded = 0,
    .params = {
        {"live", 50000, 0, 1, 10000000, "blocks live in the steady state"},
        {"pairs", 10000000, 100000, 1, 10000000000LL, "free+allocate pairs in the steady state"},
        {"min_size", 16, 0, 1, MIXED_SMALL_MAX, "smallest block size in bytes"},
        {"max_size", 400000, 0, MIXED_MEDIUM_MAX + 1, 1 << 30, "largest block size in bytes"},
        {"medium_permille", 90, 0, 0, PERMILLE, "draws per 1000 from 8 KiB-256 KiB"},
        {"large_permille", 10, 0, 0, PERMILLE, "draws per 1000 from 256 KiB-max_size"},
        WL_TOUCH_PARAM(WL_TOUCH_FIRST),
        {NULL, 0, 0, 0, 0, NULL},
    },
    .run = run_st_mixed,
};
