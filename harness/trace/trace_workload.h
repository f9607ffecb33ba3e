/* A trace as a workload: `--workload trace:FILE` (catalog.c), or a script's
 * `trace FILE` line (harness/script/script_trace.c). */
#ifndef HEAPLAB_TRACE_WORKLOAD_H
#define HEAPLAB_TRACE_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "workload.h"

#define TRACE_WORKLOAD_PREFIX "trace:"
#define TRACE_SUFFIX ".hltrace"

/* The replay's parameters: `touch` (what is written into each new block,
 * as for every workload; default pages), `samples` (memory-over-time
 * points at equal fractions), `turns` (the threads take turns in the
 * recorded order instead of running freely between waits) and, unless the
 * phases are named, `phases` (phases at equal fractions of the recorded
 * order). */
enum { TRACE_DEFAULT_PHASES = 4, TRACE_MAX_PHASES = 100, TRACE_DEFAULT_SAMPLES = 20,
       TRACE_MAX_SAMPLES = 1000 };

/* The parameters every replay declares (the trace: workload and trace
 * scripts alike), with their defaults. */
#define TRACE_SAMPLES_PARAM(def) \
    {"samples", (def), 0, 0, TRACE_MAX_SAMPLES, "memory-over-time points", NULL}
#define TRACE_PHASES_PARAM(def) \
    {"phases", (def), 0, 1, TRACE_MAX_PHASES, "phases at equal fractions of the recorded order", NULL}
#define TRACE_TURNS_PARAM                                                                  \
    {"turns", 0, 0, 0, 1, "1: the threads take turns, call by call in the recorded order "  \
     "(always under valgrind)", NULL}

/* Loads the trace at `path` (checked in full: nothing runs on a bad one)
 * and fills *out with a workload that replays it. Returns 0, or -1 with
 * one line naming the file and the problem. Without zstd at build time it
 * always fails, saying which package to install. */
int trace_workload_open(const char *path, workload *out, char *err, size_t errlen);

/* The same load for a script's `trace` line: the trace, checked in full,
 * or NULL with one line in err. trace_workload_ops is its number of calls
 * (the recorded order's length); trace_workload_close releases it. */
struct trace;
struct trace *trace_workload_load(const char *path, char *err, size_t errlen);
uint64_t trace_workload_ops(const struct trace *t);
void trace_workload_close(struct trace *t);

/* Replays t as the running workload. The phases end at ends[0..nphases)
 * (positions in the recorded order, increasing, the last one the trace's
 * length) and are called names[i]; ends NULL cuts at equal fractions,
 * names NULL calls them part1, part2, .... Reads the `touch` and `samples`
 * parameters. Returns 0, or -1 after wl_fail. */
int trace_workload_replay(wl_ctx *ctx, struct trace *t, int nphases, const uint64_t *ends,
                          const char *const *names);

#endif
