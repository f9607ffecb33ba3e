/* Google Benchmark for C: what a microbenchmark written in C needs, behind
 * plain functions. The one C++ file (gbench_shim.cpp) implements them on
 * Debian's libbenchmark 1.7.1; nothing else in heaplab sees C++.
 *
 * A benchmark is a C function run by Google Benchmark's own machinery
 * (iteration count, repetitions, threads, reporters, --benchmark_* flags):
 *
 *     static void bench(gb_state *st, void *user)
 *     {
 *         size_t size = (size_t)gb_range(st, 0);
 *         while (gb_keep_running(st)) { ... }
 *         gb_set_items_processed(st, gb_iterations(st));
 *     }
 *     gb_bench_arg(gb_register("name", bench, user), 64);
 *
 * Registration returns the benchmark so calls can be chained, as in C++.
 * Names are copied; `user` is passed back unchanged to every call (and to
 * every thread of a threaded benchmark, so it must be safe to share).
 *
 * C has no exceptions to catch: an error inside a benchmark is reported with
 * gb_skip_with_error(), after which the function must leave its loop.
 */
#ifndef HEAPLAB_GBENCH_H
#define HEAPLAB_GBENCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
/* The C++ side promises not to throw into C (see gbench_shim.cpp). */
#define GB_NOEXCEPT noexcept
extern "C" {
#else
#define GB_NOEXCEPT
#endif

typedef struct gb_state gb_state; /* a benchmark::State, opaque to C */
typedef struct gb_bench gb_bench; /* a registered benchmark, opaque to C */
typedef void (*gb_function)(gb_state *st, void *user);

/* Time units, as Google Benchmark prints them. */
typedef enum gb_time_unit {
    GB_NANOSECOND,
    GB_MICROSECOND,
    GB_MILLISECOND,
    GB_SECOND,
} gb_time_unit;

/* How a user counter is reported; the values combine with |, with the
 * meaning of benchmark::Counter's flags of the same names. */
typedef enum gb_counter_flags {
    GB_COUNTER_DEFAULT = 0,
    GB_COUNTER_RATE = 1 << 0,                /* divided by the measured time */
    GB_COUNTER_AVG_THREADS = 1 << 1,         /* divided by the thread count */
    GB_COUNTER_ITERATION_INVARIANT = 1 << 2, /* multiplied by the iterations */
    GB_COUNTER_AVG_ITERATIONS = 1 << 3,      /* divided by the iterations */
    GB_COUNTER_INVERT = 1 << 4,              /* reported as 1/value (after the rest) */
} gb_counter_flags;

/* ---- the program around the benchmarks ---- */

/* Parses and removes Google Benchmark's own flags (--benchmark_filter,
 * --benchmark_repetitions, --benchmark_format, --benchmark_out, ...) from
 * argv, as benchmark::Initialize does. `extra_help`, when not NULL, is
 * printed before Google Benchmark's --help text (for the program's own
 * flags); --help then exits. */
void gb_initialize(int *argc, char **argv, void (*extra_help)(void)) GB_NOEXCEPT;

/* After gb_initialize: says on stderr which arguments nobody understood and
 * returns 1 if there was any, else 0. */
int gb_report_unrecognized(int argc, char **argv) GB_NOEXCEPT;

/* Adds "key": "value" to the "context" object of the JSON report. */
void gb_add_context(const char *key, const char *value) GB_NOEXCEPT;

/* Runs the benchmarks the filter selects; returns how many ran. */
size_t gb_run_specified(void) GB_NOEXCEPT;

/* Releases what gb_initialize set up. */
void gb_shutdown(void) GB_NOEXCEPT;

/* ---- registration ---- */

gb_bench *gb_register(const char *name, gb_function fn, void *user) GB_NOEXCEPT;
/* One more argument set of one value (state: gb_range(st, 0)). */
gb_bench *gb_bench_arg(gb_bench *b, int64_t value) GB_NOEXCEPT;
/* One more argument set of n values (gb_range(st, 0 .. n-1)). */
gb_bench *gb_bench_args(gb_bench *b, const int64_t *values, size_t n) GB_NOEXCEPT;
/* Argument sets lo, lo*m, lo*m^2, ... and hi, m from gb_bench_range_multiplier
 * (8 unless set); call the multiplier first. */
gb_bench *gb_bench_range(gb_bench *b, int64_t lo, int64_t hi) GB_NOEXCEPT;
gb_bench *gb_bench_range_multiplier(gb_bench *b, int multiplier) GB_NOEXCEPT;
/* Names of the arguments, shown in the benchmark name as "name:value". */
gb_bench *gb_bench_arg_names(gb_bench *b, const char *const *names, size_t n) GB_NOEXCEPT;
/* Runs the benchmark with this many threads (call once per count wanted). */
gb_bench *gb_bench_threads(gb_bench *b, int threads) GB_NOEXCEPT;
/* Reports wall-clock time instead of the process's CPU time (right for
 * threaded benchmarks: CPU time adds up every thread's). */
gb_bench *gb_bench_use_real_time(gb_bench *b) GB_NOEXCEPT;
gb_bench *gb_bench_unit(gb_bench *b, gb_time_unit unit) GB_NOEXCEPT;

/* ---- inside a benchmark ---- */

/* The timed loop: 1 while another iteration should run, then 0. Costs one
 * call and a compare per iteration, the same for every benchmark. */
int gb_keep_running(gb_state *st) GB_NOEXCEPT;
/* The same for n iterations at a time (may run up to n-1 more in total). */
int gb_keep_running_batch(gb_state *st, int64_t n) GB_NOEXCEPT;

/* the index-th argument of the running argument set */
int64_t gb_range(gb_state *st, size_t index) GB_NOEXCEPT;
/* iterations run so far (all of them once the loop has ended) */
int64_t gb_iterations(gb_state *st) GB_NOEXCEPT;
/* this thread, 0 .. gb_thread_count()-1, and how many run the benchmark */
int gb_thread_index(gb_state *st) GB_NOEXCEPT;
int gb_thread_count(gb_state *st) GB_NOEXCEPT;

/* Shown as items_per_second / bytes_per_second (rates over the measured time). */
void gb_set_items_processed(gb_state *st, int64_t items) GB_NOEXCEPT;
void gb_set_bytes_processed(gb_state *st, int64_t bytes) GB_NOEXCEPT;
/* A user counter, its own column / JSON key; flags: gb_counter_flags. */
void gb_set_counter(gb_state *st, const char *name, double value, unsigned flags) GB_NOEXCEPT;
void gb_set_label(gb_state *st, const char *label) GB_NOEXCEPT;

/* Marks this run as failed with msg (Google Benchmark reports it as an error
 * and the JSON has "error_occurred": true, "error_message": msg). The caller
 * must then leave its loop: the loop condition is not made false for it. */
void gb_skip_with_error(gb_state *st, const char *msg) GB_NOEXCEPT;
int gb_error_occurred(gb_state *st) GB_NOEXCEPT;

/* Stops and restarts the clock around work that should not be timed
 * (expensive: a few hundred nanoseconds each). */
void gb_pause_timing(gb_state *st) GB_NOEXCEPT;
void gb_resume_timing(gb_state *st) GB_NOEXCEPT;

/* ---- keeping the compiler honest ---- */

/* The compiler must assume that p's value, and the memory it points to, is
 * used: a result the benchmark never reads is not optimised away. An empty
 * asm costs no instruction, which a call into the C++ file would. */
static inline void gb_do_not_optimize(const void *p)
{
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

/* Every store before this point must reach memory before any after it. */
static inline void gb_clobber_memory(void)
{
    __asm__ __volatile__("" : : : "memory");
}

#ifdef __cplusplus
}
#endif

#endif
