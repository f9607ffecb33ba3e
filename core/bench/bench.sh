#!/bin/sh
# Runs heaplab-core-bench: every (mode, allocator) cell REPS times, each in a
# fresh process, and prints the median. Usage: bench.sh BUILD_DIR [REPS] [MODES]
set -eu
BIN=${1:?usage: bench.sh BUILD_DIR [REPS] [MODES]}/heaplab-core-bench
REPS=${2:-5}
MODES=${3:-pairs pairs-mixed big threads2}
[ -x "$BIN" ] || { echo "bench.sh: $BIN not built (cmake --build ... --target heaplab-core-bench)"; exit 2; }
for mode in $MODES; do
    for alloc in heaplab mimalloc glibc; do
        vals=""
        for _ in $(seq "$REPS"); do
            vals="$vals $("$BIN" "$mode" "$alloc" | awk '{print $3}')"
        done
        med=$(printf '%s\n' $vals | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
        unit=$("$BIN" "$mode" "$alloc" | awk '{print $4}')
        echo "$mode $alloc median $med $unit (runs:$vals)"
    done
done
