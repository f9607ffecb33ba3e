# expect: 3: no phases
workload nothing
describe "only a header"
