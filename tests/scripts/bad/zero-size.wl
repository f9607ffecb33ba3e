# expect: 4: fixed(): size 0 is below 1 byte
workload bad-zero
phase one
  alloc 10 size=fixed(0)
