/* Re-executing the runner with an allocator library in LD_PRELOAD.
 *
 * Debian's libmimalloc.so.2 is much slower when dlopen()ed than when it is
 * loaded at start-up: measured with callgrind on tmalloc-st-64, its free
 * costs 88 instructions per call dlopen()ed and 26 preloaded, for the same
 * code reached through the same table (malloc: 17 either way), and the pair
 * takes ~10.4 ns against ~6.2 ns. Measuring it dlopen()ed would compare
 * heaplab against a handicapped mimalloc, so the runner loads it the way it
 * is deployed: preloaded, as the process's allocator. The table still calls
 * its mi_ functions, so the workload reaches it exactly as before. */
#include "alloc_families.h"

#include <stdio.h>
#include <stdlib.h>

/* Set in the environment of the re-executed process so it never loops. */
#define PRELOAD_MARK "HEAPLAB_PRELOAD_REEXEC"

enum { PRELOAD_VALUE_MAX = 4096 };

void preload_reexec(const char *path, char **argv, char *err, size_t errlen)
{
    if (getenv(PRELOAD_MARK)) {
        snprintf(err, errlen, "re-executed with LD_PRELOAD=%s but it is not loaded", path);
        return;
    }
    char value[PRELOAD_VALUE_MAX];
    const char *old = getenv("LD_PRELOAD");
    int n = (old && old[0]) ? snprintf(value, sizeof value, "%s:%s", path, old)
                            : snprintf(value, sizeof value, "%s", path);
    if (n < 0 || (size_t)n >= sizeof value) {
        snprintf(err, errlen, "cannot re-execute: LD_PRELOAD is too long");
        return;
    }
    reexec_with("LD_PRELOAD", value, PRELOAD_MARK, argv, err, errlen);
}
