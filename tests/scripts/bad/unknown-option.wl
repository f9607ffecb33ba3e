# expect: 4: alloc: unknown option 'sise' (did you mean 'size'?)
workload bad-option
phase one
  alloc 10 sise=fixed(16)
