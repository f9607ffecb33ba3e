# expect: 4: bad number '2Q'
workload bad-size-number
phase one
  alloc 10 size=uniform(16,2Q)
