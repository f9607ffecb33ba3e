# expect: 3: unterminated "-quoted string
workload unterminated
describe "never closed
phase p
  alloc 10 size=fixed(16)
