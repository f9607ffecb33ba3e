# expect: 6: 120% is over 100%
workload bad-percent
phase one
  alloc 10 size=fixed(16)
phase two
  free 120%
