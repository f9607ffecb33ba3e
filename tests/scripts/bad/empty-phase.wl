# expect: 3: phase 'one' has no operations
workload bad-empty
phase one
phase two
  alloc 10 size=fixed(16)
