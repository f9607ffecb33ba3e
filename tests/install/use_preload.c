/* Plain malloc and free; the heaplab that serves them (preloaded, or linked
 * as heaplab::preload) is asked for its statistics through dlsym, so the
 * program itself knows nothing of heaplab. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <heaplab.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    void (*stats)(hl_stats_t *) = (void (*)(hl_stats_t *))dlsym(RTLD_DEFAULT, "hl_stats");
    if (stats == NULL) {
        fprintf(stderr, "hl_stats not found: malloc is not heaplab's\n");
        return 1;
    }
    hl_stats_t before, after;
    stats(&before);
    void *p = malloc(1000);
    stats(&after);
    free(p);
    if (after.alloc_count <= before.alloc_count)
        return 2;
    printf("malloc served by heaplab\n");
    return 0;
}
