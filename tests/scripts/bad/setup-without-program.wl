# expect: 3: 'setup' needs a 'program' line
workload setup-alone
setup /bin/true
phase p
  alloc 10 size=fixed(16)
