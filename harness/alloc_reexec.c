/* Re-executing the runner with one more environment variable: how the
 * runner loads a library the way it must be loaded (alloc_static_tls.c,
 * alloc_preload_reexec.c). */
#include "alloc_families.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

void reexec_with(const char *var, const char *value, const char *mark, char **argv,
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
