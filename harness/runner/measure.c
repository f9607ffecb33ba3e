/* Process measurements: see measure.h. */
#include "measure.h"
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* smaps_rollup and status are each well under 2 KiB on Linux 6.x. */
enum { PROC_FILE_MAX = 8192, BYTES_PER_KIB = 1024 };
enum { NS_PER_SEC = 1000000000, NS_PER_USEC = 1000 };

uint64_t wl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Reads a whole (small) /proc file into buf, NUL-terminated. */
static int read_proc_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t used = 0;
    while (used + 1 < cap) {
        ssize_t got = read(fd, buf + used, cap - 1 - used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        used += (size_t)got;
    }
    close(fd);
    buf[used] = '\0';
    return used > 0 ? 0 : -1;
}

/* The value of a "Key:   1234 kB" line, in bytes; -1 when absent. */
static long long kib_field(const char *text, const char *key)
{
    size_t key_len = strlen(key);
    for (const char *line = text; line && *line;) {
        if (strncmp(line, key, key_len) == 0) {
            char *end;
            long long kib = strtoll(line + key_len, &end, 10);
            return end == line + key_len ? -1 : kib * BYTES_PER_KIB;
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return -1;
}

static long long proc_kib_field(const char *path, const char *key)
{
    char buf[PROC_FILE_MAX];
    if (read_proc_file(path, buf, sizeof buf) != 0)
        return -1;
    return kib_field(buf, key);
}

long long measure_rss_statm_bytes(void)
{
    char buf[PROC_FILE_MAX];
    if (read_proc_file("/proc/self/statm", buf, sizeof buf) != 0)
        return -1;
    /* "size resident shared text lib data dt", in pages */
    char *end;
    strtoll(buf, &end, 10);
    char *at = end;
    long long pages = strtoll(at, &end, 10);
    if (end == at)
        return -1;
    return pages * sysconf(_SC_PAGESIZE);
}

long long measure_rss_bytes(void)
{
    return proc_kib_field("/proc/self/smaps_rollup", "Rss:");
}

long long measure_peak_rss_bytes(void)
{
    return proc_kib_field("/proc/self/status", "VmHWM:");
}

static long long timeval_ns(struct timeval tv)
{
    return (long long)tv.tv_sec * NS_PER_SEC + (long long)tv.tv_usec * NS_PER_USEC;
}

void measure_usage_now(measure_usage *out)
{
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    getrusage(RUSAGE_SELF, &ru);
    out->minor_faults = ru.ru_minflt;
    out->major_faults = ru.ru_majflt;
    out->user_ns = timeval_ns(ru.ru_utime);
    out->sys_ns = timeval_ns(ru.ru_stime);
}

measure_usage measure_usage_diff(const measure_usage *after, const measure_usage *before)
{
    measure_usage d = {
        .minor_faults = after->minor_faults - before->minor_faults,
        .major_faults = after->major_faults - before->major_faults,
        .user_ns = after->user_ns - before->user_ns,
        .sys_ns = after->sys_ns - before->sys_ns,
    };
    return d;
}
