# expect: 4: free: nothing is live here (allocate first)
workload bad-free
phase one
  free 50%
