# expect: 4: size '64' needs a distribution, e.g. fixed(64)
workload bad-bare-size
phase p
  alloc 10 size=64
