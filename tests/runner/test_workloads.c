/* heaplab-run-testwl: the runner with a workload table of its own, made to
 * exercise the runner's paths that real workloads should never take
 * (failures, overflowing buffers, undeclared parameters) and the ones they
 * all take (phases, samples, metrics, threads). check_runner.py drives it.
 *
 * Every workload here is in group "test" and allocates only through ctx->a. */
#include "run_main.h"
#include "runner.h"
#include "workload.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { TOUCH_BYTES = 1 << 20, BLOCK_SIZE = 256 };

/* ---- test-ok: everything a workload reports, on ctx->threads threads ---- */

typedef struct ok_shared {
    long long blocks;
} ok_shared;

static void ok_thread(wl_ctx *ctx, int index, void *arg)
{
    const ok_shared *s = arg;
    wl_rng rng;
    wl_rng_seed(&rng, ctx->seed + (uint64_t)index);
    for (long long i = 0; i < s->blocks; i++) {
        size_t size = (size_t)wl_rng_range(&rng, 1, BLOCK_SIZE);
        unsigned char *p = ctx->a->malloc(size);
        if (!p) {
            wl_fail(ctx, "malloc(%zu) returned NULL", size);
            return;
        }
        wl_touch(p, size, 1);
        ctx->a->free(p);
    }
}

static int run_ok(wl_ctx *ctx)
{
    long long blocks = wl_param(ctx, "blocks");
    unsigned char *big = ctx->a->malloc(TOUCH_BYTES);
    if (!big) {
        wl_fail(ctx, "malloc(%d) returned NULL", TOUCH_BYTES);
        return 1;
    }
    wl_touch(big, TOUCH_BYTES, 0);
    wl_sample(ctx, 1, TOUCH_BYTES);
    wl_phase(ctx, "touched", 1, TOUCH_BYTES);
    ok_shared s = {blocks};
    uint64_t ns = wl_run_threads(ctx, ctx->threads, 1, ok_thread, &s);
    wl_sample(ctx, 1 + blocks * ctx->threads, TOUCH_BYTES);
    ctx->a->free(big);
    /* a name with characters JSON must escape */
    wl_phase(ctx, "freed \"all\"\n\tdone", blocks * ctx->threads, 0);
    wl_metric(ctx, "ns_per_block", (double)ns / (double)(blocks * ctx->threads), NULL, NULL);
    /* a figure that does not exist is null in the document */
    wl_metric(ctx, "not_a_number", NAN, "x", "higher");
    return 0;
}

static const workload test_ok = {
    .name = "test-ok",
    .group = "test",
    .describe = "allocates, touches, runs threads, records phases, samples and metrics",
    .metric = "ns_per_block",
    .unit = "ns",
    .better = "lower",
    .default_threads = 2,
    .threaded = 1,
    .params = {{"blocks", 10000, 1000, 1, 1000000, "blocks per thread"}, {NULL, 0, 0, 0, 0, NULL}},
    .run = run_ok,
};

/* ---- test-fail: says why it failed ---- */

static int run_fail(wl_ctx *ctx)
{
    wl_phase(ctx, "before-failing", 0, 0);
    wl_fail(ctx, "deliberate failure number %d", 42);
    return 1;
}

static const workload test_fail = {
    .name = "test-fail",
    .group = "test",
    .describe = "fails on purpose with wl_fail",
    .metric = "x",
    .unit = "ns",
    .better = "lower",
    .default_threads = 1,
    .run = run_fail,
};

/* ---- test-no-metric: succeeds without its primary metric ---- */

static int run_no_metric(wl_ctx *ctx)
{
    wl_metric(ctx, "something_else", 1.0, "ns", "lower");
    return 0;
}

static const workload test_no_metric = {
    .name = "test-no-metric",
    .group = "test",
    .describe = "returns success without recording its primary metric",
    .metric = "promised",
    .unit = "ns",
    .better = "lower",
    .default_threads = 1,
    .run = run_no_metric,
};

/* ---- test-undeclared: asks for a parameter it never declared ---- */

static int run_undeclared(wl_ctx *ctx)
{
    wl_metric(ctx, "x", (double)wl_param(ctx, "never_declared"), "ns", "lower");
    return 0;
}

static const workload test_undeclared = {
    .name = "test-undeclared",
    .group = "test",
    .describe = "reads a parameter it does not declare",
    .metric = "x",
    .unit = "ns",
    .better = "lower",
    .default_threads = 1,
    .run = run_undeclared,
};

/* ---- test-too-many-phases: one phase more than the runner keeps ---- */

static int run_too_many_phases(wl_ctx *ctx)
{
    for (int i = 0; i <= RUNNER_MAX_PHASES; i++)
        wl_phase(ctx, "again", i, 0);
    wl_metric(ctx, "x", 1.0, "ns", "lower");
    return 0;
}

static const workload test_too_many_phases = {
    .name = "test-too-many-phases",
    .group = "test",
    .describe = "records one phase more than the runner has room for",
    .metric = "x",
    .unit = "ns",
    .better = "lower",
    .default_threads = 1,
    .run = run_too_many_phases,
};

const workload *const wl_builtins[] = {
    &test_ok, &test_fail, &test_no_metric, &test_undeclared, &test_too_many_phases,
};
const int wl_builtin_count = sizeof wl_builtins / sizeof wl_builtins[0];

int main(int argc, char **argv)
{
    return heaplab_run_main(argc, argv);
}
