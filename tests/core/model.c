/* heaplab core test: a random model. 150,000 operations (malloc, calloc,
 * realloc, aligned_alloc, free; 60,000 in a sanitizer build of the debug
 * test) over every path, sizes 0 .. 4 MiB, checked
 * against a separate record of the live blocks: no two live blocks overlap,
 * every byte written is still there when the block is freed or moved, and
 * hl_check() and hl_stats_balanced() hold every CHECK_EVERY operations
 * (with an hl_trim() every TRIM_EVERY). */
#include <stdint.h>
#include <string.h>

#include "heaplab.h"
#include "testutil.h"

#define SLOTS 2048
/* the release build checks every 5,000 operations; the debug build
 * (core_model_debug) every MODEL_CHECK_EVERY, set by its CMake target */
#ifndef MODEL_CHECK_EVERY
#define MODEL_CHECK_EVERY 5000
#endif
/* operations: fewer for the debug test in a sanitizer build (its CMake
 * target says) */
#ifndef MODEL_OPS
#define MODEL_OPS 150000
#endif
#define OPS MODEL_OPS
#define CHECK_EVERY MODEL_CHECK_EVERY
#define TRIM_EVERY 12500

struct rec {
    unsigned char *p;
    size_t size;
    unsigned char seed;
};

static struct rec live[SLOTS];

static size_t model_live_bytes(void)
{
    size_t bytes = 0;
    for (size_t i = 0; i < SLOTS; i++)
        if (live[i].p)
            bytes += live[i].size;
    return bytes;
}

/* log-uniform-ish: mostly small, some medium, a few large */
static size_t pick_size(uint64_t *rng)
{
    uint64_t r = tu_rand(rng);
    switch (r % 16) {
    case 0:
        return 0;
    case 1:
        return 300000 + (r >> 8) % (4u << 20); /* medium or large */
    case 2:
    case 3:
        return 32768 + (r >> 8) % 1000000; /* medium */
    default:
        return (size_t)1 << ((r >> 8) % 16) | ((r >> 20) % 64);
    }
}

static void fill(struct rec *r)
{
    /* write a pattern to the whole block; sparse for big blocks to keep the
     * test fast, but always the first and last bytes */
    size_t step = r->size > 65536 ? 4093 : 1;
    for (size_t i = 0; i < r->size; i += step)
        r->p[i] = (unsigned char)(r->seed + i);
    if (r->size)
        r->p[r->size - 1] = (unsigned char)(r->seed + r->size - 1);
}

static int intact(const struct rec *r, size_t upto)
{
    size_t step = r->size > 65536 ? 4093 : 1;
    for (size_t i = 0; i < upto && i < r->size; i += step)
        if (r->p[i] != (unsigned char)(r->seed + i))
            return 0;
    if (upto >= r->size && r->size && r->p[r->size - 1] != (unsigned char)(r->seed + r->size - 1))
        return 0;
    return 1;
}

static int cmp_rec(const void *a, const void *b)
{
    const struct rec *x = a, *y = b;
    return x->p < y->p ? -1 : x->p > y->p;
}

static int no_overlap(void)
{
    static struct rec sorted[SLOTS];
    size_t n = 0;
    for (size_t i = 0; i < SLOTS; i++)
        if (live[i].p)
            sorted[n++] = live[i];
    qsort(sorted, n, sizeof sorted[0], cmp_rec);
    for (size_t i = 1; i < n; i++) {
        size_t prev = sorted[i - 1].size ? sorted[i - 1].size : 1;
        if (sorted[i - 1].p + prev > sorted[i].p)
            return 0;
    }
    return 1;
}

int main(void)
{
    uint64_t rng = 0x9E3779B97F4A7C15ULL;
    size_t checks = 0;
    for (unsigned op = 1; op <= OPS; op++) {
        struct rec *r = &live[tu_rand(&rng) % SLOTS];
        unsigned kind = (unsigned)(tu_rand(&rng) % 10);
        if (r->p && kind < 5) {
            REQUIRE("bytes written are still there at free", intact(r, r->size));
            if (kind == 0)
                hl_free_sized(r->p, r->size);
            else
                hl_free(r->p);
            r->p = NULL;
        } else if (r->p) {
            size_t ns = pick_size(&rng);
            unsigned char *q = hl_realloc(r->p, ns);
            if (ns == 0) {
                REQUIRE("realloc(p, 0) returns NULL", q == NULL);
                r->p = NULL;
                continue;
            }
            REQUIRE("realloc succeeds", q != NULL);
            r->p = q;
            REQUIRE("realloc keeps the old bytes", intact(r, ns));
            r->size = ns;
            fill(r);
        } else {
            size_t size = pick_size(&rng);
            r->seed = (unsigned char)tu_rand(&rng);
            r->size = size;
            if (kind < 7) {
                r->p = hl_malloc(size);
            } else if (kind == 7) {
                r->p = hl_calloc(1, size);
                int zero = r->p != NULL;
                for (size_t i = 0; zero && i < size; i += (size > 65536 ? 4093 : 1))
                    zero = r->p[i] == 0;
                REQUIRE("calloc memory reads as zero", zero);
            } else {
                size_t align = (size_t)16 << (tu_rand(&rng) % 13); /* 16 B .. 64 KiB */
                r->p = hl_aligned_alloc(align, size);
                REQUIRE("aligned_alloc honours the alignment", ((uintptr_t)r->p & (align - 1)) == 0);
            }
            REQUIRE("allocation succeeds", r->p != NULL);
            REQUIRE("16-byte aligned", ((uintptr_t)r->p & 15) == 0);
            REQUIRE("usable size covers the request", hl_usable_size(r->p) >= size);
            fill(r);
        }
        /* now and then everything free goes back at once, so the checks
         * also see drained batches, purged pages and released spans */
        if (op % TRIM_EVERY == 0)
            hl_trim();
        if (op % CHECK_EVERY == 0) {
            hl_stats_t s;
            hl_stats(&s);
            REQUIRE("hl_check clean", hl_check() == 0);
            REQUIRE("stats balanced", hl_stats_balanced(&s));
            REQUIRE("stats live equals the model's live bytes", s.live == model_live_bytes());
            REQUIRE("no two live blocks overlap", no_overlap());
            checks++;
        }
    }
    size_t live_bytes = model_live_bytes();
    hl_stats_t s;
    hl_stats(&s);
    CHECK("stats live equals the model's live bytes", s.live == live_bytes);
    for (size_t i = 0; i < SLOTS; i++)
        if (live[i].p) {
            REQUIRE("bytes intact at the final free", intact(&live[i], live[i].size));
            hl_free(live[i].p);
        }
    hl_stats(&s);
    CHECK("every block freed: live is 0", s.live == 0);
    CHECK("hl_check clean at the end", hl_check() == 0);
    CHECK("stats balanced at the end", hl_stats_balanced(&s));
    /* REQUIRE stops at the first broken intermediate check, so each one that
     * ran held; none having run would prove nothing */
    CHECK("the intermediate checks ran", checks > 0);
    if (checks > 0)
        printf("ok   %zu intermediate checks passed\n", checks);
    return tu_finish();
}
