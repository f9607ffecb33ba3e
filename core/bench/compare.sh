#!/bin/sh
# Medians of heaplab-run's primary metric for heaplab against other
# allocators, each cell in a fresh process.
# Usage: compare.sh BUILD_DIR REPS "WORKLOADS" ["ALLOCATORS"] [extra heaplab-run args]
set -eu
RUN=${1:?usage: compare.sh BUILD_DIR REPS WORKLOADS [ALLOCATORS]}/heaplab-run
REPS=${2:-5}
WORKLOADS=${3:?workloads}
ALLOCS=${4:-heaplab mimalloc system}
shift 4 2>/dev/null || shift $#
for w in $WORKLOADS; do
    for a in $ALLOCS; do
        vals=""
        for _ in $(seq "$REPS"); do
            v=$("$RUN" --alloc "$a" --workload "$w" "$@" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
m = d["metrics"][d["primary"]]
print(m["value"])')
            vals="$vals $v"
        done
        med=$(printf '%s\n' $vals | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
        printf '%-22s %-10s median %12.3f  runs:%s\n' "$w" "$a" "$med" "$vals"
    done
done
