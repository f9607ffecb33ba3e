/* A trace as a workload: `--workload trace:FILE` (catalog.c). */
#ifndef HEAPLAB_TRACE_WORKLOAD_H
#define HEAPLAB_TRACE_WORKLOAD_H

#include <stddef.h>

#include "workload.h"

#define TRACE_WORKLOAD_PREFIX "trace:"
#define TRACE_SUFFIX ".hltrace"

/* Loads the trace at `path` (checked in full: nothing runs on a bad one)
 * and fills *out with a workload that replays it. Returns 0, or -1 with
 * one line naming the file and the problem. Without zstd at build time it
 * always fails, saying which package to install. */
int trace_workload_open(const char *path, workload *out, char *err, size_t errlen);

#endif
