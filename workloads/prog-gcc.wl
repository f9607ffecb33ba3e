# gcc compiles a generated translation unit of N functions at -O2. The
# served processes are gcc and what it runs (cc1, as); rusage covers them
# all, and each must show the allocator.
workload  prog-gcc
describe  "gcc -O2 -c of a generated translation unit of N functions"
param     N=300 quick=30 min=1 max=100000 help="functions"

setup     /usr/bin/python3 {dir}/programs/make_input.py c $N {tmp}/unit.c
program   /usr/bin/python3 {dir}/programs/serve.py --package gcc -- gcc -O2 -c {tmp}/unit.c -o {tmp}/unit.o
