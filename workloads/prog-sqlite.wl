# sqlite3 runs a generated SQL script in memory: N inserts in one
# transaction, an index, a join with GROUP BY and string functions, then
# half the rows deleted and the database vacuumed.
workload  prog-sqlite
describe  "sqlite3 on a generated SQL script of N inserts, an index, joins and deletes"
param     N=500000 quick=50000 min=1 max=100000000 help="rows inserted"

setup     /usr/bin/python3 {dir}/programs/make_input.py sql $N {tmp}/work.sql
program   /usr/bin/python3 {dir}/programs/serve.py --package sqlite3 -- sqlite3 :memory: ".read {tmp}/work.sql"
