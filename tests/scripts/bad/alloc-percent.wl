# expect: 4: alloc takes a count, not a percentage
workload bad-alloc-percent
phase one
  alloc 10% size=fixed(16)
