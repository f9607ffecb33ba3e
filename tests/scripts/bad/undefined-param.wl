# expect: 5: undefined parameter $M (declared: $N)
workload bad-param
param N=10
phase one
  alloc $M size=fixed(16)
