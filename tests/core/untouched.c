/* heaplab core test: the small path never writes into a free block. Thread
 * caches and stores hold entries (address and slot) rather than links
 * threaded through the blocks, so freeing a block, moving it between the
 * thread's cache and its heap's store, and handing it out again leave its
 * bytes as the program left them:
 *  - blocks written, freed (more than a cache holds, so most pass through
 *    the store) and allocated again come back holding what they held;
 *  - they are the same blocks;
 *  - the caches and stores they passed through stay consistent. */
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
    return tu_finish();
}
