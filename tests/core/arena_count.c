/* heaplab core test: how many small heaps the threads are spread over.
 * By default one per CPU the process may run on, plus one (at most 16);
 * HEAPLAB_HEAPS=N at start-up sets N. Seen from outside: threads that are
 * all alive at once and each allocate one small block get blocks of exactly
 * that many different 64 KiB pages (threads on one heap carve their first
 * blocks from the same span; two heaps never share a span).
 *
 * Usage: core_arena_count N (HEAPLAB_HEAPS=N in the environment) or
 * core_arena_count default (HEAPLAB_HEAPS unset). */
#include <pthread.h>
#include <sched.h>

#include "heaplab.h"
#include "testutil.h"

#define SIZE 64 /* a class whose span is one 64 KiB page */
#define PAGE_SHIFT 16
#define MOST_HEAPS 16

static pthread_barrier_t barrier;

static void *allocate_and_hold(void *arg)
{
    void **out = arg;
    *out = hl_malloc(SIZE);
    pthread_barrier_wait(&barrier); /* every thread holds its block */
    pthread_barrier_wait(&barrier); /* main has counted the pages */
    hl_free(*out);
    return NULL;
}

static int distinct_pages(void *const *blocks, int n)
{
    int distinct = 0;
    for (int i = 0; i < n; i++) {
        uintptr_t page = (uintptr_t)blocks[i] >> PAGE_SHIFT;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = ((uintptr_t)blocks[j] >> PAGE_SHIFT) == page;
        distinct += !seen;
    }
    return distinct;
}

static int expected_heaps(const char *arg)
{
    if (strcmp(arg, "default") != 0)
        return atoi(arg);
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    return cpus + 1 < MOST_HEAPS ? cpus + 1 : MOST_HEAPS;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s N|default\n", argv[0]);
        return 2;
    }
    int heaps = expected_heaps(argv[1]);
    /* twice as many threads as heaps (with main): every heap gets some,
     * and no heap's first span runs out (3 threads take at most 768 of its
     * 1,024 blocks) */
    int threads = 2 * heaps;
    void *blocks[2 * MOST_HEAPS + 1];
    pthread_t t[2 * MOST_HEAPS];
    blocks[threads] = hl_malloc(SIZE); /* main takes a heap first */
    pthread_barrier_init(&barrier, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, allocate_and_hold, &blocks[i]);
    pthread_barrier_wait(&barrier);
    int pages = distinct_pages(blocks, threads + 1);
    printf("%d threads alive, blocks on %d pages, %d heaps expected\n", threads + 1, pages, heaps);
    CHECK("threads alive at once are spread over exactly the expected number of heaps", pages == heaps);
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    hl_free(blocks[threads]);
    hl_stats_t st;
    hl_stats(&st);
    CHECK("stats balanced after threads shared heaps", hl_stats_balanced(&st));
    CHECK("hl_check clean after threads shared heaps", hl_check() == 0);
    pthread_barrier_destroy(&barrier);
    return tu_finish();
}
