#!/bin/sh
# heaplab core test: python3 on libheaplab-preload.so under valgrind memcheck,
# with heaplab really serving its allocations.
#
# Valgrind replaces every exported malloc it finds with memcheck's own, in
# any shared library: run plainly (or with --soname-synonyms=somalloc=*heaplab*),
# the program gets memcheck's allocator and heaplab never runs (its own count
# of allocations is then 0; checked by hand with this script's program).
# --soname-synonyms=somalloc=NONE limits the replacement to the main
# executable and libraries without a soname; the preload library has one,
# so heaplab's functions stay. The program asks heaplab itself, through
# ctypes, how many allocations it served. PYTHONMALLOC=malloc sends every
# Python object to malloc (not only those pymalloc does not serve), so all
# of the program's allocations run heaplab's code under memcheck.
#
# Usage: memcheck_python.sh VALGRIND LIBHEAPLAB_PRELOAD HEAPLAB_H
set -u
VALGRIND=${1:?usage: memcheck_python.sh VALGRIND LIB HEAPLAB_H}
LIB=${2:?usage: memcheck_python.sh VALGRIND LIB HEAPLAB_H}
HEADER=${3:?usage: memcheck_python.sh VALGRIND LIB HEAPLAB_H}
for f in "$VALGRIND" "$LIB" "$HEADER" /usr/bin/python3; do
    [ -e "$f" ] || { echo "memcheck_python.sh: no such file: $f"; exit 2; }
done

# struct hl_stats is one size_t per HL_STATS_FIELDS entry, in header order
fields=$(sed -n 's/^[[:space:]]*X(\([a-z_]*\),.*/\1/p' "$HEADER")
field_count=$(printf '%s\n' "$fields" | wc -l)
alloc_index=$(printf '%s\n' "$fields" | grep -n -x alloc_count | cut -d: -f1)
[ -n "$alloc_index" ] || { echo "memcheck_python.sh: no alloc_count field in $HEADER"; exit 2; }
alloc_index=$((alloc_index - 1))

# allocates on every path (small objects, medium and large buffers, threads),
# then reads heaplab's statistics and its own memory map
PROGRAM='
import ctypes, sys, threading
field_count, alloc_index = int(sys.argv[1]), int(sys.argv[2])
words = {str(i) * (i % 30): [i] * (i % 7) for i in range(20000)}
buffers = [bytearray(size) for size in (100000, 600000, 3 << 20, 9 << 20)]
def work(k):
    words["t%d" % k] = b"x" * (50000 + k)
threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
[t.start() for t in threads]
[t.join() for t in threads]
buffers[2][-1] = 7
del buffers
stats = (ctypes.c_size_t * field_count)()
ctypes.CDLL(None).hl_stats(stats)
served = stats[alloc_index]
mapped = "libheaplab-preload" in open("/proc/self/maps").read()
print("allocations served by heaplab:", served, "; preload library mapped:", mapped)
sys.exit(0 if served > 0 and mapped else 1)
'

failures=0
out=$(LD_PRELOAD="$LIB" PYTHONMALLOC=malloc "$VALGRIND" -q --error-exitcode=9 --soname-synonyms=somalloc=NONE \
    /usr/bin/python3 -c "$PROGRAM" "$field_count" "$alloc_index" 2>&1)
rc=$?
printf '%s\n' "$out"
served=$(printf '%s\n' "$out" | sed -n 's/^allocations served by heaplab: \([0-9]*\) .*/\1/p')
if [ -n "$served" ] && [ "$served" -gt 0 ]; then
    echo "ok   python3 under memcheck with --soname-synonyms=somalloc=NONE is served by heaplab ($served allocations)"
else
    echo "FAIL python3 under memcheck with --soname-synonyms=somalloc=NONE is served by heaplab (count: ${served:-none})"
    failures=$((failures + 1))
fi
if [ "$rc" -eq 0 ]; then
    echo "ok   memcheck reports no error and the program's own checks pass"
else
    echo "FAIL memcheck reports no error and the program's own checks pass (exit status $rc: 9 memcheck found errors, 1 the program's checks failed)"
    failures=$((failures + 1))
fi
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
exit 0
