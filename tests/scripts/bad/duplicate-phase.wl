# expect: 5: duplicate phase 'one' (first at line 3)
workload bad-dup
phase one
  alloc 10 size=fixed(16)
phase one
  free 100%
