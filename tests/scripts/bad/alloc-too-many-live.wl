# expect: 4: more than a script can keep
workload alloc-too-many-live
phase p
  alloc 999999999999 size=fixed(64)
