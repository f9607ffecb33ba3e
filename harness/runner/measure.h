/* What the runner measures about its own process: clock, resident memory,
 * faults and CPU time. Every reader here uses open/read on a stack buffer
 * or a system call, never malloc: under "system" the measured allocator is
 * glibc's malloc, and the runner must not disturb it while it measures. */
#ifndef HEAPLAB_MEASURE_H
#define HEAPLAB_MEASURE_H

#include <stdint.h>

/* Resident set size in bytes: "Rss:" of /proc/self/smaps_rollup (exact,
 * unlike statm's batched counters). -1 when it cannot be read. */
long long measure_rss_bytes(void);

/* Resident set size in bytes from /proc/self/statm: one short line, so
 * cheap enough to read every few thousand operations (the kernel updates
 * it in per-thread batches, so it may lag by up to 64 pages a thread).
 * What samples use; phases use the exact figure. -1 when unreadable. */
long long measure_rss_statm_bytes(void);

/* Highest resident set size so far ("VmHWM:" of /proc/self/status), bytes;
 * -1 when it cannot be read. */
long long measure_peak_rss_bytes(void);

typedef struct measure_usage {
    long long minor_faults;
    long long major_faults;
    long long user_ns;
    long long sys_ns;
} measure_usage;

/* getrusage(RUSAGE_SELF): the whole process, every thread, live or joined. */
void measure_usage_now(measure_usage *out);

/* after - before, field by field. */
measure_usage measure_usage_diff(const measure_usage *after, const measure_usage *before);

#endif
