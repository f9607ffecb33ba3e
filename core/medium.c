/* heaplab core: the medium heap (above SMALL_MAX, 8 KiB, up to MEDIUM_MAX, 1 MiB).
 *
 * Boundary tags in 4 MiB segments: every block starts with a tag holding its
 * size and the size of the block below it, so both neighbours are found in
 * constant time and a freed block merges with free neighbours at once (no two
 * free blocks are ever adjacent). Free blocks sit in segregated bins (4 per
 * doubling) with a bitmap of non-empty bins. Several arenas, each under its own
 * lock; a thread tries its own arena first, then the others with trylock.
 * Free blocks older than DECAY_MS give their whole interior OS pages back.
 *
 * A freed block is first kept whole in its arena's reuse cache, dozens per
 * bin, for a later request of nearly its size: that request then takes it
 * as it is, with its boundary tag where it already was. Splitting and
 * merging instead would write new tags at new offsets, and each new tag
 * touches a page the program may never touch (tmalloc-st-mixed: 2.5 times
 * mimalloc's page faults, and as many purges to give those pages back).
 * Decay merges cached blocks back into the heap once they have been cached
 * for the reuse grace, as it purges small spans; hl_trim at once.
 * In front of the arenas, each thread keeps a short stash of the blocks it
 * freed (medium_stash.c), taken back with no lock at all. */
#include "internal.h"

#include <errno.h>
#include <string.h>

#define MEDIUM_SEG_MAGIC 0x686561706d656469ULL /* "heapmedi" */
#define MEDIUM_TAG_MAGIC 0x6d656469756d7467ULL
#define MB_USED ((size_t)1)

/* The boundary tag at the start of every block. The user pointer follows it.
 * Invariants: size (without MB_USED) is a multiple of 16; prev_size equals
 * the size of the block just below (0 for the first block of a segment);
 * check == MEDIUM_TAG_MAGIC ^ address of the tag.
 * A thread reads some tags without an arena lock: its own live block's
 * (free validates it) and the two around it (a stashing free checks them
 * for an overrun; when they disagree, because the block below is being
 * merged or split, the arena's path checks again under the lock), while
 * neighbours' merges and splits rewrite them; and it writes its own
 * stashed block's request while stats read every request. So every tag
 * field is stored and loaded with relaxed atomics (plain moves on x86). */
struct mblock {
    size_t prev_size;
    size_t size_flags;
    size_t request; /* live: bytes asked for; free: 0 */
    uintptr_t check;
};
#define TAG_BYTES sizeof(struct mblock)
_Static_assert(TAG_BYTES % CORE_ALIGN == 0, "user data stays 16-byte aligned");

/* A free block: tag, then its list links (kept in its first bytes, which are
 * never purged). */
struct mfree {
    struct mblock tag;
    struct mfree *next, *prev;   /* bin list */
    struct mfree *dnext, *dprev; /* dirty list, newest first */
    uint64_t since_ms;
    uint32_t bin;
    uint32_t in_dirty;
};
#define MIN_FREE_BYTES ((sizeof(struct mfree) + CORE_ALIGN - 1) & ~(CORE_ALIGN - 1))
/* Splitting leaves a free remainder only when it is at least this big. */
#define MIN_SPLIT_BYTES ((size_t)256)
_Static_assert(MIN_SPLIT_BYTES >= MIN_FREE_BYTES, "a split remainder holds its links");

#define SEG_OS_PAGES (SEG_SIZE / OS_PAGE)
/* Segment header. purged: bit j set means OS page j was returned to the OS
 * (or never touched); such a page lies wholly inside one free block, past
 * its first MIN_FREE_BYTES. */
struct medium_seg {
    uint64_t magic;
    unsigned arena;
    struct medium_seg *next, *prev;
    uint64_t purged[SEG_OS_PAGES / 64];
};
#define HEAP_START ((sizeof(struct medium_seg) + 63) & ~(size_t)63)
#define HEAP_END (SEG_SIZE - TAG_BYTES) /* the sentinel tag sits here */
#define HEAP_BYTES (HEAP_END - HEAP_START)

/* Bins: 4 per doubling from 32 B up to the whole segment. */
#define BIN_SUB_BITS 2
#define NBINS 72
_Static_assert((SEG_SHIFT - 5 + 1) * 4 <= NBINS, "bins cover a segment");

/* The reuse cache: freed blocks kept whole. A cached block keeps MB_USED in
 * its tag (so no neighbour merges with it) and REUSE_MARK as its request
 * (so a second free of it is caught), but counts as free. A block in a
 * thread's stash has STASH_MARK instead and counts as used in its arena's
 * counters (its thread took it out without the lock) and as thread-cached
 * in the stats. No request comes near either mark. */
/* A program that frees and allocates blocks of many medium sizes needs
 * room for many of them (tmalloc-st-mixed: 5,000 live blocks of 8-400 KiB,
 * over some 20 bins); each cached block is resident in its first pages
 * only, unless the program wrote it whole, and then it is memory a block of
 * its size would have to fault in anyway. More per bin keeps more blocks
 * unmerged, so the heap fragments (tmalloc-st-medium, written whole: 64
 * per bin, 7% more RSS than 16; docs/core-development.md). Decay merges a
 * cached block back into the heap after the reuse grace, as a small span. */
#define REUSE_PER_BIN 48
#define REUSE_BYTES ((size_t)128 << 20) /* per arena */
/* The cache files a block under a finer bin than the heap's, 16 per
 * doubling: a request then finds a block that fits among the few of its own
 * size, and every block of the next finer bin up fits it (at most 1/16 of
 * its doubling apart, within the 1/MEDIUM_FIT_SLACK allowed). With the
 * heap's 4 per doubling, a malloc compared a request with dozens of cached
 * sizes (docs/core-development.md). The cap of
 * REUSE_PER_BIN still holds per heap bin: the 4 finer bins inside one share
 * it, so the cache keeps as many blocks of a size range as before. Every
 * medium block's size lies between 2^REUSE_MIN_SHIFT and 2^REUSE_MAX_SHIFT
 * (a medium request is above SMALL_MAX and at most MEDIUM_MAX; a block
 * keeps at most a remainder too small to split), checked below at build
 * time and by the debug tier; the validator, which reads sizes that may be
 * corrupted, checks before it computes a bin. */
#define REUSE_SUB_BITS 4
#define REUSE_MIN_SHIFT 13
#define REUSE_MAX_SHIFT 21
#define REUSE_BINS ((REUSE_MAX_SHIFT - REUSE_MIN_SHIFT) << REUSE_SUB_BITS)
#define REUSE_GROUP_SHIFT (REUSE_SUB_BITS - BIN_SUB_BITS)
#define REUSE_GROUPS (REUSE_BINS >> REUSE_GROUP_SHIFT)
_Static_assert((size_t)1 << REUSE_MIN_SHIFT <= SMALL_MAX + 1, "every block a medium malloc takes has a reuse bin");
_Static_assert(MEDIUM_MAX + TAG_BYTES + MIN_SPLIT_BYTES + CORE_ALIGN <= (size_t)1 << REUSE_MAX_SHIFT,
               "every medium block has a reuse bin");
#define REUSE_MARK SIZE_MAX
#define STASH_MARK (SIZE_MAX - 1)
_Static_assert(MEDIUM_ARENAS <= 32, "a 32-bit mask holds a set of arenas");
/* a medium block's size (a request up to MEDIUM_MAX, its tag, a remainder
 * too small to split off) fits the cache's 32-bit size field */
_Static_assert(MEDIUM_MAX + TAG_BYTES + MIN_SPLIT_BYTES + CORE_ALIGN <= UINT32_MAX, "reuse sizes fit 32 bits");

struct reuse_cache {
    struct mblock *blocks[REUSE_BINS][REUSE_PER_BIN];
    /* each block's size, so a search does not read the blocks' tags (a
     * cache miss per candidate) */
    uint32_t sizes[REUSE_BINS][REUSE_PER_BIN];
    uint64_t since_ms[REUSE_BINS][REUSE_PER_BIN];
    uint8_t count[REUSE_BINS];
    uint8_t group_count[REUSE_GROUPS]; /* the sum of count[] over a heap bin's finer bins */
    size_t bytes;
    /* at most the oldest since_ms: a drain that would find nothing old
     * enough is skipped without reading the entries */
    uint64_t oldest_ms;
};
_Static_assert(REUSE_PER_BIN <= UINT8_MAX, "a bin's count fits its byte");

/* Arena counters (under the arena lock):
 *   free_bytes   == sum of the sizes of free blocks, cached ones included
 *   purged_bytes == OS_PAGE * set purged bits over the arena's segments
 *   used_bytes   == sum of the sizes of live and stashed blocks (tags included)
 *   used_count   == their number
 *   reuse.bytes  == sum of the sizes of cached blocks
 * (live requests are counted from the tags alone: a thread changes its
 * stashed block's request without the lock) */
struct arena {
    core_mutex lock;
    struct mfree *bins[NBINS];
    uint64_t nonempty[(NBINS + 63) / 64];
    struct mfree *dirty, *dirty_tail;
    struct medium_seg *segs;
    size_t segments, free_bytes, purged_bytes, used_bytes, used_count;
    size_t allocs, frees;
    struct reuse_cache reuse;
    /* lane_note, for the decay budget: free_resident(), and of it the
     * bytes of the reuse cache */
    _Atomic size_t free_resident_lane, cached_lane;
    char pad[64];
};

static size_t free_resident(const struct arena *ar)
{
    return ar->free_bytes - ar->purged_bytes;
}

/* An arena's budget figures before a change (lock held) ... */
struct lanes_before {
    size_t free_resident, cached;
};

static struct lanes_before lanes_begin(const struct arena *ar)
{
    return (struct lanes_before){free_resident(ar), ar->reuse.bytes};
}

/* ... and the change published to its lanes, before the lock goes */
static void lanes_end(struct arena *ar, struct lanes_before before)
{
    lane_note(&ar->free_resident_lane, before.free_resident, free_resident(ar));
    lane_note(&ar->cached_lane, before.cached, ar->reuse.bytes);
}

static struct arena arenas[MEDIUM_ARENAS] = {
    [0 ... MEDIUM_ARENAS - 1] = {.lock = CORE_MUTEX_INIT},
};

static size_t tag_load(const size_t *field)
{
    return __atomic_load_n(field, __ATOMIC_RELAXED);
}
static void tag_store(size_t *field, size_t v)
{
    __atomic_store_n(field, v, __ATOMIC_RELAXED);
}
static size_t block_size(const struct mblock *b)
{
    return tag_load(&b->size_flags) & ~MB_USED;
}
static bool block_used(const struct mblock *b)
{
    return tag_load(&b->size_flags) & MB_USED;
}
static size_t block_prev_size(const struct mblock *b)
{
    return tag_load(&b->prev_size);
}
static size_t block_request(const struct mblock *b)
{
    return tag_load(&b->request);
}
static bool tag_genuine(const struct mblock *t)
{
    return tag_load(&t->check) == (MEDIUM_TAG_MAGIC ^ (uintptr_t)t);
}
static void set_size_flags(struct mblock *b, size_t size_flags)
{
    tag_store(&b->size_flags, size_flags);
}
static void set_request(struct mblock *b, size_t request)
{
    tag_store(&b->request, request);
}
static void set_prev_size(struct mblock *b, size_t prev_size)
{
    tag_store(&b->prev_size, prev_size);
}
static struct mblock *block_after(struct mblock *b)
{
    return (struct mblock *)((char *)b + block_size(b));
}
/* The boundary tags around block b agree: its size matches the next tag's
 * prev_size, the previous tag's size matches its prev_size, and a free
 * block has no free neighbour. */
static int block_is_valid(const struct mblock *b)
{
    const struct mblock *next = (const struct mblock *)((const char *)b + block_size(b));
    if (!tag_genuine(b) || block_prev_size(next) != block_size(b))
        return 0;
    if (block_prev_size(b)) {
        const struct mblock *prev = (const struct mblock *)((const char *)b - block_prev_size(b));
        if (block_size(prev) != block_prev_size(b) || (!block_used(b) && !block_used(prev)))
            return 0;
    }
    return block_used(b) || block_used(next);
}

static struct medium_seg *medium_seg_of(const void *p)
{
    return (struct medium_seg *)((uintptr_t)p & ~(uintptr_t)SEG_MASK);
}
static unsigned bin_of(size_t size)
{
    unsigned e = 63u - (unsigned)__builtin_clzl(size);
    unsigned m = (unsigned)(size >> (e - BIN_SUB_BITS)) & 3u;
    return (e - 5) * 4 + m;
}

/* ---- bins and dirty list ---------------------------------------------- */

static void bin_insert(struct arena *ar, struct mfree *f)
{
    /* mutant 3: a block put in the wrong bin */
    unsigned b = bin_of(block_size(&f->tag)) + (CORE_MUTANT(3) && bin_of(block_size(&f->tag)) + 1 < NBINS);
    f->bin = b;
    f->prev = NULL;
    f->next = ar->bins[b];
    if (f->next)
        f->next->prev = f;
    ar->bins[b] = f;
    ar->nonempty[b / 64] |= (uint64_t)1 << (b % 64);
}

static void bin_remove(struct arena *ar, struct mfree *f)
{
    if (f->prev)
        f->prev->next = f->next;
    else
        ar->bins[f->bin] = f->next;
    if (f->next)
        f->next->prev = f->prev;
    if (!ar->bins[f->bin])
        ar->nonempty[f->bin / 64] &= ~((uint64_t)1 << (f->bin % 64));
}

static void dirty_push(struct arena *ar, struct mfree *f, uint64_t now)
{
    f->since_ms = now;
    f->in_dirty = 1;
    f->dprev = NULL;
    f->dnext = ar->dirty;
    if (ar->dirty)
        ar->dirty->dprev = f;
    else
        ar->dirty_tail = f;
    ar->dirty = f;
}

/* As dirty_push, at the old end: for a block free since `since`, at least
 * as long as any purge pass waits (a cached block merged into the heap). */
static void dirty_append(struct arena *ar, struct mfree *f, uint64_t since)
{
    f->since_ms = since;
    f->in_dirty = 1;
    f->dnext = NULL;
    f->dprev = ar->dirty_tail;
    if (ar->dirty_tail)
        ar->dirty_tail->dnext = f;
    else
        ar->dirty = f;
    ar->dirty_tail = f;
}

static void dirty_remove(struct arena *ar, struct mfree *f)
{
    if (!f->in_dirty)
        return;
    if (f->dprev)
        f->dprev->dnext = f->dnext;
    else
        ar->dirty = f->dnext;
    if (f->dnext)
        f->dnext->dprev = f->dprev;
    else
        ar->dirty_tail = f->dprev;
    f->in_dirty = 0;
}

static void free_list_remove(struct arena *ar, struct mfree *f)
{
    bin_remove(ar, f);
    dirty_remove(ar, f);
}

/* ---- purged-page bookkeeping ------------------------------------------ */

/* [start, end) is being written or handed out: its OS pages are resident. */
static void touch_range(struct arena *ar, struct medium_seg *seg, uintptr_t start, uintptr_t end)
{
    size_t first = (start & SEG_MASK) >> OS_PAGE_SHIFT;
    size_t last = ((end - 1) & SEG_MASK) >> OS_PAGE_SHIFT;
    for (size_t j = first; j <= last; j++) {
        uint64_t bit = (uint64_t)1 << (j % 64);
        if (seg->purged[j / 64] & bit) {
            seg->purged[j / 64] &= ~bit;
            ar->purged_bytes -= OS_PAGE;
        }
    }
}

/* Marks the whole OS pages inside free block f past its links as purged
 * and, unless the block is fresh (batch NULL), adds them to `batch`, to be
 * given back before the arena lock goes. Returns bytes newly purged. */
static size_t purge_block(struct arena *ar, struct mfree *f, struct os_purge_batch *batch)
{
    struct medium_seg *seg = medium_seg_of(f);
    uintptr_t lo = ((uintptr_t)f + MIN_FREE_BYTES + OS_PAGE - 1) & ~(uintptr_t)(OS_PAGE - 1);
    uintptr_t hi = ((uintptr_t)f + block_size(&f->tag)) & ~(uintptr_t)(OS_PAGE - 1);
    size_t bytes = 0;
    uintptr_t run = 0;
    for (uintptr_t a = lo; a < hi; a += OS_PAGE) {
        size_t j = (a & SEG_MASK) >> OS_PAGE_SHIFT;
        uint64_t bit = (uint64_t)1 << (j % 64);
        bool already = seg->purged[j / 64] & bit;
        if (!already) {
            seg->purged[j / 64] |= bit;
            bytes += OS_PAGE;
            if (!run)
                run = a;
        }
        if ((already || a + OS_PAGE >= hi) && run) {
            uintptr_t end = already ? a : a + OS_PAGE;
            if (batch)
                purge_add(batch, (void *)run, end - run);
            run = 0;
        }
    }
    ar->purged_bytes += bytes;
    return bytes;
}

/* ---- segments ------------------------------------------------------------ */

static void write_tag(struct mblock *b, size_t prev_size, size_t size_flags, size_t request)
{
    set_prev_size(b, prev_size);
    set_size_flags(b, size_flags);
    set_request(b, request);
    tag_store(&b->check, MEDIUM_TAG_MAGIC ^ (uintptr_t)b);
}

static struct mfree *segment_new(struct arena *ar, unsigned index)
{
    struct medium_seg *seg = os_map_aligned(SEG_SIZE, SEG_SIZE, "heaplab-medium");
    if (!seg)
        return NULL;
    atomic_fetch_add_explicit(&core_os.map_count, 1, memory_order_relaxed);
    seg->magic = MEDIUM_SEG_MAGIC;
    seg->arena = index;
    seg->prev = NULL;
    seg->next = ar->segs;
    if (ar->segs)
        ar->segs->prev = seg;
    ar->segs = seg;
    ar->segments++;
    struct mfree *f = (struct mfree *)((char *)seg + HEAP_START);
    write_tag(&f->tag, 0, HEAP_BYTES, 0);
    write_tag((struct mblock *)((char *)seg + HEAP_END), HEAP_BYTES, TAG_BYTES | MB_USED, 0);
    f->in_dirty = 0;
    ar->free_bytes += HEAP_BYTES;
    bin_insert(ar, f);
    purge_block(ar, f, NULL);
    registry_set(seg, KIND_MEDIUM);
    return f;
}

static void segment_unmap(struct arena *ar, struct medium_seg *seg)
{
    struct mfree *f = (struct mfree *)((char *)seg + HEAP_START);
    free_list_remove(ar, f);
    for (size_t w = 0; w < SEG_OS_PAGES / 64; w++)
        ar->purged_bytes -= (size_t)__builtin_popcountll(seg->purged[w]) * OS_PAGE;
    ar->free_bytes -= HEAP_BYTES;
    if (seg->prev)
        seg->prev->next = seg->next;
    else
        ar->segs = seg->next;
    if (seg->next)
        seg->next->prev = seg->prev;
    ar->segments--;
    registry_set(seg, KIND_NONE);
    os_unmap(seg, SEG_SIZE);
    atomic_fetch_add_explicit(&core_os.unmap_count, 1, memory_order_relaxed);
}

/* ---- freeing ------------------------------------------------------------- */

/* The counters of a live block b that becomes free (lock held). */
static void count_freed(struct arena *ar, struct mblock *b)
{
    size_t size = block_size(b);
    ar->used_bytes -= size;
    ar->used_count--;
    /* mutant 1: a lost counter update */
    ar->free_bytes += CORE_MUTANT(1) ? 0 : size;
    ar->frees++;
}

/* Merges block b, already counted as free, with its free neighbours and
 * bins the result, which the caller puts on the dirty list (lock held). */
static struct mfree *merge_free(struct arena *ar, struct mblock *b)
{
    CORE_ASSERT(core_mutex_is_held(&ar->lock), "medium merge without the arena lock");
    size_t size = block_size(b);
    struct mblock *start = b;
    struct mblock *next = block_after(b);
    /* mutant 2: a skipped coalesce */
    if (!block_used(next) && !CORE_MUTANT(2)) {
        free_list_remove(ar, (struct mfree *)next);
        size += block_size(next);
    }
    if (block_prev_size(b)) {
        struct mblock *prev = (struct mblock *)((char *)b - block_prev_size(b));
        if (!block_used(prev)) {
            free_list_remove(ar, (struct mfree *)prev);
            size += block_size(prev);
            start = prev;
        }
    }
    struct mfree *f = (struct mfree *)start;
    write_tag(&f->tag, block_prev_size(start), size, 0);
    set_prev_size(block_after(&f->tag), size);
    /* the freed block's own tag stays behind, marked free, so a second free
     * of the same pointer is still caught */
    if (start != b)
        set_size_flags(b, block_size(b));
    bin_insert(ar, f);
    CORE_ASSERT(block_is_valid(&f->tag), "medium tags inconsistent after a free");
    return f;
}

/* The counters of a free block b that becomes live with `request` (lock
 * held); the mirror of count_freed. */
static void count_taken(struct arena *ar, struct mblock *b, size_t request)
{
    size_t size = block_size(b);
    set_request(b, request);
    ar->free_bytes -= size;
    ar->used_bytes += size;
    ar->used_count++;
    ar->allocs++;
}

/* Frees live block b (lock held): merges with free neighbours, bins the result. */
static void release_block(struct arena *ar, struct mblock *b, uint64_t now)
{
    count_freed(ar, b);
    dirty_push(ar, merge_free(ar, b), now);
}

/* ---- the reuse cache ------------------------------------------------------- */

/* the cache's bin of a block of `size` bytes (2^REUSE_MIN_SHIFT <= size <
 * 2^REUSE_MAX_SHIFT) */
static unsigned reuse_bin_of(size_t size)
{
    unsigned e = 63u - (unsigned)__builtin_clzl(size);
    unsigned m = (unsigned)(size >> (e - REUSE_SUB_BITS)) & ((1u << REUSE_SUB_BITS) - 1);
    return ((e - REUSE_MIN_SHIFT) << REUSE_SUB_BITS) + m;
}

static void reuse_remove(struct reuse_cache *rc, unsigned k, unsigned i)
{
    rc->group_count[k >> REUSE_GROUP_SHIFT]--;
    unsigned last = --rc->count[k];
    rc->blocks[k][i] = rc->blocks[k][last];
    rc->sizes[k][i] = rc->sizes[k][last];
    rc->since_ms[k][i] = rc->since_ms[k][last];
}

/* Keeps freed live block b whole for reuse; false when its bin or the
 * arena's cache is full (lock held). */
static bool reuse_put(struct arena *ar, struct mblock *b, uint64_t now)
{
    CORE_ASSERT(core_mutex_is_held(&ar->lock), "medium reuse cache changed without the arena lock");
    struct reuse_cache *rc = &ar->reuse;
    size_t size = block_size(b);
    CORE_ASSERT(!(size >> REUSE_MAX_SHIFT) && size >> REUSE_MIN_SHIFT, "medium block size outside the reuse bins");
    unsigned k = reuse_bin_of(size);
    if (rc->group_count[k >> REUSE_GROUP_SHIFT] == REUSE_PER_BIN || rc->bytes + size > REUSE_BYTES)
        return false;
    count_freed(ar, b);
    set_request(b, REUSE_MARK);
    if (rc->bytes == 0 || now < rc->oldest_ms)
        rc->oldest_ms = now;
    rc->blocks[k][rc->count[k]] = b;
    rc->sizes[k][rc->count[k]] = (uint32_t)size;
    rc->since_ms[k][rc->count[k]] = now;
    rc->count[k]++;
    rc->group_count[k >> REUSE_GROUP_SHIFT]++;
    rc->bytes += size;
    return true;
}

/* A cached block of `need` bytes or at most 1/MEDIUM_FIT_SLACK more, now live
 * with `request`; NULL when none (lock held). */
static struct mblock *reuse_take(struct arena *ar, size_t need, size_t request)
{
    CORE_ASSERT(core_mutex_is_held(&ar->lock), "medium reuse cache read without the arena lock");
    struct reuse_cache *rc = &ar->reuse;
    CORE_ASSERT(!(need >> REUSE_MAX_SHIFT) && need >> REUSE_MIN_SHIFT, "medium request outside the reuse bins");
    unsigned first = reuse_bin_of(need);
    uint32_t want = (uint32_t)need, slack = (uint32_t)(need / MEDIUM_FIT_SLACK);
    /* In need's bin a block fits when it is not smaller than need; every
     * block of the next bin fits (bigger than need by less than 1/8 of
     * need's doubling); the three bins after that reach up to 1/4 of the
     * doubling above need, as far as 1/MEDIUM_FIT_SLACK can. The lowest bin
     * first, for the tightest fit (taking the next bin's newest at once
     * costs peak RSS: docs/core-development.md), and in a bin the newest
     * that fits (the highest index). */
    unsigned last = first + 4 < REUSE_BINS ? first + 4 : REUSE_BINS - 1;
    for (unsigned k = first; k <= last; k++) {
        for (unsigned i = rc->count[k]; i-- > 0;) {
            if (rc->sizes[k][i] - want > slack)
                continue;
            struct mblock *b = rc->blocks[k][i];
            rc->bytes -= rc->sizes[k][i];
            reuse_remove(rc, k, i);
            count_taken(ar, b, request);
            return b;
        }
    }
    return NULL;
}

/* Merges the cached blocks older than age_ms (0: all) back into the heap,
 * at the old end of the dirty list with the time they were cached, so the
 * purge pass that drains them can give them back (lock held). */
static void reuse_drain(struct arena *ar, uint64_t now_ms, uint64_t age_ms)
{
    struct reuse_cache *rc = &ar->reuse;
    if (rc->bytes == 0 || (age_ms != 0 && now_ms - rc->oldest_ms < age_ms))
        return;
    uint64_t oldest = UINT64_MAX;
    for (unsigned k = 0; k < REUSE_BINS && rc->bytes; k++) {
        for (unsigned i = rc->count[k]; i-- > 0;) {
            uint64_t since = rc->since_ms[k][i];
            if (age_ms != 0 && now_ms - since < age_ms) {
                oldest = since < oldest ? since : oldest;
                continue;
            }
            struct mblock *b = rc->blocks[k][i];
            reuse_remove(rc, k, i);
            rc->bytes -= block_size(b);
            set_request(b, 0);
            dirty_append(ar, merge_free(ar, b), since);
        }
    }
    rc->oldest_ms = oldest;
}

/* ---- allocation ---------------------------------------------------------- */

#define BIN_SCAN_LIMIT 8

static struct mfree *find_fit(struct arena *ar, size_t need)
{
    unsigned b = bin_of(need);
    unsigned tries = 0;
    for (struct mfree *f = ar->bins[b]; f && tries < BIN_SCAN_LIMIT; f = f->next, tries++)
        if (block_size(&f->tag) >= need)
            return f;
    /* any block of a higher bin is big enough */
    for (unsigned i = b + 1; i < NBINS;) {
        uint64_t w = ar->nonempty[i / 64] >> (i % 64);
        if (w)
            return ar->bins[i + (unsigned)__builtin_ctzll(w)];
        i = (i / 64 + 1) * 64;
    }
    return NULL;
}

/* Takes `need` bytes from the front of free block f (removed from lists). */
static struct mblock *carve(struct arena *ar, struct mfree *f, size_t need, size_t request)
{
    CORE_ASSERT(core_mutex_is_held(&ar->lock) && !block_used(&f->tag) && block_size(&f->tag) >= need,
                "medium carve without the arena lock, or from a block that is not free and big enough");
    struct medium_seg *seg = medium_seg_of(f);
    size_t size = block_size(&f->tag);
    bool was_dirty = f->in_dirty;
    uint64_t since = f->since_ms;
    free_list_remove(ar, f);
    if (size - need >= MIN_SPLIT_BYTES) {
        struct mfree *rem = (struct mfree *)((char *)f + need);
        touch_range(ar, seg, (uintptr_t)rem, (uintptr_t)rem + MIN_FREE_BYTES);
        write_tag(&rem->tag, need, size - need, 0);
        set_prev_size(block_after(&rem->tag), size - need);
        rem->in_dirty = 0;
        bin_insert(ar, rem);
        if (was_dirty)
            dirty_push(ar, rem, since);
        size = need;
    }
    struct mblock *b = &f->tag;
    touch_range(ar, seg, (uintptr_t)b, (uintptr_t)b + size);
    set_size_flags(b, size | MB_USED);
    count_taken(ar, b, request);
    CORE_ASSERT(block_is_valid(b), "medium tags inconsistent after a split");
    return b;
}

static struct arena *lock_some_arena(unsigned *index)
{
    unsigned home = core_tc.arena % MEDIUM_ARENAS;
    for (unsigned i = 0; i < MEDIUM_ARENAS; i++) {
        unsigned k = (home + i) % MEDIUM_ARENAS;
        if (core_mutex_trylock(&arenas[k].lock)) {
            *index = k;
            return &arenas[k];
        }
    }
    core_mutex_lock(&arenas[home].lock);
    *index = home;
    return &arenas[home];
}

/* A block of the calling thread's stash for a request of `size` bytes
 * (`need` with its tag), now live; NULL when none fits. */
static struct mblock *stash_take(size_t need, size_t size)
{
    if (need > MEDIUM_STASH_BLOCK_MAX)
        return NULL;
    struct medium_stash *st = tcache_medium_stash();
    struct mblock *b = st ? medium_stash_take(st, need) : NULL;
    if (!b)
        return NULL;
    set_request(b, size);
    OWNER_ADD(st->reuses, 1);
    return b;
}

/* A block of `need` bytes from an arena, now live with `request`; NULL
 * when the system has no memory for a new segment. */
static struct mblock *arena_take(size_t need, size_t request)
{
    unsigned index;
    struct arena *ar = lock_some_arena(&index);
    struct lanes_before before = lanes_begin(ar);
    struct mblock *b = reuse_take(ar, need, request);
    if (!b) {
        struct mfree *f = find_fit(ar, need);
        if (!f)
            f = segment_new(ar, index);
        if (f)
            b = carve(ar, f, need, request);
    }
    lanes_end(ar, before);
    CORE_ASSERT_EXPENSIVE(arena_validate(index) == 0, "medium arena invalid after a malloc");
    core_mutex_unlock(&ar->lock);
    return b;
}

void *medium_malloc(size_t size)
{
    CORE_ASSERT(size > SMALL_MAX && size <= MEDIUM_MAX, "medium malloc of a size outside the medium range");
    size_t need = (size + TAG_BYTES + CORE_ALIGN - 1) & ~(size_t)(CORE_ALIGN - 1);
    struct mblock *b = stash_take(need, size);
    if (!b && !(b = arena_take(need, size))) {
        errno = ENOMEM;
        return NULL;
    }
    tcache_note_live((intptr_t)size);
    decay_tick(&core_tc.slow_events);
    return (char *)b + TAG_BYTES;
}

/* ---- free ------------------------------------------------------------------ */

/* aborts naming `what` unless p is a live medium block */
static void medium_validate(void *p, const char *what)
{
    uintptr_t a = (uintptr_t)p;
    size_t off = a & SEG_MASK;
    if ((a & (CORE_ALIGN - 1)) || off < HEAP_START + TAG_BYTES || off >= HEAP_END)
        core_fail_pointer(what, p);
    struct mblock *b = (struct mblock *)(a - TAG_BYTES);
    /* a block in the reuse cache or a stash is free, though its tag says used */
    _Static_assert(REUSE_MARK >= STASH_MARK, "one comparison finds both marks");
    if (!tag_genuine(b) || !block_used(b) || block_request(b) >= STASH_MARK)
        core_fail_pointer(what, p);
}

size_t medium_usable(void *p, const char *what)
{
    medium_validate(p, what);
    struct mblock *b = (struct mblock *)((char *)p - TAG_BYTES);
    return block_size(b) - TAG_BYTES;
}

static CORE_NOINLINE _Noreturn void fail_tags(struct mblock *b, bool after, bool in_realloc)
{
    static const char *const what[2][2] = {
        {"free(): corrupted boundary tag of block", "free(): corrupted boundary tag after block"},
        {"realloc(): corrupted boundary tag of block", "realloc(): corrupted boundary tag after block"},
    };
    core_fail_pointer(what[in_realloc][after], (char *)b + TAG_BYTES);
}

/* Before free or realloc relies on the tags around live block b: b's size
 * stays inside its segment, the tag after b is a tag that gives b's size
 * as its prev_size, and the tag below b (there is one exactly when b is
 * not the segment's first block) gives b's prev_size as its size. A write
 * past the end of a block reaches the next tag's prev_size first, so an
 * overrun by even one byte ends the program here, naming the block,
 * instead of a merge trusting a size that is not there. Each size is
 * checked to stay inside the segment and to be a multiple of 16 before a
 * tag is read through it (a corrupted one must not fault or read a
 * misaligned tag). */
static bool tag_after_ok(const struct mblock *b)
{
    uintptr_t at = (uintptr_t)b;
    size_t off = at & SEG_MASK;
    size_t size = block_size(b);
    const struct mblock *next = (const struct mblock *)(at + size);
    return CORE_LIKELY(size - 1 < HEAP_END - off && !(size & (CORE_ALIGN - 1)) && tag_genuine(next) &&
                       block_prev_size(next) == size);
}

static bool tag_below_ok(const struct mblock *b)
{
    uintptr_t at = (uintptr_t)b;
    size_t off = at & SEG_MASK;
    size_t below = block_prev_size(b);
    if (off == HEAP_START)
        return CORE_LIKELY(below == 0);
    const struct mblock *prev = (const struct mblock *)(at - below);
    return CORE_LIKELY(below - 1 < off - HEAP_START && !(below & (CORE_ALIGN - 1)) && tag_genuine(prev) &&
                       block_size(prev) == below);
}

/* Both checks, with the arena lock held (neighbours rewrite b's prev_size
 * and the tag below it under the lock): a failure is a corrupted tag. */
static inline void check_neighbour_tags(struct mblock *b, bool in_realloc)
{
    if (!tag_after_ok(b))
        fail_tags(b, true, in_realloc);
    if (!tag_below_ok(b))
        fail_tags(b, false, in_realloc);
}

/* Keeps live block b in the calling thread's stash; false when it does
 * not cache, b is too big, or a tag around b looks broken. */
static bool stash_put(struct mblock *b)
{
    size_t size = block_size(b);
    if (size > MEDIUM_STASH_BLOCK_MAX)
        return false;
    struct medium_stash *st = tcache_medium_stash();
    if (!st)
        return false;
    /* Without the lock the tag after b cannot change (while b is live, a
     * merge of the next block rewrites it with the same values), but the
     * block below may be merging or splitting, which moves the tag below:
     * a check that fails here is made again, authoritatively, under the
     * lock on the arena's path. */
    if (!tag_after_ok(b) || !tag_below_ok(b))
        return false;
    set_request(b, STASH_MARK);
    medium_stash_put(st, b, size);
    return true;
}

/* Frees live or stashed block b into arena ar (its lock held): the tags
 * around b checked first, then b kept whole for reuse, or merged. */
static void free_locked(struct arena *ar, struct mblock *b, bool in_realloc, uint64_t now)
{
    check_neighbour_tags(b, in_realloc);
    if (!reuse_put(ar, b, now))
        release_block(ar, b, now);
}

void medium_unstash(void *const *blocks, unsigned n)
{
    CORE_ASSERT(n <= MEDIUM_STASH_BLOCKS, "more blocks given back than a stash holds");
    uint64_t now = atomic_load_explicit(&core_clock_ms, memory_order_relaxed);
    /* Each block's arena is read before any block goes back: once a pass
     * has given its arena's blocks back, another thread's purge may unmap
     * their segment, so later passes must not read it again. */
    uint8_t arena_of[MEDIUM_STASH_BLOCKS];
    unsigned pending = 0;
    for (unsigned i = 0; i < n; i++) {
        arena_of[i] = (uint8_t)medium_seg_of(blocks[i])->arena;
        pending |= 1u << arena_of[i];
    }
    /* one pass per arena among the blocks, under its lock */
    while (pending) {
        unsigned index = (unsigned)__builtin_ctz(pending);
        pending &= pending - 1;
        struct arena *ar = &arenas[index];
        core_mutex_lock(&ar->lock);
        struct lanes_before before = lanes_begin(ar);
        for (unsigned i = 0; i < n; i++) {
            if (arena_of[i] == index)
                free_locked(ar, blocks[i], false, now);
        }
        lanes_end(ar, before);
        CORE_ASSERT_EXPENSIVE(arena_validate(index) == 0, "medium arena invalid after stashed blocks came back");
        core_mutex_unlock(&ar->lock);
    }
}

void medium_free(void *p, bool in_realloc)
{
    medium_validate(p, in_realloc ? CORE_INVALID_REALLOC : CORE_INVALID_FREE);
    struct mblock *b = (struct mblock *)((char *)p - TAG_BYTES);
    size_t request = block_request(b);
    if (!stash_put(b)) {
        unsigned index = medium_seg_of(b)->arena;
        struct arena *ar = &arenas[index];
        uint64_t now = atomic_load_explicit(&core_clock_ms, memory_order_relaxed);
        core_mutex_lock(&ar->lock);
        struct lanes_before before = lanes_begin(ar);
        free_locked(ar, b, in_realloc, now);
        lanes_end(ar, before);
        CORE_ASSERT_EXPENSIVE(arena_validate(index) == 0, "medium arena invalid after a free");
        core_mutex_unlock(&ar->lock);
    }
    tcache_note_live(-(intptr_t)request);
    decay_tick(&core_tc.slow_events);
}

void medium_realloc_check_tags(void *p)
{
    struct mblock *b = (struct mblock *)((char *)p - TAG_BYTES);
    struct arena *ar = &arenas[medium_seg_of(b)->arena];
    core_mutex_lock(&ar->lock);
    check_neighbour_tags(b, true);
    core_mutex_unlock(&ar->lock);
}

int medium_resize_inplace(void *p, size_t size)
{
    struct mblock *b = (struct mblock *)((char *)p - TAG_BYTES);
    unsigned index = medium_seg_of(b)->arena;
    struct arena *ar = &arenas[index];
    size_t need = (size + TAG_BYTES + CORE_ALIGN - 1) & ~(size_t)(CORE_ALIGN - 1);
    int rc = -1;
    core_mutex_lock(&ar->lock);
    check_neighbour_tags(b, true);
    struct lanes_before before = lanes_begin(ar);
    size_t cur = block_size(b);
    size_t old_request = block_request(b);
    if (need <= cur) {
        /* shrink: only when it frees something worth keeping */
        if (cur - need >= MIN_SPLIT_BYTES && cur - need >= cur / 4) {
            struct mblock *tail = (struct mblock *)((char *)b + need);
            write_tag(tail, need, (cur - need) | MB_USED, 0);
            set_prev_size(block_after(tail), cur - need);
            set_size_flags(b, need | MB_USED);
            ar->used_count++;
            release_block(ar, tail, atomic_load_explicit(&core_clock_ms, memory_order_relaxed));
            ar->frees--;
        }
        rc = 0;
    } else {
        struct mblock *next = block_after(b);
        if (!block_used(next) && cur + block_size(next) >= need) {
            size_t extra = need - cur;
            struct mfree *f = (struct mfree *)next;
            /* carve the front of the neighbour, then absorb it */
            struct mblock *got = carve(ar, f, extra < MIN_FREE_BYTES ? MIN_FREE_BYTES : extra, 0);
            size_t got_size = block_size(got);
            ar->used_count--;
            ar->allocs--;
            set_size_flags(b, (cur + got_size) | MB_USED);
            set_prev_size(block_after(b), cur + got_size);
            rc = 0;
        }
    }
    if (rc == 0)
        set_request(b, size);
    lanes_end(ar, before);
    CORE_ASSERT_EXPENSIVE(arena_validate(index) == 0, "medium arena invalid after a resize");
    core_mutex_unlock(&ar->lock);
    if (rc == 0)
        tcache_note_live((intptr_t)(size - old_request));
    return rc;
}

/* ---- decay ------------------------------------------------------------------ */

static void consume(size_t *excess, size_t bytes)
{
    if (excess)
        *excess -= bytes < *excess ? bytes : *excess;
}

size_t medium_purge(uint64_t now_ms, uint64_t cached_age_ms, uint64_t age_ms, bool try, size_t *excess)
{
    size_t released = 0;
    for (unsigned i = 0; i < MEDIUM_ARENAS; i++) {
        struct arena *ar = &arenas[i];
        if (try) {
            if (!core_mutex_trylock(&ar->lock))
                continue;
        } else {
            core_mutex_lock(&ar->lock);
        }
        struct lanes_before before = lanes_begin(ar);
        reuse_drain(ar, now_ms, cached_age_ms);
        /* the pass's ranges go back before the lock goes (no block of
         * them can be handed out until then; in one call while other
         * threads run: purge_batch_init) */
        struct os_purge_batch batch;
        purge_batch_init(&batch);
        struct mfree *f = ar->dirty_tail;
        while (f && (age_ms == 0 || now_ms - f->since_ms >= age_ms) && (!excess || *excess > 0)) {
            struct mfree *newer = f->dprev;
            dirty_remove(ar, f);
            size_t bytes = purge_block(ar, f, &batch);
            released += bytes;
            consume(excess, bytes);
            struct medium_seg *seg = medium_seg_of(f);
            /* an empty segment goes back whole, unless it is the last one;
             * its ranges in the batch first, while the addresses are
             * still the arena's */
            if ((char *)f == (char *)seg + HEAP_START && block_size(&f->tag) == HEAP_BYTES && ar->segments > 1) {
                purge_flush(&batch);
                segment_unmap(ar, seg);
                released += SEG_SIZE;
            }
            f = newer;
        }
        purge_flush(&batch);
        lanes_end(ar, before);
        CORE_ASSERT_EXPENSIVE(arena_validate(i) == 0, "medium arena invalid after a purge");
        core_mutex_unlock(&ar->lock);
    }
    return released;
}

size_t medium_free_resident(void)
{
    size_t sum = 0;
    for (unsigned i = 0; i < MEDIUM_ARENAS; i++)
        sum += atomic_load_explicit(&arenas[i].free_resident_lane, memory_order_relaxed);
    return sum;
}

size_t medium_cached_bytes(void)
{
    size_t sum = 0;
    for (unsigned i = 0; i < MEDIUM_ARENAS; i++)
        sum += atomic_load_explicit(&arenas[i].cached_lane, memory_order_relaxed);
    return sum;
}

void medium_lock_all(void)
{
    for (unsigned i = 0; i < MEDIUM_ARENAS; i++)
        core_mutex_lock(&arenas[i].lock);
}

void medium_unlock_all(void)
{
    for (unsigned i = 0; i < MEDIUM_ARENAS; i++)
        core_mutex_unlock(&arenas[i].lock);
}

/* ---- accounting and checking (all arena locks held) ------------------------ */

/* The states of one segment's blocks from their tags: live requests, the
 * rounding of live blocks, their count, the stashed blocks and their
 * bytes, and the purged bytes of the segment's mask. */
struct medium_census {
    size_t live, rounding, live_blocks, stashed, stashed_bytes, purged, segments;
};

static void census_segment(const struct medium_seg *seg, struct medium_census *c)
{
    const struct mblock *b = (const struct mblock *)((const char *)seg + HEAP_START);
    const struct mblock *end = (const struct mblock *)((const char *)seg + HEAP_END);
    /* (a size that does not move the walk forward would never end it: the
     * stats are then off, and hl_check names the tag) */
    while (b < end && block_size(b) >= MIN_FREE_BYTES) {
        size_t request = block_used(b) ? block_request(b) : REUSE_MARK;
        if (request == STASH_MARK) {
            c->stashed++;
            c->stashed_bytes += block_size(b) - TAG_BYTES;
        } else if (request != REUSE_MARK) {
            c->live += request;
            c->rounding += block_size(b) - TAG_BYTES - request;
            c->live_blocks++;
        }
        b = (const struct mblock *)((const char *)b + block_size(b));
    }
    for (size_t w = 0; w < SEG_OS_PAGES / 64; w++)
        c->purged += (size_t)__builtin_popcountll(seg->purged[w]) * OS_PAGE;
    c->segments++;
}

/* Live, rounding and stashed (thread-cached) from the tags, free from the
 * arena's counters, untouched from the segments' masks (see stats.c). A
 * stashed block was freed; the mallocs that took blocks from stashes are
 * counted by the threads (stats.c). */
void medium_stats(hl_stats_t *s)
{
    for (unsigned i = 0; i < MEDIUM_ARENAS; i++) {
        struct arena *ar = &arenas[i];
        struct medium_census c = {0};
        for (const struct medium_seg *seg = ar->segs; seg; seg = seg->next)
            census_segment(seg, &c);
        s->mapped += ar->segments * SEG_SIZE;
        s->metadata += c.segments * (HEAP_START + TAG_BYTES) + (c.live_blocks + c.stashed) * TAG_BYTES;
        s->live += c.live;
        s->rounding += c.rounding;
        s->tcache += c.stashed_bytes;
        s->free_count += c.stashed;
        s->medium_free += ar->free_bytes - ar->purged_bytes;
        s->untouched += c.purged;
        s->alloc_count += ar->allocs;
        s->free_count += ar->frees;
    }
}

static int check_segment(struct arena *ar, struct medium_seg *seg, size_t *free_b, size_t *used_b, size_t *used_n,
                         size_t *purged, size_t *free_n, size_t *cached_b, size_t *cached_n)
{
    int bad = 0;
    if (seg->magic != MEDIUM_SEG_MAGIC || registry_kind((uintptr_t)seg) != KIND_MEDIUM) {
        core_report("medium segment header or registry entry broken", (uintptr_t)seg);
        return 1;
    }
    struct mblock *b = (struct mblock *)((char *)seg + HEAP_START);
    struct mblock *end = (struct mblock *)((char *)seg + HEAP_END);
    size_t prev_size = 0;
    bool prev_free = false;
    while (b < end) {
        size_t size = block_size(b);
        if (!tag_genuine(b) || size < MIN_FREE_BYTES || size % CORE_ALIGN ||
            (char *)b + size > (char *)end) {
            core_report("medium boundary tag corrupt", (uintptr_t)b);
            return bad + 1;
        }
        if (block_prev_size(b) != prev_size || !block_is_valid(b)) {
            core_report("medium footer (prev_size) disagrees with the block below", (uintptr_t)b);
            bad++;
        }
        size_t request = block_used(b) ? block_request(b) : 0;
        if (request == REUSE_MARK) {
            /* in the reuse cache: free, kept whole */
            *free_b += size;
            *cached_b += size;
            (*cached_n)++;
            prev_free = false;
        } else if (block_used(b)) {
            /* live, or in a stash */
            *used_b += size;
            (*used_n)++;
            if (request != STASH_MARK && request + TAG_BYTES > size) {
                core_report("medium block smaller than its request", (uintptr_t)b);
                bad++;
            }
            prev_free = false;
        } else {
            struct mfree *f = (struct mfree *)b;
            *free_b += size;
            (*free_n)++;
            if (prev_free) {
                core_report("two adjacent free medium blocks", (uintptr_t)b);
                bad++;
            }
            if (f->bin != bin_of(size) || !(ar->nonempty[f->bin / 64] & ((uint64_t)1 << (f->bin % 64)))) {
                core_report("medium free block in the wrong bin, or bin bitmap clear", (uintptr_t)b);
                bad++;
            }
            prev_free = true;
        }
        /* purged pages must lie inside a free block, past its links */
        uintptr_t lo = (uintptr_t)b, hi = lo + size;
        for (uintptr_t a = lo & ~(uintptr_t)(OS_PAGE - 1); a < hi; a += OS_PAGE) {
            size_t j = (a & SEG_MASK) >> OS_PAGE_SHIFT;
            if (!(seg->purged[j / 64] & ((uint64_t)1 << (j % 64))))
                continue;
            if (block_used(b) || a < lo + MIN_FREE_BYTES || a + OS_PAGE > hi) {
                core_report("purged OS page overlaps a live block or free-block links", a);
                bad++;
                break;
            }
        }
        prev_size = size;
        b = (struct mblock *)((char *)b + size);
    }
    if (b != end || block_prev_size(end) != prev_size || tag_load(&end->size_flags) != (TAG_BYTES | MB_USED)) {
        core_report("medium sentinel broken", (uintptr_t)end);
        bad++;
    }
    for (size_t w = 0; w < SEG_OS_PAGES / 64; w++)
        *purged += (size_t)__builtin_popcountll(seg->purged[w]) * OS_PAGE;
    return bad;
}

int arena_validate(unsigned i)
{
    int bad = 0;
    struct arena *ar = &arenas[i];
    size_t free_b = 0, used_b = 0, used_n = 0, purged = 0, free_n = 0, nseg = 0;
    size_t cached_b = 0, cached_n = 0;
    for (struct medium_seg *seg = ar->segs; seg; seg = seg->next, nseg++) {
        if (seg->arena != i) {
            core_report("medium segment listed in the wrong arena", (uintptr_t)seg);
            bad++;
        }
        bad += check_segment(ar, seg, &free_b, &used_b, &used_n, &purged, &free_n, &cached_b, &cached_n);
    }
    /* every block marked cached is in the reuse cache, in its bin */
    size_t listed_b = 0, listed_n = 0;
    unsigned group_count[REUSE_GROUPS] = {0};
    for (unsigned k = 0; k < REUSE_BINS; k++) {
        group_count[k >> REUSE_GROUP_SHIFT] += ar->reuse.count[k];
        for (unsigned e = 0; e < ar->reuse.count[k]; e++) {
            struct mblock *b = ar->reuse.blocks[k][e];
            size_t size = block_size(b);
            listed_b += size;
            listed_n++;
            if (block_request(b) != REUSE_MARK || !block_used(b) || size >> REUSE_MAX_SHIFT ||
                !(size >> REUSE_MIN_SHIFT) || reuse_bin_of(size) != k ||
                ar->reuse.sizes[k][e] != size) {
                core_report("medium reuse cache holds a block not marked cached, in the wrong bin or with the wrong size", (uintptr_t)b);
                bad++;
            }
        }
    }
    for (unsigned g = 0; g < REUSE_GROUPS; g++) {
        if (group_count[g] != ar->reuse.group_count[g] || group_count[g] > REUSE_PER_BIN) {
            core_report("medium reuse cache's count per heap bin is wrong", g);
            bad++;
        }
    }
    if (listed_n != cached_n || listed_b != cached_b || listed_b != ar->reuse.bytes) {
        core_report("medium reuse cache disagrees with the blocks marked cached", listed_n);
        bad++;
    }
    size_t binned = 0;
    for (unsigned bi = 0; bi < NBINS; bi++) {
        bool has = ar->nonempty[bi / 64] & ((uint64_t)1 << (bi % 64));
        if (has != (ar->bins[bi] != NULL)) {
            core_report("medium bin bitmap disagrees with bin", bi);
            bad++;
        }
        for (struct mfree *f = ar->bins[bi]; f; f = f->next) {
            binned++;
            if (block_used(&f->tag) || f->bin != bi) {
                core_report("medium bin holds a used or misfiled block", (uintptr_t)f);
                bad++;
                break;
            }
        }
    }
    if (binned != free_n) {
        core_report("medium free blocks not all in bins", binned);
        bad++;
    }
    if (nseg != ar->segments || free_b != ar->free_bytes || used_b != ar->used_bytes || used_n != ar->used_count ||
        purged != ar->purged_bytes) {
        core_report("medium arena counters disagree with its blocks", i);
        bad++;
    }
    return bad;
}

int medium_stash_validate(const struct medium_stash *st)
{
    int bad = 0;
    size_t bytes = 0;
    for (unsigned i = 0; i < st->count; i++) {
        const struct mblock *b = st->blocks[i];
        bytes += st->sizes[i];
        if (registry_kind((uintptr_t)b) != KIND_MEDIUM || !tag_genuine(b) || !block_used(b) ||
            block_request(b) != STASH_MARK || block_size(b) != st->sizes[i] || st->sizes[i] > MEDIUM_STASH_BLOCK_MAX) {
            core_report("medium stash holds a block not marked stashed, or of another size", (uintptr_t)b);
            bad++;
        }
    }
    if (st->count > MEDIUM_STASH_BLOCKS || bytes != st->bytes || bytes > MEDIUM_STASH_BYTES) {
        core_report("medium stash counters disagree with its entries", st->count);
        bad++;
    }
    return bad;
}
