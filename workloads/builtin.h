/* The built-in workloads, one `const workload` each, defined in the
 * workload source files and registered in builtin.c. */
#ifndef HEAPLAB_WORKLOADS_BUILTIN_H
#define HEAPLAB_WORKLOADS_BUILTIN_H

#include "workload.h"

/* tmalloc README (seed 000): tmalloc_st_small.c, tmalloc_st_mixed.c,
 * tmalloc_st_large.c, tmalloc_mt.c, tmalloc_xthread.c */
extern const workload wl_tmalloc_st_64;
extern const workload wl_tmalloc_st_reverse;
extern const workload wl_tmalloc_st_random;
extern const workload wl_tmalloc_st_mixed;
extern const workload wl_tmalloc_st_medium;
extern const workload wl_tmalloc_st_huge;
extern const workload wl_tmalloc_mt;
extern const workload wl_tmalloc_xthread;

/* memalloc README, C11 (seed 001): memalloc_fixed.c, memalloc_mixed.c,
 * memalloc_latency.c */
extern const workload wl_memalloc_fixed;
extern const workload wl_memalloc_mixed;
extern const workload wl_memalloc_latency;

/* MemAlloc README, C++ (seed 003): memallocpp_pairs.c, memallocpp_locality.c */
extern const workload wl_memallocpp_st;
extern const workload wl_memallocpp_mt;
extern const workload wl_memallocpp_locality;

/* kevy-alloc README (seed 004): kevy.c */
extern const workload wl_kevy_pair_64;
extern const workload wl_kevy_pair_400;
extern const workload wl_kevy_pair_4096;
extern const workload wl_kevy_churn;

/* The classic multi-threaded benchmarks, written from their papers and
 * documentation: larson.c, xmalloc.c, hoard.c, mstress.c, rptest.c */
extern const workload wl_larson;
extern const workload wl_xmalloc;
extern const workload wl_threadtest;
extern const workload wl_cache_scratch;
extern const workload wl_cache_thrash;
extern const workload wl_mstress;
extern const workload wl_rptest;

#endif
