# The memory table published in the tmalloc README (seed 000_dcfb279b8418dc28):
# 300,000 blocks of 16 B to 32 KB with every byte written, 80 percent freed at
# random, 300,000 more of up to 2 KB, then 90 percent freed at random. The
# README reports the working set above the process's start after each phase;
# the runner records the same figure (ws_above_start_bytes) per phase.
#
# The README does not say how the sizes were drawn. loguniform(16,32K) for the
# first phase and uniform(16,2K) for the refill are this project's choice.
workload  tmalloc-memory
describe  "300k blocks of 16 B-32 KB written, free 80%, 300k of up to 2 KB, free 90% (tmalloc memory table)"
seed      42
param     N=300000 quick=30000 min=1 max=100000000 help="blocks allocated in each of the two allocation phases"

phase built
  alloc   $N    size=loguniform(16,32K)  touch=all
phase freed80
  free    80%   order=random
phase refilled
  alloc   $N    size=uniform(16,2K)      touch=all
phase freed90
  free    90%   order=random
