/* Built instead of the replay when CMake found no zstd (trace_workload.h). */
#include "trace_workload.h"

#include <stdio.h>

static void not_built(const char *path, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: trace support was not built (apt install libzstd-dev, then "
             "rebuild)", path);
}

int trace_workload_open(const char *path, workload *out, char *err, size_t errlen)
{
    (void)out;
    not_built(path, err, errlen);
    return -1;
}

struct trace *trace_workload_load(const char *path, char *err, size_t errlen)
{
    not_built(path, err, errlen);
    return NULL;
}

/* Never reached: no trace is ever loaded without zstd. */
uint64_t trace_workload_ops(const struct trace *t)
{
    (void)t;
    return 0;
}

void trace_workload_close(struct trace *t) { (void)t; }

int trace_workload_replay(wl_ctx *ctx, struct trace *t, int nphases, const uint64_t *ends,
                          const char *const *names)
{
    (void)t, (void)nphases, (void)ends, (void)names;
    wl_fail(ctx, "trace support was not built (apt install libzstd-dev, then rebuild)");
    return -1;
}
