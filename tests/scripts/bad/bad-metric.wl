# expect: 3: metric ns_per_op is measured in 'ns', not 'ms'
workload bad-metric
metric ns_per_op ms lower
phase p
  alloc 10 size=fixed(16)
