/* heaplab core test: a seeded multithreaded stress, in the spirit of
 * mimalloc's test-stress (its description, not its code).
 *
 * Each round starts fresh threads (8 by default; the machine may have fewer
 * cores). Each keeps a set of live blocks: sizes mostly small, sometimes
 * medium (32 KiB - 1 MiB), occasionally large (1 - 8 MiB). Every block
 * carries a cookie derived from its address and its word index (all of a
 * small block, a sparse sample of a big one); the cookie is checked before
 * the block is freed or reallocated. A share of the blocks goes through a
 * shared exchange array to whichever thread comes next (which keeps it in
 * its own set and frees it or passes it on later), a share is reallocated,
 * and at the end of a round each thread leaves some blocks in a retained
 * set, which a thread of the next round checks and frees. At the end
 * everything is freed and the heap must check clean.
 *
 * Usage: core_stress [threads [rounds [seed]]] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heaplab.h"
#include "testutil.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define DEFAULT_THREADS 8
#define DEFAULT_ROUNDS 8
#define DEFAULT_SEED 42
#define MAX_THREADS 64
/* per thread; the ThreadSanitizer build does fewer, in about the same time */
#if defined(__SANITIZE_THREAD__)
#define OPS_PER_ROUND 8000
#else
#define OPS_PER_ROUND 20000
#endif
#define LIVE_SLOTS 256     /* blocks a thread holds at once */
#define EXCHANGE_SLOTS 512 /* the shared array other threads take from */
#define RETAINED_SLOTS 32  /* per thread, kept from one round to the next */
/* big blocks get a cookie word every this many bytes, plus the last word */
#define SPARSE_STRIDE (4 * KiB)
#define COOKIE_SALT 0xbf58476d1ce4e5b9ULL

typedef uint64_t word_t;

/* A block of `words` words: word 0 holds `words` (so a block passed between
 * threads carries its size), the others the cookie of its address. */
struct block {
    word_t *p;
    size_t words;
};

static _Atomic(word_t *) exchange_slots[EXCHANGE_SLOTS];
/* retained[round % 2][thread]: written by its thread at the end of a round,
 * checked and partly freed by another thread in the next round (which
 * writes the other half of the array meanwhile) */
static struct block retained[2][MAX_THREADS][RETAINED_SLOTS];
static _Atomic size_t bad_cookies, null_results, blocks_made;
static unsigned thread_count = DEFAULT_THREADS;

static word_t cookie(const word_t *p, size_t i)
{
    return ((uintptr_t)p ^ COOKIE_SALT) + i * 0x9E3779B97F4A7C15ULL;
}

/* words between two cookies: all of a small block, a sample of a big one */
static size_t step_of(size_t words)
{
    return words * sizeof(word_t) > SPARSE_STRIDE ? SPARSE_STRIDE / sizeof(word_t) : 1;
}

static void fill(const struct block *b)
{
    b->p[0] = b->words;
    size_t step = step_of(b->words);
    for (size_t i = 1; i < b->words; i += step)
        b->p[i] = cookie(b->p, i);
    if (b->words > 1)
        b->p[b->words - 1] = cookie(b->p, b->words - 1);
}

/* 1 when the first `keep` words of the block at p hold what fill() wrote
 * there for a block of `words` words at address `from` */
static int intact(const word_t *p, const word_t *from, size_t words, size_t keep)
{
    if (p[0] != words)
        return 0;
    size_t step = step_of(words);
    for (size_t i = 1; i < keep; i += step)
        if (p[i] != cookie(from, i))
            return 0;
    return keep < words || words == 1 || p[words - 1] == cookie(from, words - 1);
}

static void release(struct block *b)
{
    if (!b->p)
        return;
    if (!intact(b->p, b->p, b->words, b->words))
        atomic_fetch_add(&bad_cookies, 1);
    hl_free(b->p);
    b->p = NULL;
}

/* mostly small; 1 in 40 medium; 1 in 1000 large */
static size_t random_words(uint64_t *rng)
{
    uint64_t r = tu_rand(rng);
    size_t bytes;
    if (r % 1000 == 0)
        bytes = MiB + (size_t)(r >> 20) % (7 * MiB);
    else if (r % 40 == 0)
        bytes = 32 * KiB + (size_t)(r >> 20) % (MiB - 32 * KiB);
    else if (r % 4 == 0)
        bytes = 1 + (size_t)(r >> 20) % (8 * KiB);
    else
        bytes = 1 + (size_t)(r >> 20) % 256;
    return (bytes + sizeof(word_t) - 1) / sizeof(word_t);
}

static struct block make(uint64_t *rng)
{
    struct block b = {.words = random_words(rng)};
    b.p = hl_malloc(b.words * sizeof(word_t));
    if (!b.p) {
        atomic_fetch_add(&null_results, 1);
        return (struct block){0};
    }
    atomic_fetch_add_explicit(&blocks_made, 1, memory_order_relaxed);
    fill(&b);
    return b;
}

/* reallocates b to a random size; the kept prefix must still hold the
 * old address's cookie (copied, or moved with its pages) */
static void resize(struct block *b, uint64_t *rng)
{
    size_t words = random_words(rng);
    word_t *old = b->p;
    size_t keep = words < b->words ? words : b->words;
    if (!intact(old, old, b->words, b->words))
        atomic_fetch_add(&bad_cookies, 1);
    word_t *q = hl_realloc(old, words * sizeof(word_t));
    if (!q) {
        atomic_fetch_add(&null_results, 1);
        return;
    }
    if (!intact(q, old, b->words, keep))
        atomic_fetch_add(&bad_cookies, 1);
    b->p = q;
    b->words = words;
    fill(b);
}

struct worker_arg {
    unsigned id;
    unsigned round;
    uint64_t seed;
};

static void *worker(void *argp)
{
    const struct worker_arg *arg = argp;
    uint64_t rng = arg->seed;
    struct block live[LIVE_SLOTS] = {{0}};
    /* the retained blocks of another thread from the previous round */
    unsigned from = (arg->id + 1) % thread_count;
    for (unsigned k = 0; k < RETAINED_SLOTS; k++)
        if (tu_rand(&rng) % 2)
            release(&retained[(arg->round + 1) % 2][from][k]);
    for (unsigned op = 0; op < OPS_PER_ROUND; op++) {
        uint64_t r = tu_rand(&rng);
        struct block *b = &live[r % LIVE_SLOTS];
        unsigned what = (unsigned)(r >> 32) % 100;
        if (what < 10 && b->p) {
            resize(b, &rng);
        } else if (what < 25 && b->p) {
            /* pass b on; whatever was waiting in that slot (most likely
             * another thread's block) takes b's place here */
            word_t *got = atomic_exchange(&exchange_slots[(r >> 40) % EXCHANGE_SLOTS], b->p);
            b->p = got;
            b->words = got ? (size_t)got[0] : 0;
        } else {
            release(b);
            *b = make(&rng);
        }
    }
    /* some blocks survive into the next round; the rest go */
    for (unsigned k = 0; k < LIVE_SLOTS; k++) {
        struct block *slot = &retained[arg->round % 2][arg->id][k % RETAINED_SLOTS];
        if (k < RETAINED_SLOTS && !slot->p && live[k].p) {
            *slot = live[k];
            live[k].p = NULL;
        }
        release(&live[k]);
    }
    return NULL;
}

static void free_leftovers(void)
{
    for (unsigned i = 0; i < EXCHANGE_SLOTS; i++) {
        word_t *p = atomic_exchange(&exchange_slots[i], NULL);
        struct block g = {.p = p, .words = p ? (size_t)p[0] : 0};
        release(&g);
    }
    for (unsigned h = 0; h < 2; h++)
        for (unsigned t = 0; t < MAX_THREADS; t++)
            for (unsigned k = 0; k < RETAINED_SLOTS; k++)
                release(&retained[h][t][k]);
}

int main(int argc, char **argv)
{
    unsigned rounds = DEFAULT_ROUNDS;
    uint64_t seed = DEFAULT_SEED;
    if (argc > 1)
        thread_count = (unsigned)strtoul(argv[1], NULL, 10);
    if (argc > 2)
        rounds = (unsigned)strtoul(argv[2], NULL, 10);
    if (argc > 3)
        seed = strtoull(argv[3], NULL, 10);
    if (thread_count < 1 || thread_count > MAX_THREADS)
        thread_count = DEFAULT_THREADS;
    printf("stress: %u threads, %u rounds, seed %llu\n", thread_count, rounds, (unsigned long long)seed);

    pthread_t t[MAX_THREADS];
    struct worker_arg args[MAX_THREADS];
    for (unsigned round = 0; round < rounds; round++) {
        for (unsigned i = 0; i < thread_count; i++) {
            args[i] = (struct worker_arg){.id = i, .round = round, .seed = seed * 1000003u + round * 131u + i + 1};
            pthread_create(&t[i], NULL, worker, &args[i]);
        }
        for (unsigned i = 0; i < thread_count; i++)
            pthread_join(t[i], NULL);
    }
    CHECK("every allocation and realloc of the stress succeeded", atomic_load(&null_results) == 0);
    CHECK("every block still carried its cookie when it was freed, reallocated or passed between threads",
          atomic_load(&bad_cookies) == 0);
    CHECK("hl_check clean after the threads joined, blocks still retained and in exchange", hl_check() == 0);
    free_leftovers();
    hl_thread_flush();
    hl_stats_t s;
    hl_stats(&s);
    CHECK("every block freed: live is 0 and the stats balance", s.live == 0 && hl_stats_balanced(&s));
    CHECK("hl_check clean after everything was freed", hl_check() == 0);
    CHECK("the stress made blocks (not a no-op)", atomic_load(&blocks_made) > (size_t)thread_count * rounds * OPS_PER_ROUND / 2);
    return tu_finish();
}
