# expect: 4: alloc: align=48 is not a power of two
workload bad-align
phase one
  alloc 10 size=fixed(16) align=48
