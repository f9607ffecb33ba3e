# expect: 5: repeat has no 'end'
workload bad-repeat
phase p
  alloc 10 size=fixed(16)
  repeat 3
    free 1
phase q
  free 100%
