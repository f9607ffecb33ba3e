// gbench.h implemented on Google Benchmark: the only C++ in heaplab.
//
// C sees two opaque pointer types; here they are the library's own objects
// (gb_state* is a benchmark::State*, gb_bench* a benchmark::internal::
// Benchmark*), converted back with reinterpret_cast: no wrapper objects, so
// nothing to allocate or free around each call.
//
// Every function is noexcept: a C++ exception cannot unwind through the C
// frames that called it, so one that escapes ends the process
// (std::terminate) with the library's message instead of corrupting it.
#include "gbench.h"

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace {

benchmark::State &state_of(gb_state *st)
{
    return *reinterpret_cast<benchmark::State *>(st);
}

benchmark::internal::Benchmark *bench_of(gb_bench *b)
{
    return reinterpret_cast<benchmark::internal::Benchmark *>(b);
}

gb_bench *handle_of(benchmark::internal::Benchmark *b)
{
    return reinterpret_cast<gb_bench *>(b);
}

// Initialize takes a plain function for --help, so the program's own help
// is kept here for the one call it can make.
void (*program_help)(void) = nullptr;

void print_help()
{
    if (program_help)
        program_help();
    benchmark::PrintDefaultHelp();
}

benchmark::TimeUnit time_unit_of(gb_time_unit unit)
{
    switch (unit) {
    case GB_MICROSECOND:
        return benchmark::kMicrosecond;
    case GB_MILLISECOND:
        return benchmark::kMillisecond;
    case GB_SECOND:
        return benchmark::kSecond;
    case GB_NANOSECOND:
        break;
    }
    return benchmark::kNanosecond;
}

// gb_counter_flags to benchmark::Counter::Flags, one named flag at a time:
// the library's bit values are its business (kInvert is bit 31).
benchmark::Counter::Flags counter_flags_of(unsigned flags)
{
    struct pair {
        unsigned c;
        benchmark::Counter::Flags cpp;
    };
    static const pair table[] = {
        {GB_COUNTER_RATE, benchmark::Counter::kIsRate},
        {GB_COUNTER_AVG_THREADS, benchmark::Counter::kAvgThreads},
        {GB_COUNTER_ITERATION_INVARIANT, benchmark::Counter::kIsIterationInvariant},
        {GB_COUNTER_AVG_ITERATIONS, benchmark::Counter::kAvgIterations},
        {GB_COUNTER_INVERT, benchmark::Counter::kInvert},
    };
    // combined with the library's own operator|, which knows its enum's range
    benchmark::Counter::Flags out = benchmark::Counter::kDefaults;
    for (const pair &p : table)
        if (flags & p.c)
            out = out | p.cpp;
    return out;
}

} // namespace

extern "C" {

void gb_initialize(int *argc, char **argv, void (*extra_help)(void)) noexcept
{
    program_help = extra_help;
    benchmark::Initialize(argc, argv, print_help);
}

int gb_report_unrecognized(int argc, char **argv) noexcept
{
    return benchmark::ReportUnrecognizedArguments(argc, argv) ? 1 : 0;
}

void gb_add_context(const char *key, const char *value) noexcept
{
    benchmark::AddCustomContext(key, value);
}

size_t gb_run_specified(void) noexcept
{
    return benchmark::RunSpecifiedBenchmarks();
}

void gb_shutdown(void) noexcept
{
    benchmark::Shutdown();
}

gb_bench *gb_register(const char *name, gb_function fn, void *user) noexcept
{
    // The lambda keeps the C function and its argument; the library copies
    // the name into its own string.
    return handle_of(benchmark::RegisterBenchmark(
        name, [fn, user](benchmark::State &st) { fn(reinterpret_cast<gb_state *>(&st), user); }));
}

gb_bench *gb_bench_arg(gb_bench *b, int64_t value) noexcept
{
    return handle_of(bench_of(b)->Arg(value));
}

gb_bench *gb_bench_args(gb_bench *b, const int64_t *values, size_t n) noexcept
{
    return handle_of(bench_of(b)->Args(std::vector<int64_t>(values, values + n)));
}

gb_bench *gb_bench_range(gb_bench *b, int64_t lo, int64_t hi) noexcept
{
    return handle_of(bench_of(b)->Range(lo, hi));
}

gb_bench *gb_bench_range_multiplier(gb_bench *b, int multiplier) noexcept
{
    return handle_of(bench_of(b)->RangeMultiplier(multiplier));
}

gb_bench *gb_bench_arg_names(gb_bench *b, const char *const *names, size_t n) noexcept
{
    return handle_of(bench_of(b)->ArgNames(std::vector<std::string>(names, names + n)));
}

gb_bench *gb_bench_threads(gb_bench *b, int threads) noexcept
{
    return handle_of(bench_of(b)->Threads(threads));
}

gb_bench *gb_bench_use_real_time(gb_bench *b) noexcept
{
    return handle_of(bench_of(b)->UseRealTime());
}

gb_bench *gb_bench_unit(gb_bench *b, gb_time_unit unit) noexcept
{
    return handle_of(bench_of(b)->Unit(time_unit_of(unit)));
}

int gb_keep_running(gb_state *st) noexcept
{
    return state_of(st).KeepRunning() ? 1 : 0;
}

int gb_keep_running_batch(gb_state *st, int64_t n) noexcept
{
    return state_of(st).KeepRunningBatch(n) ? 1 : 0;
}

int64_t gb_range(gb_state *st, size_t index) noexcept
{
    return state_of(st).range(index);
}

int64_t gb_iterations(gb_state *st) noexcept
{
    return state_of(st).iterations();
}

int gb_thread_index(gb_state *st) noexcept
{
    return state_of(st).thread_index();
}

int gb_thread_count(gb_state *st) noexcept
{
    return state_of(st).threads();
}

void gb_set_items_processed(gb_state *st, int64_t items) noexcept
{
    state_of(st).SetItemsProcessed(items);
}

void gb_set_bytes_processed(gb_state *st, int64_t bytes) noexcept
{
    state_of(st).SetBytesProcessed(bytes);
}

void gb_set_counter(gb_state *st, const char *name, double value, unsigned flags) noexcept
{
    state_of(st).counters[name] = benchmark::Counter(value, counter_flags_of(flags));
}

void gb_set_label(gb_state *st, const char *label) noexcept
{
    state_of(st).SetLabel(label);
}

void gb_skip_with_error(gb_state *st, const char *msg) noexcept
{
    state_of(st).SkipWithError(msg);
}

int gb_error_occurred(gb_state *st) noexcept
{
    return state_of(st).error_occurred() ? 1 : 0;
}

void gb_pause_timing(gb_state *st) noexcept
{
    state_of(st).PauseTiming();
}

void gb_resume_timing(gb_state *st) noexcept
{
    state_of(st).ResumeTiming();
}

} // extern "C"
