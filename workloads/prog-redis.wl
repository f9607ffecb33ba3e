# redis-server under redis-benchmark. The served process is the server: it
# alone runs with the allocator preloaded, and its figures (time from start
# to stop, rusage, RSS samples) are the cell's; the client runs on the
# system allocator so that only the server differs. The server listens on a
# unix socket in the run's temporary folder, never on a TCP port, and is
# stopped by the helper whatever the client does. Debian's redis-server
# links jemalloc, so its system column is jemalloc (the evidence says so).
workload  prog-redis
describe  "redis-server (served) under redis-benchmark: N requests each of SET, GET, LPUSH, LRANGE_100"
param     N=100000 quick=5000 min=1 max=10000000 help="requests per test"

program   /usr/bin/python3 {dir}/programs/redis.py $N
