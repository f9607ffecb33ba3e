/* heaplab core test: the thread's stash of freed medium blocks.
 *  - a freed 8-32 KiB block is held by the freeing thread (stats: thread
 *    cache bytes), and the next request of nearly its size gets it back;
 *  - a second free of a stashed block, and malloc_usable_size or realloc
 *    of one, abort naming the call;
 *  - the stash is bounded (no more than MEDIUM_STASH_BYTES held), and
 *    hl_thread_flush and thread exit give it back to the arenas;
 *  - alloc and free counts stay exact through it, and hl_check with the
 *    stats identity hold with blocks stashed;
 *  - threads freeing each other's medium blocks (into their stashes) while
 *    the neighbours of those blocks merge and split under the arena locks:
 *    no false alarm from the lock-free tag checks, nothing lost;
 *  - a thread whose stash gives back blocks of two arenas while another
 *    thread trims (and so unmaps the segments that became free): the
 *    giving back never reads a segment it already gave blocks back to. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "heaplab.h"
#include "testutil.h"

#define STASH_BYTES_MAX ((size_t)256 << 10) /* MEDIUM_STASH_BYTES */
#define SIZE 12000

static hl_stats_t stats_now(void)
{
    hl_stats_t s;
    hl_stats(&s);
    return s;
}

static void reuse_and_counts(void)
{
    hl_thread_flush();
    hl_stats_t before = stats_now();
    char *p = hl_malloc(SIZE);
    p[0] = 1;
    hl_stats_t live = stats_now();
    hl_free(p);
    hl_stats_t held = stats_now();
    CHECK("a freed 12,000-byte block is held by the thread: tcache grows by at least its size",
          held.tcache >= live.tcache + SIZE);
    CHECK("... and the arenas' free bytes stay as they were", held.medium_free == live.medium_free);
    CHECK("stats balance and hl_check is clean with a block stashed", hl_stats_balanced(&held) && hl_check() == 0);
    char *q = hl_malloc(SIZE - 100);
    CHECK("the next request of nearly its size gets the same block back", q == p);
    hl_stats_t after = stats_now();
    CHECK("taken back: tcache as before", after.tcache == before.tcache);
    CHECK("alloc and free counts: two mallocs and one free more than before",
          after.alloc_count == before.alloc_count + 2 && after.free_count == before.free_count + 1);
    hl_free(q);
    hl_stats_t end = stats_now();
    CHECK("... and two of each once it is freed again",
          end.alloc_count == before.alloc_count + 2 && end.free_count == before.free_count + 2);
    hl_thread_flush();
    hl_stats_t flushed = stats_now();
    CHECK("hl_thread_flush gives the stash back: tcache as before", flushed.tcache == before.tcache);
    CHECK("... counts unchanged by the flush",
          flushed.alloc_count == end.alloc_count && flushed.free_count == end.free_count);
}

static void *stashed_block;

static void double_free_stashed(void)
{
    hl_free(stashed_block);
    hl_free(stashed_block);
}

static void usable_stashed(void)
{
    hl_free(stashed_block);
    (void)hl_usable_size(stashed_block);
}

static void realloc_stashed(void)
{
    hl_free(stashed_block);
    (void)hl_realloc(stashed_block, SIZE * 2);
}

static void dies_with(const char *name, void (*fn)(void), const char *line)
{
    stashed_block = hl_malloc(SIZE);
    CHECK(name, tu_dies_with(fn, line));
    hl_free(stashed_block);
}

static void bounded(void)
{
    enum { N = 200 };
    static void *blocks[N];
    hl_thread_flush();
    hl_stats_t before = stats_now();
    for (int i = 0; i < N; i++)
        blocks[i] = hl_malloc(SIZE + (size_t)(i % 7) * 1000);
    for (int i = 0; i < N; i++)
        hl_free(blocks[i]);
    hl_stats_t s = stats_now();
    CHECK("200 freed blocks of 12-18 KB: the thread holds at most 256 KiB of them",
          s.tcache - before.tcache <= STASH_BYTES_MAX);
    CHECK("... and holds some (the stash is in use)", s.tcache > before.tcache);
    CHECK("... the rest went to the arenas", s.medium_free >= before.medium_free + (size_t)N * SIZE / 2);
    CHECK("stats balance and hl_check is clean", hl_stats_balanced(&s) && hl_check() == 0);
    void *big = hl_malloc(40000);
    hl_stats_t b0 = stats_now();
    hl_free(big);
    hl_stats_t b1 = stats_now();
    CHECK("a 40,000-byte block is not stashed (above 32 KiB): tcache unchanged by its free", b1.tcache == b0.tcache);
    hl_thread_flush();
}

/* ---- thread exit ---- */

static void *free_and_exit(void *arg)
{
    (void)arg;
    void *p[8];
    for (int i = 0; i < 8; i++)
        p[i] = hl_malloc(SIZE);
    for (int i = 0; i < 8; i++)
        hl_free(p[i]);
    return NULL;
}

static void thread_exit_gives_back(void)
{
    hl_thread_flush();
    hl_stats_t before = stats_now();
    pthread_t t;
    pthread_create(&t, NULL, free_and_exit, NULL);
    pthread_join(t, NULL);
    hl_stats_t after = stats_now();
    CHECK("a thread that freed 8 medium blocks and exited holds none: tcache as before", after.tcache == before.tcache);
    CHECK("... the counts say 8 more mallocs and frees",
          after.alloc_count == before.alloc_count + 8 && after.free_count == before.free_count + 8);
    CHECK("stats balance and hl_check is clean after the exit", hl_stats_balanced(&after) && hl_check() == 0);
}

/* 8 pairs of one size: the first malloc from an arena, the next 7 from
 * the stash (a reuse each) */
static void *reuse_and_exit(void *arg)
{
    (void)arg;
    for (int i = 0; i < 8; i++)
        hl_free(hl_malloc(SIZE));
    return NULL;
}

/* A thread's stash counts its reuses; the count must reach the totals when
 * the thread exits, once, and must not follow the region to the next
 * thread that takes it over (the second thread below gets the first one's
 * region back). */
static void reuse_counts_survive_exit(void)
{
    hl_thread_flush();
    hl_stats_t before = stats_now();
    for (int round = 0; round < 2; round++) {
        pthread_t t;
        pthread_create(&t, NULL, reuse_and_exit, NULL);
        pthread_join(t, NULL);
    }
    hl_stats_t after = stats_now();
    CHECK("two threads in turn, each 8 malloc+free pairs served by its stash: 16 mallocs and 16 frees counted",
          after.alloc_count == before.alloc_count + 16 && after.free_count == before.free_count + 16);
    CHECK("stats balance and hl_check is clean after both exits", hl_stats_balanced(&after) && hl_check() == 0);
}

/* ---- threads freeing each other's blocks ---- */

#define WORKERS 3
#define ROUNDS 3000
#define RING 64

struct ring {
    _Atomic size_t head, tail;
    void *slot[RING];
};
static struct ring rings[WORKERS]; /* ring w: blocks for worker w to free */
static atomic_int running;

static bool ring_put(struct ring *r, void *p)
{
    size_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (h - atomic_load_explicit(&r->tail, memory_order_acquire) == RING)
        return false;
    r->slot[h % RING] = p;
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
    return true;
}

static void *ring_take(struct ring *r)
{
    size_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    if (atomic_load_explicit(&r->head, memory_order_acquire) == t)
        return NULL;
    void *p = r->slot[t % RING];
    atomic_store_explicit(&r->tail, t + 1, memory_order_release);
    return p;
}

static atomic_int bad_blocks;

static void *exchanger(void *arg)
{
    int me = (int)(intptr_t)arg;
    uint64_t rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(me + 1);
    void *own[16] = {0};
    for (int round = 0; round < ROUNDS; round++) {
        /* sizes across the stash's range and beyond it, so stashed blocks
         * sit between blocks that merge and split in the arenas */
        size_t size = 8200 + tu_rand(&rng) % 40000;
        unsigned char *p = hl_malloc(size);
        if (!p)
            continue;
        p[0] = (unsigned char)me;
        p[size - 1] = (unsigned char)me;
        int k = (int)(tu_rand(&rng) % 16);
        if (own[k]) {
            /* half to the next worker, half freed here */
            if (!(tu_rand(&rng) & 1) || !ring_put(&rings[(me + 1) % WORKERS], own[k]))
                hl_free(own[k]);
        }
        own[k] = p;
        for (void *q; (q = ring_take(&rings[me])) != NULL;) {
            if (((unsigned char *)q)[0] >= WORKERS)
                atomic_fetch_add(&bad_blocks, 1);
            hl_free(q);
        }
    }
    for (int k = 0; k < 16; k++)
        hl_free(own[k]);
    atomic_fetch_sub(&running, 1);
    /* keep emptying the ring until every worker stopped putting */
    while (atomic_load(&running) > 0) {
        for (void *q; (q = ring_take(&rings[me])) != NULL;)
            hl_free(q);
        sched_yield();
    }
    for (void *q; (q = ring_take(&rings[me])) != NULL;)
        hl_free(q);
    return NULL;
}

static void exchange(void)
{
    hl_thread_flush();
    hl_stats_t before = stats_now();
    pthread_t t[WORKERS];
    atomic_store(&running, WORKERS);
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, exchanger, (void *)(intptr_t)i);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    hl_stats_t after = stats_now();
    CHECK("3 threads freeing each other's medium blocks: every block came back intact", atomic_load(&bad_blocks) == 0);
    CHECK("... no block left live", after.live == before.live);
    CHECK("... none left in a stash once they exited", after.tcache == before.tcache);
    CHECK("... mallocs and frees counted alike",
          after.alloc_count - before.alloc_count == after.free_count - before.free_count);
    CHECK("... stats balance and hl_check is clean", hl_stats_balanced(&after) && hl_check() == 0);
}

/* ---- giving back while another thread trims ---- */

#define TRIM_ROUNDS 150
#define HANDED_BLOCKS 400 /* 16 KiB each: more than one 4 MiB segment */
#define HANDED_SIZE 16000
#define OWN_SIZE 9000     /* no handed block fits it: the freer's own arena */

static struct ring handoff;
static atomic_int handed_rounds_done, trimming;

static void *trimmer(void *arg)
{
    (void)arg;
    while (atomic_load(&trimming))
        hl_trim();
    return NULL;
}

static void *freer(void *arg)
{
    (void)arg;
    for (int round = 0; round < TRIM_ROUNDS; round++) {
        for (int k = 0; k < HANDED_BLOCKS;) {
            void *p = ring_take(&handoff);
            if (!p) {
                sched_yield();
                continue;
            }
            /* a block of the freer's own arena between two handed ones, so
             * that the stash gives back blocks of both arenas together */
            void *own = hl_malloc(OWN_SIZE);
            hl_free(p);
            hl_free(own);
            k++;
        }
        hl_thread_flush();
        atomic_fetch_add(&handed_rounds_done, 1);
    }
    return NULL;
}

static void give_back_while_trimming(void)
{
    static void *blocks[HANDED_BLOCKS];
    hl_thread_flush();
    pthread_t f, t;
    atomic_store(&trimming, 1);
    pthread_create(&f, NULL, freer, NULL);
    pthread_create(&t, NULL, trimmer, NULL);
    for (int round = 0; round < TRIM_ROUNDS; round++) {
        for (int k = 0; k < HANDED_BLOCKS; k++) {
            blocks[k] = hl_malloc(HANDED_SIZE);
            ((char *)blocks[k])[0] = 1;
        }
        for (int k = 0; k < HANDED_BLOCKS; k++)
            while (!ring_put(&handoff, blocks[k]))
                sched_yield();
        while (atomic_load(&handed_rounds_done) <= round)
            sched_yield();
    }
    pthread_join(f, NULL);
    atomic_store(&trimming, 0);
    pthread_join(t, NULL);
    hl_stats_t s = stats_now();
    CHECK("150 rounds of 400 blocks handed to a thread that gives them back while another trims: "
          "no crash, stats balance and hl_check is clean",
          hl_stats_balanced(&s) && hl_check() == 0);
}

int main(void)
{
    reuse_and_counts();
    dies_with("a second free of a stashed medium block aborts naming free()", double_free_stashed,
              "heaplab: free(): invalid pointer");
    dies_with("malloc_usable_size of a stashed medium block aborts", usable_stashed,
              "heaplab: malloc_usable_size(): invalid pointer");
    dies_with("realloc of a stashed medium block aborts naming realloc()", realloc_stashed,
              "heaplab: realloc(): invalid pointer");
    bounded();
    thread_exit_gives_back();
    reuse_counts_survive_exit();
    exchange();
    give_back_while_trimming();
    return tu_finish();
}
