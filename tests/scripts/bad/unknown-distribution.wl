# expect: 5: unknown size distribution 'unifrom' (did you mean 'uniform'?)
workload bad-dist
phase one
  alloc 10 size=fixed(16)
  alloc 10 size=unifrom(16,2K)
