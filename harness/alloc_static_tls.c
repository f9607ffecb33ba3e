/* Re-executing the runner so that a library built with initial-exec TLS can
 * be dlopen()ed.
 *
 * Debian's libjemalloc.so.2 is linked with the STATIC_TLS flag: its
 * thread-local variables must sit in the static TLS block that glibc sizes
 * when the process starts. glibc keeps only a small surplus for libraries
 * loaded later (glibc.rtld.optional_static_tls, 512 bytes by default), and
 * jemalloc 5.3 needs about 2.6 KiB, so dlopen fails with "cannot allocate
 * memory in static TLS block". The tunable is read once at start-up, so the
 * only way to raise it is to start again: set it and exec ourselves. */
#include "alloc_families.h"

#include <stdio.h>
#include <stdlib.h>

/* Surplus to ask for: jemalloc 5.3's TLS segment is 2632 bytes; mimalloc
 * (9) and tcmalloc (88) may be loaded beside it by --list. 8 KiB leaves
 * room for other builds; it is address space inside each thread's stack
 * mapping, not resident memory. */
#define STATIC_TLS_SURPLUS_BYTES "8192"
#define STATIC_TLS_TUNABLE "glibc.rtld.optional_static_tls"
/* Set in the environment of the re-executed process so it never loops. */
#define REEXEC_MARK "HEAPLAB_STATIC_TLS_REEXEC"

enum { TUNABLES_MAX = 4096 };

int static_tls_reexec_done(void)
{
    return getenv(REEXEC_MARK) != NULL;
}

void static_tls_reexec(char **argv, char *err, size_t errlen)
{
    if (static_tls_reexec_done()) {
        snprintf(err, errlen,
                 "re-executed with " STATIC_TLS_TUNABLE "=" STATIC_TLS_SURPLUS_BYTES
                 " but the library still does not fit in static TLS");
        return;
    }
    char tunables[TUNABLES_MAX];
    const char *old = getenv("GLIBC_TUNABLES");
    /* keep the user's own tunables; ours comes last so it wins */
    int n = (old && old[0])
                ? snprintf(tunables, sizeof tunables, "%s:%s=%s", old, STATIC_TLS_TUNABLE,
                           STATIC_TLS_SURPLUS_BYTES)
                : snprintf(tunables, sizeof tunables, "%s=%s", STATIC_TLS_TUNABLE,
                           STATIC_TLS_SURPLUS_BYTES);
    if (n < 0 || (size_t)n >= sizeof tunables) {
        snprintf(err, errlen, "cannot re-execute: GLIBC_TUNABLES is too long");
        return;
    }
    reexec_with("GLIBC_TUNABLES", tunables, REEXEC_MARK, argv, err, errlen);
}
