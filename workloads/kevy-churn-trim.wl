# The kevy-alloc README's second churn row (seed 004_ef698b1eee882372): "the
# same, plus returning the pages". The rounds of kevy-churn.wl, with the
# allocator asked after every free to give unused memory back to the system
# (its trim hook: malloc_trim for glibc, mi_collect for mimalloc, a purge for
# jemalloc, heaplab's own). The trim's time is part of ns_per_op, and it is
# also reported alone as trim_ns. An allocator without a trim hook runs the
# churn alone and the run notes trim as n/a (no trim_ns figure).
workload  kevy-churn-trim
describe  "kevy churn of 4,096 x 400 B, plus a trim after every round's frees"
seed      4096
param     ROUNDS=20000 quick=600 min=1 max=100000000 help="free-half, trim, refill rounds"

phase built
  alloc   4096  size=fixed(400)  touch=none
phase churn
  repeat  $ROUNDS
    free  2048  order=alternate
    trim
    alloc 2048  size=fixed(400)  touch=none
  end
phase drained
  free    100%  order=fifo
  trim
