# expect: 4: bad number '30x0'
workload bad-number
phase one
  alloc 30x0 size=fixed(16)
