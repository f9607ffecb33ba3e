# expect: 3: second 'workload' line (first at line 2)
workload one
workload two
phase p
  alloc 10 size=fixed(16)
