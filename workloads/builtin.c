/* The table of built-in workloads the runner lists and runs, in the order
 * they are listed: grouped by the seed whose benchmark each reproduces,
 * then the classic multi-threaded benchmarks. */
#include "builtin.h"

const workload *const wl_builtins[] = {
    &wl_tmalloc_st_64,
    &wl_tmalloc_st_reverse,
    &wl_tmalloc_st_random,
    &wl_tmalloc_st_mixed,
    &wl_tmalloc_st_medium,
    &wl_tmalloc_st_huge,
    &wl_tmalloc_mt,
    &wl_tmalloc_xthread,
    &wl_memalloc_fixed,
    &wl_memalloc_mixed,
    &wl_memalloc_latency,
    &wl_memallocpp_st,
    &wl_memallocpp_mt,
    &wl_memallocpp_locality,
    &wl_kevy_pair_64,
    &wl_kevy_pair_400,
    &wl_kevy_pair_4096,
    &wl_kevy_churn,
    &wl_larson,
    &wl_xmalloc,
    &wl_threadtest,
    &wl_cache_scratch,
    &wl_cache_thrash,
    &wl_mstress,
    &wl_rptest,
};

const int wl_builtin_count = (int)(sizeof wl_builtins / sizeof wl_builtins[0]);
