# expect: 6: realloc: nothing is live here (allocate first)
workload bad-realloc
phase one
  alloc 10 size=fixed(16)
  free 100%
  realloc 5 size=fixed(32)
