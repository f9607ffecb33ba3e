# ruby runs an allocation-heavy script of the project's own: N structs
# churned through a bounded live set, string building, a hash of N/4 lines'
# words.
workload  prog-ruby
describe  "ruby: object churn, string building and hash growth over N items"
param     N=2000000 quick=100000 min=1 max=100000000 help="items"

program   /usr/bin/python3 {dir}/programs/serve.py --package ruby -- ruby {dir}/programs/churn.rb $N
