/* Built instead of the replay when CMake found no zstd (trace_workload.h). */
#include "trace_workload.h"

#include <stdio.h>

int trace_workload_open(const char *path, workload *out, char *err, size_t errlen)
{
    (void)out;
    snprintf(err, errlen, "%s: trace support was not built (apt install libzstd-dev, then "
             "rebuild)", path);
    return -1;
}
