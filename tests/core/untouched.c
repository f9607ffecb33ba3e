/* heaplab core test: what the small path writes into a free block. Thread
 * caches and stores hold entries (address and slot) rather than links
 * threaded through the blocks, so freeing a block, moving it between the
 * thread's cache and its heap's store, and handing it out again leave its
 * bytes as the program left them:
 *  - blocks written, freed (more than a cache holds, so most pass through
 *    the store) and allocated again come back holding what they held;
 *  - they are the same blocks;
 *  - the caches and stores they passed through stay consistent.
 * One path writes: a block of another heap, met when a store or a flush is
 * emptied into bitmaps, is linked through its first 8 bytes until its own
 * heap's lock is taken (small.c, return_foreign). The second part frees
 * blocks of two heaps on one thread, drains the mixed store, and checks
 * that only those bytes of only those blocks changed. */
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
#define LINK_BYTES 8

static unsigned char *own[2 * MIXED], *other[2 * MIXED];

static void write_blocks(unsigned char **v, size_t n, unsigned char tag)
{
    for (size_t i = 0; i < n; i++) {
        v[i] = hl_malloc(SIZE);
        REQUIRE("malloc", v[i] != NULL);
        memset(v[i], (int)(tag ^ (unsigned char)i), SIZE);
    }
}

/* true when every freed block (even index) of v holds its pattern from
 * byte `from` on */
static bool freed_intact_from(unsigned char **v, unsigned char tag, size_t from)
{
    for (size_t i = 0; i < 2 * MIXED; i += 2)
        for (size_t k = from; k < SIZE; k++)
            if (v[i][k] != (unsigned char)(tag ^ (unsigned char)i))
                return false;
    return true;
}

/* another heap's thread: its blocks, written */
static void *other_heap(void *arg)
{
    (void)arg;
    write_blocks(other, 2 * MIXED, 0xa5);
    return NULL;
}

static void mixed_heaps(void)
{
    write_blocks(own, 2 * MIXED, 0x3c);
    pthread_t t;
    pthread_create(&t, NULL, other_heap, NULL);
    pthread_join(t, NULL);
    /* one thread frees blocks of both heaps, interleaved: its flushes go
     * to the store of its own heap, mixed */
    for (size_t i = 0; i < 2 * MIXED; i += 2) {
        hl_free(own[i]);
        hl_free(other[i]);
    }
    CHECK("freed blocks of two heaps are untouched while they wait in a cache or a store",
          freed_intact_from(own, 0x3c, 0) && freed_intact_from(other, 0xa5, 0));
    /* the mixed store is emptied into bitmaps: the other heap's blocks go
     * home through return_foreign */
    hl_trim();
    CHECK("after the drain, a block of the thread's own heap is untouched", freed_intact_from(own, 0x3c, 0));
    CHECK("after the drain, another heap's block is untouched past its first 8 bytes (the link)",
          freed_intact_from(other, 0xa5, LINK_BYTES));
    /* (so that this part cannot pass without reaching that path) */
    CHECK("the drain sent another heap's blocks home through their first 8 bytes",
          !freed_intact_from(other, 0xa5, 0));
    CHECK("heap consistent after the mixed drain", hl_check() == 0);
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
