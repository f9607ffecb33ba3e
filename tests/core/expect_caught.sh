#!/bin/sh
# heaplab core test helper: runs a test program that is given a deliberate
# mistake (HEAPLAB_MUTANT) and passes when the program stops on it: a
# failed check (exit 1) or an abort by the core's own assertion or
# validation (SIGABRT), each having said what broke. A crash of any other
# kind, a hang (ctest's timeout) or a clean run fails.
# Usage: expect_caught.sh PROGRAM [ARGS...]
out=$("$@" 2>&1)
rc=$?
case "$rc" in
1 | 134)
    if printf '%s\n' "$out" | grep -q -E '^FAIL|^heaplab'; then
        printf '%s\n' "$out" | grep -m 2 -E '^FAIL|^heaplab'
        echo "ok   the deliberate mistake ${HEAPLAB_MUTANT:-?} stopped the program (exit $rc)"
        exit 0
    fi
    ;;
esac
printf '%s\n' "$out" | tail -5
echo "FAIL the deliberate mistake ${HEAPLAB_MUTANT:-?} was not caught (exit $rc)"
exit 1
