# expect: 4: unbalanced '('
workload unbalanced
phase p
  alloc 10 size=uniform(16,2K
