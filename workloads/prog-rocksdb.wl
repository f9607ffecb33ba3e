# rocksdb's db_bench fills a database in the temporary folder with N random
# keys, then reads N random keys; the figure is readrandom's time per
# operation as db_bench prints it.
workload  prog-rocksdb
describe  "rocksdb db_bench: fillrandom then readrandom of N keys in a temporary folder"
param     N=1000000 quick=50000 min=1 max=100000000 help="keys"

program   /usr/bin/python3 {dir}/programs/serve.py --package rocksdb-tools --figure "readrandom_us_per_op:us:lower:readrandom" -- db_bench --benchmarks=fillrandom,readrandom --num=$N --db={tmp}/db --threads=1
