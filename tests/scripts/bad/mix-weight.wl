# expect: 4: bad mix weight '-1'
workload bad-mix
phase one
  alloc 10 size=mix(3:fixed(16), -1:fixed(32))
