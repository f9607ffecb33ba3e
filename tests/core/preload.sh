#!/bin/sh
# heaplab core test: real programs under LD_PRELOAD=libheaplab-preload.so give
# byte-identical output to the same runs without it.
# Usage: preload.sh /path/to/libheaplab-preload.so
set -u
LIB=${1:?usage: preload.sh /path/to/libheaplab-preload.so}
[ -f "$LIB" ] || { echo "preload.sh: no such library: $LIB"; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/heaplab-preload.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
failures=0

# run NAME CMD...: runs CMD plain and preloaded, compares stdout+stderr and status
run() {
    name=$1
    shift
    "$@" >"$WORK/plain.out" 2>&1
    plain_rc=$?
    LD_PRELOAD="$LIB" HEAPLAB_PRELOAD_CHECK=1 "$@" >"$WORK/hl.out" 2>&1
    hl_rc=$?
    if [ "$plain_rc" -eq "$hl_rc" ] && cmp -s "$WORK/plain.out" "$WORK/hl.out"; then
        echo "ok   $name (exit $hl_rc, $(wc -c <"$WORK/hl.out") bytes identical)"
    else
        echo "FAIL $name: exit $plain_rc plain vs $hl_rc preloaded"
        diff "$WORK/plain.out" "$WORK/hl.out" | head -5
        failures=$((failures + 1))
    fi
}

# the library must really be in use: a program that prints its allocator
cat >"$WORK/which.c" <<'C'
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <dlfcn.h>
int main(void)
{
    Dl_info info;
    void *p = malloc(10);
    if (dladdr((void *)malloc, &info) && info.dli_fname)
        printf("%s\n", info.dli_fname);
    free(p);
    return 0;
}
C
gcc -O1 -o "$WORK/which" "$WORK/which.c" -ldl || exit 2
case "$(LD_PRELOAD="$LIB" "$WORK/which")" in
*heaplab-preload*) echo "ok   malloc resolves to heaplab under LD_PRELOAD" ;;
*) echo "FAIL malloc does not resolve to heaplab under LD_PRELOAD"; failures=$((failures + 1)) ;;
esac

run "python3 builds, sorts and serialises 200k objects with threads" /usr/bin/python3 -c '
import json, threading, hashlib, random
random.seed(7)
d = {str(i): [random.random() for _ in range(i % 40)] for i in range(60000)}
s = json.dumps(d, sort_keys=True)
out = []
def work(k):
    out.append(hashlib.sha256((s[k::7]).encode()).hexdigest())
ts = [threading.Thread(target=work, args=(k,)) for k in range(6)]
[t.start() for t in ts]; [t.join() for t in ts]
print(len(s), sorted(out)[0], sum(len(v) for v in d.values()))
'

/usr/bin/python3 -c '
import random
random.seed(3)
for i in range(300000):
    print("".join(random.choice("abcdefghij") for _ in range(random.randint(1, 60))))
' >"$WORK/lines.txt"
run "sort of a 300k-line generated file" sort "$WORK/lines.txt"
run "sort -u -r with a small buffer (merge passes)" sort -u -r -S 1M "$WORK/lines.txt"

cat >"$WORK/prog.c" <<'C'
#include <stdio.h>
#include <string.h>
struct item { char name[32]; int weight; };
static int cmp(const void *a, const void *b) { return ((const struct item *)a)->weight - ((const struct item *)b)->weight; }
int main(void) { struct item v[4] = {{"a", 3}, {"b", 1}, {"c", 2}, {"d", 0}}; qsort(v, 4, sizeof v[0], cmp); for (int i = 0; i < 4; i++) printf("%s\n", v[i].name); return 0; }
C
run "gcc -O2 -S of a small C file" sh -c "gcc -O2 -S -o - '$WORK/prog.c' -include stdlib.h"

mkdir -p "$WORK/repo"
(
    cd "$WORK/repo" && git init -q . && git config user.email t@example.com && git config user.name t &&
        for i in 1 2 3 4 5; do seq 1 $((i * 1000)) >"f$i.txt" && git add "f$i.txt" &&
            GIT_COMMITTER_DATE="2020-01-0${i}T00:00:00Z" git commit -q --date="2020-01-0${i}T00:00:00Z" -m "commit $i"; done
) || exit 2
run "git log --stat on a temp repo" git -C "$WORK/repo" log --stat
run "git hash-object of the generated file" git hash-object "$WORK/lines.txt"

run "perl hashes, sorts and formats 200k keys" perl -e '
my %h; for my $i (1..200000) { $h{"k$i"} = join(",", map { $_ * $i % 97 } 1..5); }
my @k = sort { $h{$a} cmp $h{$b} or $a cmp $b } keys %h;
print scalar(@k), " $k[0] $k[-1] $h{$k[100]}\n";
'

[ "$failures" -eq 0 ] || { echo "$failures preload check(s) failed"; exit 1; }
exit 0
