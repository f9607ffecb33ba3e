# python3 runs an allocation-heavy script of the project's own: N objects
# churned through a bounded live set, string building, dict growth, a sort.
workload  prog-python-churn
describe  "python3: object churn, string building, dict growth and a sort over N items"
param     N=2000000 quick=100000 min=1 max=100000000 help="items"

program   /usr/bin/python3 {dir}/programs/serve.py --package python3 -- /usr/bin/python3 {dir}/programs/churn.py $N
