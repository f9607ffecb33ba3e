/* heaplab core tests: what the decay tests read and do between bursts. */
#ifndef HEAPLAB_DECAY_UTIL_H
#define HEAPLAB_DECAY_UTIL_H

#include <stddef.h>

#include "heaplab.h"

/* free small pages and medium blocks still resident */
static inline size_t free_resident(void)
{
    hl_stats_t st;
    hl_stats(&st);
    return st.page_free + st.medium_free;
}

/* slow-path events, on which the decay runs: medium blocks always take the
 * slow path */
static inline void slow_events(int n)
{
    for (int i = 0; i < n; i++)
        hl_free(hl_malloc(40000));
}

#endif
