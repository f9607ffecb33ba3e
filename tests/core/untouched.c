/* heaplab core test: what the small path writes into a free block. Thread
 * caches and stores hold entries (address and slot) rather than links
 * threaded through the blocks, so freeing a block, moving it between the
 * thread's cache and its heap's store, and handing it out again leave its
 * bytes as the program left them:
 *  - blocks written, freed (more than a cache holds, so most pass through
 *    the store) and allocated again come back holding what they held;
 *  - they are the same blocks;
 *  - the caches and stores they passed through stay consistent.
 * The second part frees, on one thread, blocks of its own heap and of
 * another thread's heap, interleaved: the other heap's blocks wait in the
 * freeing thread's remote bins and go home to their own heap's store,
 * still untouched, and the next thread on that heap gets exactly them
 * back; the freeing thread never hands them out. */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "heaplab.h"
#include "testutil.h"

#define N 3000 /* blocks; a 64-byte bin holds 256 */
#define SIZE 64

static int cmp_ptr(const void *x, const void *y)
{
    uintptr_t a = *(const uintptr_t *)x, b = *(const uintptr_t *)y;
    return (a > b) - (a < b);
}

/* every block holds its own index in every byte (mod 256) */
static bool holds_pattern(unsigned char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char want = (unsigned char)i;
        for (size_t k = 0; k < SIZE; k++)
            if (v[i][k] != want)
                return false;
    }
    return true;
}

/* Part two. Every other block stays live, so that no page is left all free
 * and hl_trim purges (zeroes) none of them. */
#define MIXED 1200 /* blocks per heap: more than a bin holds, so flushes reach a store */
/* a remote bin of 64-byte blocks holds fewer than this */
#define TCACHE_REMOTE_SLACK 128

static unsigned char *own[2 * MIXED], *other[2 * MIXED];
static uintptr_t taken_back[MIXED];

static void write_blocks(unsigned char **v, size_t n, unsigned char tag)
{
    for (size_t i = 0; i < n; i++) {
        v[i] = hl_malloc(SIZE);
        REQUIRE("malloc", v[i] != NULL);
        memset(v[i], (int)(tag ^ (unsigned char)i), SIZE);
    }
}

/* true when every freed block (even index) of v holds its pattern */
static bool freed_intact(unsigned char **v, unsigned char tag)
{
    for (size_t i = 0; i < 2 * MIXED; i += 2)
        for (size_t k = 0; k < SIZE; k++)
            if (v[i][k] != (unsigned char)(tag ^ (unsigned char)i))
                return false;
    return true;
}

/* the first thread on another heap: its blocks, written */
static void *other_heap(void *arg)
{
    (void)arg;
    write_blocks(other, 2 * MIXED, 0xa5);
    return NULL;
}

/* the next thread on that heap (the one the first left: the least used):
 * takes as many blocks as went home */
static void *next_on_other_heap(void *arg)
{
    (void)arg;
    for (size_t i = 0; i < MIXED; i++) {
        taken_back[i] = (uintptr_t)hl_malloc(SIZE);
        REQUIRE("malloc on the other heap", taken_back[i] != 0);
    }
    return NULL;
}

static bool is_freed_other(uintptr_t a)
{
    for (size_t i = 0; i < 2 * MIXED; i += 2)
        if ((uintptr_t)other[i] == a)
            return true;
    return false;
}

static void mixed_heaps(void)
{
    write_blocks(own, 2 * MIXED, 0x3c);
    pthread_t t;
    pthread_create(&t, NULL, other_heap, NULL);
    pthread_join(t, NULL);
    /* one thread frees blocks of both heaps, interleaved */
    for (size_t i = 0; i < 2 * MIXED; i += 2) {
        hl_free(own[i]);
        hl_free(other[i]);
    }
    CHECK("freed blocks of two heaps are untouched while they wait in a cache, a remote bin or a store",
          freed_intact(own, 0x3c) && freed_intact(other, 0xa5));
    CHECK("heap consistent with another heap's blocks in a remote bin", hl_check() == 0);
    /* the freeing thread's own mallocs never get the other heap's blocks */
    unsigned char *mine[MIXED];
    bool none_foreign = true;
    for (size_t i = 0; i < MIXED; i++) {
        mine[i] = hl_malloc(SIZE);
        REQUIRE("malloc", mine[i] != NULL);
        none_foreign = none_foreign && !is_freed_other((uintptr_t)mine[i]);
    }
    CHECK("a thread never hands out a block of another heap that it freed", none_foreign);
    for (size_t i = 0; i < MIXED; i++)
        hl_free(mine[i]);
    /* the thread's exit would send the rest home too; hl_trim drains the
     * stores into the bitmaps, writing nothing into the blocks */
    hl_trim();
    CHECK("after the drain, the blocks of both heaps are untouched", freed_intact(own, 0x3c) && freed_intact(other, 0xa5));
    pthread_create(&t, NULL, next_on_other_heap, NULL);
    pthread_join(t, NULL);
    size_t home = 0;
    for (size_t i = 0; i < MIXED; i++)
        home += is_freed_other(taken_back[i]);
    /* all but those still in the freeing thread's remote bin (less than
     * half a bin) went home */
    CHECK("blocks freed on another thread went home: the next thread of their heap gets them",
          home >= MIXED - TCACHE_REMOTE_SLACK);
    for (size_t i = 0; i < MIXED; i++)
        hl_free((void *)taken_back[i]);
    CHECK("heap consistent after the blocks went home", hl_check() == 0);
}

int main(void)
{
    static unsigned char *first[N], *again[N];
    for (size_t i = 0; i < N; i++) {
        first[i] = hl_malloc(SIZE);
        REQUIRE("malloc", first[i] != NULL);
        memset(first[i], (int)(i & 0xff), SIZE);
    }
    for (size_t i = N; i-- > 0;)
        hl_free(first[i]);
    CHECK("caches and stores consistent after the frees", hl_check() == 0);
    for (size_t i = 0; i < N; i++) {
        again[i] = hl_malloc(SIZE);
        REQUIRE("malloc again", again[i] != NULL);
    }
    uintptr_t a[N], b[N];
    for (size_t i = 0; i < N; i++) {
        a[i] = (uintptr_t)first[i];
        b[i] = (uintptr_t)again[i];
    }
    qsort(a, N, sizeof *a, cmp_ptr);
    qsort(b, N, sizeof *b, cmp_ptr);
    CHECK("the blocks handed out again are the blocks freed", memcmp(a, b, sizeof a) == 0);
    /* the same blocks, untouched since the program wrote them */
    CHECK("a block freed and handed out again holds what the program wrote", holds_pattern(first, N));
    for (size_t i = 0; i < N; i++)
        hl_free(again[i]);
    CHECK("hl_check clean at the end", hl_check() == 0);
    hl_stats_t after;
    hl_stats(&after);
    CHECK("stats balanced at the end", hl_stats_balanced(&after));
    mixed_heaps();
    return tu_finish();
}
