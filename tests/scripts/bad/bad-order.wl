# expect: 5: unknown free order 'fofi'
workload bad-order
phase one
  alloc 10 size=fixed(16)
  free 50% order=fofi
