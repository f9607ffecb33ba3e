# Memory over time: a live set that grows, shrinks, churns with a shifting
# size mix and is trimmed, sampled every 5,000 operations. The samples are the
# runner's "samples" series (RSS against live bytes); the memory charts draw
# them, so the gap between what is live and what is resident can be watched
# as it opens and closes.
workload  memory-over-time
describe  "grow, shrink, churn to other sizes, trim; RSS sampled every 5,000 ops"
seed      11
param     N=200000 quick=20000 min=1 max=100000000 help="blocks in the grown set"
param     EVERY=5000 quick=500 min=1 max=100000000 help="operations between two samples"

phase grown
  sample  every=$EVERY
  alloc   $N      size=choice(24,48,96,200,640)  touch=first
phase halved
  free    50%     order=lifo
phase churned
  churn   $N      size=uniform(1K,8K)  order=fifo  touch=pages
phase resized
  realloc 25%     size=loguniform(16,512)
phase trimmed
  free    75%     order=random
  trim
