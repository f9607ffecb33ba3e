# expect: 5: churn frees one block per step: order=random, fifo or lifo
workload bad-churn-order
phase p
  alloc 10 size=fixed(16)
  churn 10 size=fixed(16) order=alternate
