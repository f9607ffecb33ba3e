# Cross-thread frees: every thread builds a set of small and medium blocks,
# then hands it to the next thread, which frees it. Allocators whose remote
# free takes a global lock, or whose freed memory stays in the wrong thread's
# cache, show it here. Threads default to 2 (--threads N changes it).
workload  handoff-ring
describe  "each thread allocates a mixed set, the next thread frees it; repeated"
threads   2
seed      7
param     N=200000 quick=20000 min=1 max=100000000 help="blocks per thread per round"

phase built
  alloc   $N   size=mix(6:pow2(16,256), 3:uniform(257,4K), 1:loguniform(4K,64K))
phase handed
  handoff
phase rebuilt
  alloc   $N   size=mix(6:pow2(16,256), 3:uniform(257,4K), 1:loguniform(4K,64K))
phase handed-again
  handoff
  flush
