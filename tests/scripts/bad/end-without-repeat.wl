# expect: 5: 'end' without a 'repeat'
workload bad-end
phase p
  alloc 10 size=fixed(16)
  end
