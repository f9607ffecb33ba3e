# expect: 6: free: asks for 4 blocks but only 2 are live
workload bad-repeat-dry
phase p
  alloc 10 size=fixed(16)
  repeat 5
    free 4
  end
