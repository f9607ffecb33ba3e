# expect: 4: unknown operation 'alocc' (did you mean 'alloc'?)
workload bad-op
phase one
  alocc 10 size=fixed(16)
