/* Mapping of the live-block rings (see script_live.h). */
#include <sys/mman.h>

#include "script_live.h"

int live_map(live_set *ls, long long cap)
{
    ls->head = ls->count = 0;
    ls->bytes = 0;
    /* A ring of one keeps the index arithmetic free of a zero-size case. */
    ls->cap = cap > 0 ? cap : 1;
    void *m = mmap(NULL, (size_t)ls->cap * sizeof(live_block), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (m == MAP_FAILED) {
        ls->ring = NULL;
        return -1;
    }
    ls->ring = m;
    return 0;
}

void live_unmap(live_set *ls)
{
    if (ls->ring)
        munmap(ls->ring, (size_t)ls->cap * sizeof(live_block));
    ls->ring = NULL;
}
