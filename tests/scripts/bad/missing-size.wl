# expect: 4: alloc needs size=
workload bad-missing-size
phase one
  alloc 10
