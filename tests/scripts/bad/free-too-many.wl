# expect: 5: free: asks for 20 blocks but only 10 are live
workload bad-free-count
phase one
  alloc 10 size=fixed(16)
  free 20
