# expect: 1: missing 'workload NAME' line
describe "no name"
phase one
  alloc 10 size=fixed(16)
