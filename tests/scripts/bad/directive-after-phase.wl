# expect: 5: 'threads' must come before the first phase (line 3)
workload late
phase p
  alloc 10 size=fixed(16)
threads 2
