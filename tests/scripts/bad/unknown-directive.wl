# expect: 3: unknown directive 'thraeds' (did you mean 'threads'?)
workload bad-directive
thraeds 2
phase one
  alloc 10 size=fixed(16)
