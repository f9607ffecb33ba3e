# A real program under each allocator: CPython builds a dict of N distinct
# strings (keys and values are fresh str objects, so nearly every step
# allocates), then drops it. CPython serves objects up to 512 B from its own
# pools and asks malloc for arenas and everything larger (the dict's table,
# which doubles as it grows), so the allocator sees few large requests and
# many frees of big blocks. programs/serve.py preloads the allocator's
# library (and the evidence probe) into the interpreter and reads the
# figures from its rusage.
workload  prog-python-dict
describe  "python3 builds a dict of N string pairs, then drops it"
param     N=2000000 quick=300000 min=1 max=100000000 help="entries in the dict"

program   /usr/bin/python3 {dir}/programs/serve.py --package python3 -- /usr/bin/python3 -c "import sys; n = int(sys.argv[1]); d = {'key%d' % i: 'value-' * (1 + i % 7) + str(i) for i in range(n)}; assert len(d) == n; del d" $N
