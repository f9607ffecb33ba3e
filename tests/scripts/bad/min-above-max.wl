# expect: 4: uniform(): lower bound 2048 is above upper bound 16
workload bad-range
phase one
  alloc 10 size=uniform(2K,16)
