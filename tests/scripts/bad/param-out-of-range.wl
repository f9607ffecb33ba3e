# expect: 3: param N: default 5 is outside [10, 100]
workload bad-param-range
param N=5 min=10 max=100
phase p
  alloc $N size=fixed(16)
