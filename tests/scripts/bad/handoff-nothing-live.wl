# expect: 5: handoff: nothing is live to hand off
workload bad-handoff
threads 2
phase one
  handoff
