# expect: 6: free: asks for 500 blocks but only 100 are live (with the quick sizes)
workload bad-quick
param N=1000 quick=100
phase p
  alloc $N size=fixed(16)
  free 500
