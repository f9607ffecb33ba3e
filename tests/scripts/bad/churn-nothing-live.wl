# expect: 4: churn: nothing is live to churn (allocate first, or give live=L)
workload bad-churn
phase p
  churn 100 size=fixed(16)
