/* A C program that uses every part of the shim (gbench.h) the way
 * heaplab-gbench does, without any allocator: registration with arguments,
 * argument names, thread counts and real time; the keep-running loop;
 * items/bytes processed, user counters and a label; skipping with an error;
 * do-not-optimize and clobber-memory; context entries.
 *
 * It checks on the C side what it can see itself -- that each benchmark was
 * called, with the arguments and thread counts it was registered with, and
 * looped -- and exits 1 naming what went wrong. What Google Benchmark made
 * of the counters is checked in its JSON report by check_report.cmake. */
#include "gbench.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* The arguments and what the counters must become in the report. */
enum {
    COUNTERS_ARG = 3,
    COUNTERS_FACTOR = 14,       /* "answer" = COUNTERS_ARG * COUNTERS_FACTOR = 42 */
    PAIR_FIRST = 5,
    PAIR_SECOND = 7,
    PROBE_THREADS = 2,
    ITEMS_PER_ITERATION = 10,
    BYTES_PER_ITERATION = 64,
};
#define INVERTED_VALUE 4.0
#define SKIP_MESSAGE "skipped on purpose by shim_probe"

static atomic_long counters_calls;
static atomic_long counters_bad_arg;
static atomic_long pair_calls;
static atomic_long pair_bad_args;
static atomic_long thread_calls;
static atomic_long thread_bad_index;
static atomic_long skip_calls;
static atomic_long skip_looped;
static atomic_long iterations_seen;

static void bench_counters(gb_state *st, void *user)
{
    long *sink = user;
    atomic_fetch_add(&counters_calls, 1);
    if (gb_range(st, 0) != COUNTERS_ARG)
        atomic_fetch_add(&counters_bad_arg, 1);
    while (gb_keep_running(st)) {
        (*sink)++;
        gb_do_not_optimize(sink);
        gb_clobber_memory();
    }
    atomic_fetch_add(&iterations_seen, gb_iterations(st));
    gb_set_items_processed(st, gb_iterations(st) * ITEMS_PER_ITERATION);
    gb_set_bytes_processed(st, gb_iterations(st) * BYTES_PER_ITERATION);
    gb_set_counter(st, "answer", (double)(gb_range(st, 0) * COUNTERS_FACTOR),
                   GB_COUNTER_DEFAULT);
    gb_set_counter(st, "per_iteration", 1.0, GB_COUNTER_ITERATION_INVARIANT);
    gb_set_counter(st, "inverted", INVERTED_VALUE, GB_COUNTER_INVERT); /* reported as 0.25 */
    gb_set_label(st, "probe-label");
}

static void bench_pair_args(gb_state *st, void *user)
{
    (void)user;
    atomic_fetch_add(&pair_calls, 1);
    if (gb_range(st, 0) != PAIR_FIRST || gb_range(st, 1) != PAIR_SECOND)
        atomic_fetch_add(&pair_bad_args, 1);
    while (gb_keep_running_batch(st, PAIR_SECOND))
        gb_clobber_memory();
    gb_set_counter(st, "sum", (double)(gb_range(st, 0) + gb_range(st, 1)), GB_COUNTER_DEFAULT);
}

static void bench_threads(gb_state *st, void *user)
{
    (void)user;
    atomic_fetch_add(&thread_calls, 1);
    if (gb_thread_count(st) != PROBE_THREADS || gb_thread_index(st) < 0 ||
        gb_thread_index(st) >= PROBE_THREADS)
        atomic_fetch_add(&thread_bad_index, 1);
    while (gb_keep_running(st))
        gb_clobber_memory();
    /* summed over the threads by Google Benchmark: PROBE_THREADS in all */
    gb_set_counter(st, "threads_seen", 1.0, GB_COUNTER_DEFAULT);
}

static void bench_skip(gb_state *st, void *user)
{
    (void)user;
    atomic_fetch_add(&skip_calls, 1);
    gb_skip_with_error(st, SKIP_MESSAGE);
    if (!gb_error_occurred(st))
        atomic_fetch_add(&skip_looped, 1);
    /* Google Benchmark's rule: after an error, the loop must not run */
    while (gb_keep_running(st))
        atomic_fetch_add(&skip_looped, 1);
}

/* Prints a failed expectation; returns 1 if it failed. */
static int expect(int ok, const char *what)
{
    if (!ok)
        fprintf(stderr, "shim_probe: FAILED: %s\n", what);
    return !ok;
}

int main(int argc, char **argv)
{
    static long sink;
    gb_initialize(&argc, argv, NULL);
    if (gb_report_unrecognized(argc, argv))
        return 2;
    gb_add_context("probe_context", "probe-value");

    gb_bench_arg(gb_register("probe/counters", bench_counters, &sink), COUNTERS_ARG);

    static const char *const names[] = {"first", "second"};
    static const int64_t pair[] = {PAIR_FIRST, PAIR_SECOND};
    gb_bench *b = gb_register("probe/args", bench_pair_args, NULL);
    gb_bench_arg_names(b, names, sizeof names / sizeof names[0]);
    gb_bench_args(b, pair, sizeof pair / sizeof pair[0]);
    gb_bench_unit(b, GB_MICROSECOND);

    gb_bench_use_real_time(gb_bench_threads(gb_register("probe/threads", bench_threads, NULL),
                                            PROBE_THREADS));
    gb_register("probe/skip", bench_skip, NULL);

    size_t ran = gb_run_specified();
    gb_shutdown();

    /* The filter may select a subset; each check covers a benchmark only if it ran. */
    int failed = 0;
    failed += expect(ran > 0, "no benchmark ran");
    failed += expect(atomic_load(&counters_bad_arg) == 0, "probe/counters got a wrong argument");
    failed += expect(atomic_load(&pair_bad_args) == 0, "probe/args got wrong arguments");
    failed += expect(atomic_load(&thread_bad_index) == 0,
                     "probe/threads got a wrong thread count or index");
    failed += expect(atomic_load(&skip_looped) == 0,
                     "probe/skip looped or saw no error after gb_skip_with_error");
    if (atomic_load(&counters_calls) > 0) {
        failed += expect(atomic_load(&iterations_seen) > 0, "probe/counters never iterated");
        failed += expect(sink == atomic_load(&iterations_seen),
                         "probe/counters' loop body ran a different number of times than reported");
    }
    if (atomic_load(&thread_calls) > 0)
        failed += expect(atomic_load(&thread_calls) % PROBE_THREADS == 0,
                         "probe/threads was not called once per thread");
    printf("shim_probe: %zu benchmarks ran; %s\n", ran, failed ? "FAILED" : "ok");
    return failed ? 1 : 0;
}
