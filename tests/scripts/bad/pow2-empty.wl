# expect: 4: pow2(33,63) contains no power of two
workload bad-pow2
phase one
  alloc 10 size=pow2(33,63)
