# A real program under each allocator: GNU sort reads N random lines and
# sorts them in memory. sort takes one large buffer for its input and many
# small ones for its line table and merge, so the figures show what the
# allocator does with a few big requests and page faults. The input is made
# once per run by the setup line (python3, not timed, nothing preloaded) in
# the run's own temporary folder; LC_ALL=C makes the comparison bytewise, so
# the locale does not change the work. --parallel=1 keeps sort to one thread.
workload  prog-sort
describe  "GNU sort of N random text lines (input prepared untimed)"
param     N=2000000 quick=350000 min=1 max=100000000 help="lines to sort"

setup     /usr/bin/python3 -c "import random, sys; r = random.Random(1); open(sys.argv[2], 'w').write(''.join('%016x %d\n' % (r.getrandbits(64), i) for i in range(int(sys.argv[1]))))" $N {tmp}/lines.txt
program   /usr/bin/python3 {dir}/programs/serve.py --package coreutils -- /usr/bin/env LC_ALL=C sort --parallel=1 -o {tmp}/sorted.txt {tmp}/lines.txt
