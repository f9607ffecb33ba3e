# expect: 5: unknown operation 'phsae' (did you mean 'phase'?)
workload bad-phase-word
phase p
  alloc 10 size=fixed(16)
phsae q
  free 100%
