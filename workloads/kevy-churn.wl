# The churn row published in the kevy-alloc README (seed 004_ef698b1eee882372):
# "churn 4096 x 400 B, interleaved free", reported in ns per operation.
# A set of 4,096 blocks of 400 B is built; each round frees every other live
# block (oldest first, so freed and live blocks interleave in memory) and
# allocates as many new ones. An operation is one free or one allocation.
# Like the built-in, the blocks are not written (touch=none): the row times
# the allocator, not the memory.
#
# The built-in workload `kevy-churn` (workloads/kevy.c) is the compiled form
# of the same row; this script is its counterpart in the script language, and
# kevy-churn-trim.wl adds the README's second row on top of it.
workload  kevy-churn-script
describe  "4,096 x 400 B; each round frees every other block and refills (kevy churn, as a script)"
seed      4096
param     ROUNDS=20000 quick=600 min=1 max=100000000 help="free-half-and-refill rounds"

phase built
  alloc   4096  size=fixed(400)  touch=none
phase churn
  repeat  $ROUNDS
    free  2048  order=alternate
    alloc 2048  size=fixed(400)  touch=none
  end
phase drained
  free    100%  order=fifo
