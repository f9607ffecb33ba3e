/* heaplab core test: small heaps. Threads are spread over small heaps, each
 * with its own spans; blocks freed on another thread find their way back.
 *  - two threads allocating at the same time get blocks of different 64 KiB
 *    pages (neither writes a cache line of the other's blocks);
 *  - a producer's blocks freed by a consumer thread serve the producer's
 *    next allocations (no new pages);
 *  - batches mixing two heaps' blocks leave hl_check clean and stats
 *    balanced, and hl_trim gives back every free page of both heaps. */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "heaplab.h"
#include "testutil.h"

#define N 20000
#define SIZE 64
#define PAGE_SHIFT 16

static pthread_barrier_t barrier;

/* N blocks of SIZE bytes, written (the array itself from the system) */
static void **allocate(void)
{
    void **v = malloc(N * sizeof *v);
    if (!v)
        abort();
    for (int i = 0; i < N; i++) {
        v[i] = hl_malloc(SIZE);
        memset(v[i], 0x5a, SIZE);
    }
    return v;
}

static void free_all(void **v)
{
    for (int i = 0; i < N; i++)
        hl_free(v[i]);
    free(v);
}

static uintptr_t page_of(const void *p)
{
    return (uintptr_t)p >> PAGE_SHIFT;
}

static int cmp_page(const void *x, const void *y)
{
    uintptr_t a = *(const uintptr_t *)x, b = *(const uintptr_t *)y;
    return (a > b) - (a < b);
}

/* the distinct pages of a set's blocks, sorted; returns their count */
static size_t pages_of(void **v, uintptr_t *out)
{
    for (int i = 0; i < N; i++)
        out[i] = page_of(v[i]);
    qsort(out, N, sizeof *out, cmp_page);
    size_t n = 0;
    for (int i = 0; i < N; i++)
        if (n == 0 || out[n - 1] != out[i])
            out[n++] = out[i];
    return n;
}

/* how many of v's pages are also pages of `of` (and how many v has) */
static size_t common_pages(void **v, void **of, size_t *v_pages)
{
    static uintptr_t pv[N], po[N];
    size_t nv = pages_of(v, pv), no = pages_of(of, po), common = 0;
    for (size_t i = 0, j = 0; i < nv && j < no;) {
        if (pv[i] == po[j]) {
            common++;
            i++;
            j++;
        } else if (pv[i] < po[j]) {
            i++;
        } else {
            j++;
        }
    }
    *v_pages = nv;
    return common;
}

static bool pages_within(void **v, void **of)
{
    size_t nv, common = common_pages(v, of, &nv);
    return common == nv;
}

static bool share_a_page(void **a, void **b)
{
    size_t na;
    return common_pages(a, b, &na) != 0;
}

/* ---- 1: two live sets allocated at the same time ------------------------ */

static void *hold(void *arg)
{
    void ***out = arg;
    *out = allocate();
    pthread_barrier_wait(&barrier); /* both sets are live */
    pthread_barrier_wait(&barrier); /* main has compared them */
    free_all(*out);
    return NULL;
}

static void concurrent_sets_use_different_pages(void)
{
    void **a = NULL, **b = NULL;
    pthread_t ta, tb;
    pthread_barrier_init(&barrier, NULL, 3);
    pthread_create(&ta, NULL, hold, &a);
    pthread_create(&tb, NULL, hold, &b);
    pthread_barrier_wait(&barrier);
    CHECK("two threads allocating at once get blocks of different pages", !share_a_page(a, b));
    pthread_barrier_wait(&barrier);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_barrier_destroy(&barrier);
}

/* ---- 2: producer and consumer ------------------------------------------- */

struct sets {
    void **a, **b;
};

/* frees both sets, interleaved (its cache's batches mix the two heaps) */
static void *consume(void *arg)
{
    struct sets *s = arg;
    for (int i = 0; i < N; i++) {
        hl_free(s->a[i]);
        if (s->b)
            hl_free(s->b[i]);
    }
    return NULL;
}

static bool reused_own_pages;

static void *produce_then_reuse(void *arg)
{
    struct sets *s = arg;
    void **first = allocate();
    s->a = first;
    pthread_barrier_wait(&barrier); /* allocated */
    pthread_barrier_wait(&barrier); /* a consumer freed them and exited */
    void **again = allocate();
    reused_own_pages = pages_within(again, first);
    free_all(again);
    free(first);
    return NULL;
}

static void freed_elsewhere_comes_back(void)
{
    struct sets s = {0};
    pthread_t p, c;
    pthread_barrier_init(&barrier, NULL, 2);
    pthread_create(&p, NULL, produce_then_reuse, &s);
    pthread_barrier_wait(&barrier);
    pthread_create(&c, NULL, consume, &s);
    pthread_join(c, NULL);
    pthread_barrier_wait(&barrier);
    pthread_join(p, NULL);
    pthread_barrier_destroy(&barrier);
    CHECK("a producer's blocks freed on another thread serve its next allocations (no new pages)", reused_own_pages);
}

/* ---- 3: batches mixing two heaps ---------------------------------------- */

static void *produce_and_wait(void *arg)
{
    void ***out = arg;
    *out = allocate();
    pthread_barrier_wait(&barrier); /* allocated */
    pthread_barrier_wait(&barrier); /* consumer done, main checked */
    return NULL;
}

static void mixed_batches_stay_consistent(void)
{
    struct sets s = {0};
    pthread_t p1, p2, c;
    pthread_barrier_init(&barrier, NULL, 3);
    pthread_create(&p1, NULL, produce_and_wait, &s.a);
    pthread_create(&p2, NULL, produce_and_wait, &s.b);
    pthread_barrier_wait(&barrier);
    pthread_create(&c, NULL, consume, &s);
    pthread_join(c, NULL);
    hl_stats_t st;
    hl_stats(&st);
    CHECK("stats balanced with batches of two heaps' blocks", hl_stats_balanced(&st));
    CHECK("hl_check clean with batches of two heaps' blocks", hl_check() == 0);
    pthread_barrier_wait(&barrier);
    pthread_join(p1, NULL);
    pthread_join(p2, NULL);
    pthread_barrier_destroy(&barrier);
    free(s.a);
    free(s.b);

    hl_trim();
    hl_stats(&st);
    CHECK("after every thread exited, nothing small is live or cached", st.live == 0 && st.tcache == 0);
    CHECK("hl_trim leaves no free small page resident in any heap", st.page_free == 0);
    CHECK("stats balanced after trim", hl_stats_balanced(&st));
    CHECK("hl_check clean after trim", hl_check() == 0);
}

/* A thread that replaces one that exited takes over its heap: the blocks
 * the old thread freed serve the new one (threads handed out round-robin
 * over every heap carved fresh spans for each new thread). */
#define GENERATION_BLOCKS 600
static void *generation_blocks[GENERATION_BLOCKS];
static void *kept_block;

static void *old_generation(void *arg)
{
    (void)arg;
    for (int i = 0; i < GENERATION_BLOCKS; i++)
        generation_blocks[i] = hl_malloc(SIZE);
    /* one block outlives the thread, as a program's data would */
    kept_block = generation_blocks[0];
    for (int i = 1; i < GENERATION_BLOCKS; i++)
        hl_free(generation_blocks[i]);
    return NULL;
}

static void *new_generation(void *arg)
{
    int *reused = arg;
    for (int i = 0; i < 64; i++) {
        void *p = hl_malloc(SIZE);
        for (int k = 1; k < GENERATION_BLOCKS; k++)
            if (p == generation_blocks[k]) {
                (*reused)++;
                break;
            }
    }
    return NULL;
}

static void next_thread_takes_over_a_heap(void)
{
    int reused = 0;
    for (int round = 0; round < 3; round++) {
        pthread_t t;
        pthread_create(&t, NULL, old_generation, NULL);
        pthread_join(t, NULL);
        int got = 0;
        pthread_create(&t, NULL, new_generation, &got);
        pthread_join(t, NULL);
        reused += got == 64;
        hl_free(kept_block);
    }
    CHECK("a thread started after another exited gets the blocks that thread freed (its heap)", reused == 3);
    CHECK("hl_check clean after three generations of threads", hl_check() == 0);
}

int main(void)
{
    /* the main thread takes a heap before any test thread starts */
    hl_free(hl_malloc(1));
    concurrent_sets_use_different_pages();
    freed_elsewhere_comes_back();
    mixed_batches_stay_consistent();
    next_thread_takes_over_a_heap();
    return tu_finish();
}
