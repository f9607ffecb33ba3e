/* Workload scripts (workloads/NAME.wl): parsed and interpreted by the runner.
 * Grammar: docs/workloads.md. */
#ifndef HEAPLAB_SCRIPT_H
#define HEAPLAB_SCRIPT_H

#include <stddef.h>

#include "workload.h"

/* Parses the script at `path` completely, before anything runs. On success
 * returns 0 and fills *out (name, group "script" or "program", describe,
 * params, run, source = path, data = the parsed script). On failure returns
 * -1 and writes "PATH:LINE: what is wrong" (one line, no newline) into err. */
int script_load(const char *path, workload *out, char *err, size_t errlen);

/* Frees what script_load allocated (with the system allocator, never ctx->a). */
void script_free(workload *w);

#endif
