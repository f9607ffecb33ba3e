/* Packing raw recorder output (trace_raw.h) into a trace (trace_format.h). */
#ifndef HEAPLAB_TRACE_PACK_H
#define HEAPLAB_TRACE_PACK_H

#include <stddef.h>

/* Packs the raw files of folder `raw_dir` into the trace `out`. The process
 * with the most events is the trace; the others (forked children, exec'd
 * programs) are listed in the header and dropped. `command` (argc words)
 * is stored in the header. zstd `level`. Returns 0, or -1 with one line. */
int trace_pack(const char *raw_dir, const char *out, int argc, char **command, int level,
               char *err, size_t errlen);

#endif
