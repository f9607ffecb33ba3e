# expect: 3: a program script has no phases (phase 'p' at line 4)
workload prog-phase
program /bin/true
phase p
  alloc 10 size=fixed(16)
