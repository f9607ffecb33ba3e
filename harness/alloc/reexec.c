/* Re-executing the runner: how it loads a library the way that library must
 * be loaded. Both reasons set one environment variable, mark the new process
 * so that it never re-executes again, and exec the same program with the
 * same argv.
 *
 * Static TLS (jemalloc). Debian's libjemalloc.so.2 is linked with the
 * STATIC_TLS flag: its thread-local variables must sit in the static TLS
 * block that glibc sizes when the process starts. glibc keeps only a small
 * surplus for libraries loaded later (glibc.rtld.optional_static_tls, 512
 * bytes by default), and jemalloc 5.3 needs about 2.6 KiB, so dlopen fails
 * with "cannot allocate memory in static TLS block". The tunable is read
 * once at start-up, so the only way to raise it is to start again.
 *
 * Preloading (mimalloc). Debian's libmimalloc.so.2 is much slower when
 * dlopen()ed than when it is loaded at start-up: measured with callgrind on
 * tmalloc-st-64, its free costs 88 instructions per call dlopen()ed and 26
 * preloaded, for the same code reached through the same table (malloc: 17
 * either way), and the pair takes ~10.4 ns against ~6.2 ns. Measuring it
 * dlopen()ed would compare heaplab against a handicapped mimalloc, so the
 * runner loads it the way it is deployed: preloaded, as the process's
 * allocator. The table still calls its mi_ functions, so the workload
 * reaches it exactly as before. */
#include "families.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

/* Surplus to ask for: jemalloc 5.3's TLS segment is 2632 bytes; mimalloc
 * (9) and tcmalloc (88) may be loaded beside it by --list. 8 KiB leaves
 * room for other builds; it is address space inside each thread's stack
 * mapping, not resident memory. */
#define STATIC_TLS_SURPLUS_BYTES "8192"
#define STATIC_TLS_TUNABLE "glibc.rtld.optional_static_tls"

/* Set in the environment of the re-executed process so it never loops. */
#define STATIC_TLS_MARK "HEAPLAB_STATIC_TLS_REEXEC"
#define PRELOAD_MARK "HEAPLAB_PRELOAD_REEXEC"

/* Room for the new value of GLIBC_TUNABLES or LD_PRELOAD. */
enum { ENV_VALUE_MAX = 4096 };

/* Re-executes this program with `var` set to `value` and `mark` set to "1"
 * (callers check their mark first, so that it happens once). The program is
 * the path this process was started with (AT_EXECFN), not /proc/self/exe:
 * under valgrind that is valgrind's own tool, so an instruction count
 * (--trace-children=yes) would not follow. Returns only on failure. */
static void reexec_with(const char *var, const char *value, const char *mark, char **argv,
                        char *err, size_t errlen)
{
    if (!argv || !argv[0]) {
        snprintf(err, errlen, "cannot re-execute: argv is not known");
        return;
    }
    if (setenv(var, value, 1) != 0 || setenv(mark, "1", 1) != 0) {
        snprintf(err, errlen, "cannot re-execute: setenv: %s", strerror(errno));
        return;
    }
    const char *execfn = (const char *)getauxval(AT_EXECFN);
    const char *self = execfn && execfn[0] ? execfn : "/proc/self/exe";
    fflush(NULL);
    execv(self, argv);
    snprintf(err, errlen, "cannot re-execute %s: %s", self, strerror(errno));
}

/* `item` joined to the variable's present value with ':', in the order
 * `item_first` says; 0, or -1 when it does not fit. */
static int joined_value(char *out, size_t cap, const char *var, const char *item,
                        int item_first)
{
    const char *old = getenv(var);
    int n;
    if (!old || !old[0])
        n = snprintf(out, cap, "%s", item);
    else if (item_first)
        n = snprintf(out, cap, "%s:%s", item, old);
    else
        n = snprintf(out, cap, "%s:%s", old, item);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

void static_tls_reexec(char **argv, char *err, size_t errlen)
{
    if (getenv(STATIC_TLS_MARK)) {
        snprintf(err, errlen,
                 "re-executed with " STATIC_TLS_TUNABLE "=" STATIC_TLS_SURPLUS_BYTES
                 " but the library still does not fit in static TLS");
        return;
    }
    char tunables[ENV_VALUE_MAX];
    /* keep the user's own tunables; ours comes last so it wins */
    if (joined_value(tunables, sizeof tunables, "GLIBC_TUNABLES",
                     STATIC_TLS_TUNABLE "=" STATIC_TLS_SURPLUS_BYTES, 0) != 0) {
        snprintf(err, errlen, "cannot re-execute: GLIBC_TUNABLES is too long");
        return;
    }
    reexec_with("GLIBC_TUNABLES", tunables, STATIC_TLS_MARK, argv, err, errlen);
}

void preload_reexec(const char *path, char **argv, char *err, size_t errlen)
{
    if (getenv(PRELOAD_MARK)) {
        snprintf(err, errlen, "re-executed with LD_PRELOAD=%s but it is not loaded", path);
        return;
    }
    char value[ENV_VALUE_MAX];
    /* ours first, so it is the process's malloc */
    if (joined_value(value, sizeof value, "LD_PRELOAD", path, 1) != 0) {
        snprintf(err, errlen, "cannot re-execute: LD_PRELOAD is too long");
        return;
    }
    reexec_with("LD_PRELOAD", value, PRELOAD_MARK, argv, err, errlen);
}
