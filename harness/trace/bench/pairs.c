/* A program to record for measuring the replay's own cost per call (not
 * built by CMake; docs/trace-format.md, "Performance", says how):
 *
 *   cc -O1 -fno-builtin pairs.c -o pairs && ./run.py record --out pairs.hltrace -- ./pairs 5000000
 *   build/heaplab-run --alloc floor --workload trace:pairs.hltrace --param touch=none
 *
 * It allocates a block and frees it at once, N times, so at most one block
 * is live: the `floor` allocator (one block per thread) can serve the
 * replay, and what the replay measures is its own loop. */
#include <stdio.h>
#include <stdlib.h>

enum { SIZES = 64, SIZE_STEP = 48 };

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    unsigned long sum = 0;
    for (long i = 0; i < n; i++) {
        char *p = malloc((size_t)(16 + (i % SIZES) * SIZE_STEP));
        if (!p)
            return 1;
        p[0] = (char)i;
        sum += (unsigned char)p[0];
        free(p);
    }
    printf("%lu\n", sum);
    return 0;
}
