/* heaplab core test: thread caches off. Run once with HEAPLAB_TCACHE=0 in
 * the environment (argument "env") and once switching at run time
 * (argument "runtime"). With caches off every small request goes to the
 * shared per-class state, so no free block ever sits in a thread cache,
 * also with several threads allocating and freeing each other's blocks. */
#include <pthread.h>
#include <string.h>

#include "heaplab.h"
#include "testutil.h"

#define THREADS 4
#define ITERS 20000

static void *shared[THREADS][64];

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    uint64_t rng = id + 11;
    for (int i = 0; i < ITERS; i++) {
        uint64_t r = tu_rand(&rng);
        /* free a block another thread allocated (races are on pointers we
         * own: each thread only writes its own row) */
        void **slot = &shared[id][r % 64];
        hl_free(*slot);
        *slot = hl_malloc(16 + r % 3000);
        memset(*slot, 1, 16);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int env_mode = argc > 1 && strcmp(argv[1], "env") == 0;
    if (env_mode) {
        CHECK("HEAPLAB_TCACHE=0 at start-up turns the caches off", hl_tcache_enabled() == 0);
    } else {
        CHECK("caches are on by default", hl_tcache_enabled() == 1);
        void *p = hl_malloc(100);
        hl_free(p);
        hl_stats_t s;
        hl_stats(&s);
        CHECK("with caches on, a freed block waits in the thread cache", s.tcache > 0);
        CHECK("hl_set_tcache(0) returns the previous setting", hl_set_tcache(0) == 1);
        hl_stats(&s);
        CHECK("switching off flushes the calling thread's cache", s.tcache == 0);
    }
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    hl_stats_t s;
    hl_stats(&s);
    CHECK("caches off: no block held in any thread cache", s.tcache == 0);
    for (int i = 0; i < THREADS; i++)
        for (int j = 0; j < 64; j++)
            hl_free(shared[i][j]);
    hl_stats(&s);
    CHECK("caches off: every block back, live 0", s.live == 0 && s.tcache == 0);
    CHECK("stats balanced", hl_stats_balanced(&s));
    CHECK("hl_check clean", hl_check() == 0);
    CHECK("hl_set_tcache(1) turns them back on", hl_set_tcache(1) == 0 && hl_tcache_enabled() == 1);
    void *p = hl_malloc(100);
    hl_free(p);
    hl_free(hl_malloc(100));
    hl_stats(&s);
    CHECK("back on: freed blocks are cached again", s.tcache > 0);
    return tu_finish();
}
