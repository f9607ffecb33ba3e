# z3 solves a generated SMT-LIB problem: N bounded integer variables under
# 2N random linear constraints, checked satisfiable, then with one more
# constraint that makes it unsatisfiable.
workload  prog-z3
describe  "z3 on a generated QF_LIA problem of N variables and 2N constraints"
param     N=3000 quick=500 min=2 max=1000000 help="integer variables"

setup     /usr/bin/python3 {dir}/programs/make_input.py smt $N {tmp}/problem.smt2
program   /usr/bin/python3 {dir}/programs/serve.py --package z3 -- z3 {tmp}/problem.smt2
