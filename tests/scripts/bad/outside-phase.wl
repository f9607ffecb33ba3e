# expect: 3: operation 'alloc' outside a phase (start one with 'phase NAME')
workload bad-outside
alloc 10 size=fixed(16)
phase one
  alloc 10 size=fixed(16)
