/* heaplab core: the shared side of the small path.
 *
 * Each size class has one central state per small heap, under its
 * (striped) lock: spans with free blocks (a bitmap per span, 1 = free), a
 * list of "dirty" spans whose free blocks may cover whole OS pages still
 * resident, and a store of free blocks (entries, see struct tentry).
 * Thread caches refill from and flush to their own heap many blocks at a
 * time; with caches off every request comes here. Threads of different
 * heaps never carve blocks from the same span, so they do not write to each
 * other's cache lines (blocks, slots, bitmaps).
 * Blocks are tracked in bitmaps rather than intrusive lists so that an OS
 * page holding only free blocks can be purged without losing a free list. */
#include "internal.h"

#include <string.h>

struct class_central core_central[SMALL_HEAPS][NCLASSES];
/* all free: zero */
struct class_lock_line core_class_locks[SMALL_HEAPS][CLASS_LOCKS];
struct dirty_mask core_dirty_classes[SMALL_HEAPS];
_Atomic uint64_t core_clock_ms;
_Atomic size_t core_unpurged_bytes;

/* Takes the lock of class `cls` of `heap` (which must be in range). */
static void class_lock_take(unsigned heap, unsigned cls)
{
    CORE_ASSERT(heap < SMALL_HEAPS && cls < NCLASSES, "a small heap or class out of range");
    core_mutex_lock(class_lock(heap, cls));
}

/* Gives the lock back; the expensive tier first validates what it guards
 * of this class. */
static void class_unlock(unsigned heap, unsigned cls)
{
    CORE_ASSERT_EXPENSIVE(central_validate(heap, cls) == 0, "small heap class invalid after a change");
    core_mutex_unlock(class_lock(heap, cls));
}

/* page_free bytes of a class (lock held) */
static size_t free_resident(const struct class_central *cc)
{
    return cc->span_bytes - cc->out_bytes - cc->purged_bytes;
}

static size_t span_bytes_of(const struct size_class *c)
{
    return (size_t)1 << c->span_shift;
}

static uint64_t os_page_mask(unsigned first, unsigned last)
{
    unsigned n = last - first + 1;
    uint64_t bits = n >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1);
    return bits << first;
}

static void partial_push(struct class_central *cc, struct span *s)
{
    s->prev = NULL;
    s->next = cc->partial;
    if (cc->partial)
        cc->partial->prev = s;
    cc->partial = s;
    s->in_partial = 1;
}

static void partial_remove(struct class_central *cc, struct span *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        cc->partial = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->next = s->prev = NULL;
    s->in_partial = 0;
}

/* something became free at `now` in this class (class lock held) */
static void note_free_since(struct class_central *cc, uint64_t now)
{
    if (atomic_load_explicit(&cc->oldest_ms, memory_order_relaxed) > now)
        atomic_store_explicit(&cc->oldest_ms, now, memory_order_relaxed);
}

static void dirty_push(struct class_central *cc, struct span *s, uint64_t now)
{
    note_free_since(cc, now);
    s->dirty_since_ms = now;
    s->dprev = NULL;
    s->dnext = cc->dirty;
    if (cc->dirty)
        cc->dirty->dprev = s;
    else
        cc->dirty_tail = s;
    cc->dirty = s;
    s->in_dirty = 1;
}

static void dirty_remove(struct class_central *cc, struct span *s)
{
    if (s->dprev)
        s->dprev->dnext = s->dnext;
    else
        cc->dirty = s->dnext;
    if (s->dnext)
        s->dnext->dprev = s->dprev;
    else
        cc->dirty_tail = s->dprev;
    s->dnext = s->dprev = NULL;
    s->in_dirty = 0;
}

/* The block at span offset `off` is leaving the free state: the OS pages it
 * overlaps are resident from now on. */
static void touch_block(struct class_central *cc, struct span *s, size_t off, size_t size)
{
    uint64_t m = os_page_mask((unsigned)(off >> OS_PAGE_SHIFT), (unsigned)((off + size - 1) >> OS_PAGE_SHIFT));
    uint64_t cleared = s->purged & m;
    if (cleared) {
        s->purged &= ~m;
        cc->purged_bytes -= (size_t)__builtin_popcountll(cleared) * OS_PAGE;
    }
}

static struct span *new_span(struct class_central *cc, unsigned heap, unsigned cls)
{
    struct span *s = segment_span_alloc(cls, heap);
    if (!s)
        return NULL;
    size_t bytes = span_bytes_of(&core_classes[cls]);
    cc->spans++;
    cc->span_bytes += bytes;
    cc->purged_bytes += bytes;
    partial_push(cc, s);
    return s;
}

/* Entries a store has room for: STORE_BYTES of blocks, at most
 * STORE_MAX_ENTRIES. */
static uint32_t store_capacity(const struct size_class *c)
{
    size_t n = STORE_BYTES / c->size;
    return n < STORE_MAX_ENTRIES ? (uint32_t)n : STORE_MAX_ENTRIES;
}

static size_t store_bytes(const struct size_class *c)
{
    return ((size_t)store_capacity(c) * sizeof(struct tentry) + OS_PAGE - 1) & ~(OS_PAGE - 1);
}

/* Maps the store of a heap's class on first use (class lock held); false
 * when the system has no memory for it (the blocks then go to the
 * bitmaps). */
static bool store_ready(struct class_central *cc, const struct size_class *c)
{
    if (cc->store)
        return true;
    size_t bytes = store_bytes(c);
    struct tentry *m = os_map_aligned(bytes, OS_PAGE, "heaplab store");
    if (!m)
        return false;
    atomic_fetch_add_explicit(&core_os.map_count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&core_os.cache_meta_bytes, bytes, memory_order_relaxed);
    cc->store = m;
    cc->store_cap = store_capacity(c);
    return true;
}

/* Takes up to `want` of the newest stored blocks into out[0..n), the
 * newest at out[n-1]; returns n. Class lock held. */
static unsigned take_stored(struct class_central *cc, const struct size_class *c, unsigned want, struct tentry *out)
{
    CORE_ASSERT(cc->store_count <= cc->store_cap, "a store holds more entries than it has room for");
    unsigned n = cc->store_count < want ? cc->store_count : want;
    if (!n)
        return 0;
    cc->store_count -= n;
    memcpy(out, cc->store + cc->store_count, (size_t)n * sizeof *out);
    /* mutant 7: blocks taken from a store not counted out */
    cc->out_bytes += CORE_MUTANT(7) ? 0 : (size_t)n * c->size;
    return n;
}

/* Carves up to `want` free blocks from the heap's spans into out[0..n),
 * the lowest address last (a bin hands out its last entry first, so a
 * program filling new blocks writes upwards through memory); returns n
 * (fewer when no span can be had). Class lock held. */
static unsigned carve(struct class_central *cc, unsigned heap, unsigned cls, unsigned want, struct tentry *out)
{
    const struct size_class *c = &core_classes[cls];
    /* filled downwards from out[want - 1] */
    struct tentry *next = out + want;
    while (next > out) {
        struct span *s = cc->partial;
        if (!s && !(s = new_span(cc, heap, cls)))
            break;
        struct small_seg *seg = segment_of_span(s);
        unsigned head = span_head_index(s);
        uint64_t *bm = span_bitmap(seg, head);
        uintptr_t start = span_start(seg, head);
        _Atomic uint16_t *slots = (_Atomic uint16_t *)span_slots(seg, head);
        unsigned words = (c->capacity + 63) / 64;
        unsigned w = s->scan_word;
        struct tentry *span_first = next;
        while (next > out && w < words) {
            uint64_t bits = bm[w];
            /* as many blocks as the word has and the refill wants, counted
             * first: the loop then carries only the bits and the entry
             * pointer (with the bound checked in it too, gcc spilled the
             * bits to the stack, a store and reload on every block) */
            unsigned room = (unsigned)(next - out), have = (unsigned)__builtin_popcountll(bits);
            unsigned take = have < room ? have : room;
            uintptr_t word_start = start + (size_t)w * 64 * c->size;
            _Atomic uint16_t *word_slots = slots + (size_t)w * 64;
            for (unsigned k = 0; k < take; k++) {
                unsigned b = (unsigned)__builtin_ctzll(bits);
                bits &= bits - 1;
                next--;
                next->ptr = (void *)(word_start + (size_t)b * c->size);
                next->slot = word_slots + b;
            }
            bm[w] = bits;
            if (!bits)
                w++;
        }
        s->scan_word = w;
        s->free_count -= (uint32_t)(span_first - next);
        /* blocks on pages never touched or given back make them resident */
        if (s->purged) {
            size_t purged_before = cc->purged_bytes;
            for (struct tentry *t = next; t < span_first && s->purged; t++)
                touch_block(cc, s, (uintptr_t)t->ptr - start, c->size);
            atomic_fetch_add_explicit(&core_unpurged_bytes, purged_before - cc->purged_bytes, memory_order_relaxed);
        }
        if (s->free_count == 0)
            partial_remove(cc, s);
        CORE_ASSERT(span_is_valid(s), "span invalid after refill");
    }
    unsigned n = (unsigned)(out + want - next);
    if (next > out)
        memmove(out, next, (size_t)n * sizeof *out);
    cc->out_bytes += (size_t)n * c->size;
    return n;
}

/* Blocks a refill carves from the bitmaps: what it wants, but at most
 * CARVE_BYTES of them. Stored blocks were freed by the
 * program, so their pages are resident; blocks carved are often on pages
 * never touched. A bin filled with a whole bin's worth of those (64 KiB)
 * keeps them circulating through bins and stores beside the program's own
 * freed blocks, each later handed out where a freed one could have served;
 * a few at a time, they enter circulation only as the program needs them.
 * rptest at 2 threads: 19.8 -> 15.6 MB peak RSS with the remote bins'
 * byte cap (tcache.c), for 7% more instructions on tmalloc-st-random,
 * which carves 100,000 blocks an iteration (4 KiB: 17%);
 * docs/core-development.md has the runs. */
#define CARVE_BYTES ((size_t)8192)
_Static_assert(CARVE_BYTES >= SMALL_MAX, "a refill carves at least one block of every class");
static unsigned carve_count(const struct size_class *c, unsigned want)
{
    size_t cap = CARVE_BYTES / c->size;
    return want < cap ? want : (unsigned)cap;
}

unsigned central_refill(unsigned heap, unsigned cls, unsigned want, struct tentry *out)
{
    CORE_ASSERT(heap < SMALL_HEAPS && cls < NCLASSES && want >= 1 && want <= TCACHE_MAX_BLOCKS && out,
                "refill of a heap or class out of range, or of no entries");
    const struct size_class *c = &core_classes[cls];
    struct class_central *cc = &core_central[heap][cls];
    class_lock_take(heap, cls);
    size_t before = free_resident(cc);
    unsigned n = take_stored(cc, c, want, out);
    if (!n)
        n = carve(cc, heap, cls, carve_count(c, want), out);
    size_t after = free_resident(cc);
    lane_note(class_lane(heap, cls), before, after);
    class_unlock(heap, cls);
    return n;
}

/* Blocks of one span on their way back to its bitmap: the bits of one
 * bitmap word are gathered in a register and written once, and the span's
 * count once, when the run moves on. A read-modify-write of the same word
 * for each block made every block wait for the one before, a chain through
 * memory (docs/core-development.md has the profile). */
struct bitmap_run {
    struct span *s;
    uintptr_t start;
    uint64_t *bm;
    size_t word;    /* the word `bits` belongs to */
    uint64_t bits;
    uint32_t added; /* blocks gathered for s, not yet in its free_count */
};

static void run_write_word(struct bitmap_run *r)
{
    if (!r->bits)
        return;
    r->bm[r->word] |= r->bits;
    if (r->word < r->s->scan_word)
        r->s->scan_word = (uint32_t)r->word;
    r->bits = 0;
}

static void run_end_span(struct class_central *cc, struct bitmap_run *r)
{
    if (!r->s)
        return;
    run_write_word(r);
    if (r->s->free_count == 0)
        partial_push(cc, r->s);
    r->s->free_count += r->added;
    r->added = 0;
    CORE_ASSERT(span_is_valid(r->s), "span invalid after blocks came back");
}

/* Returns the blocks of e[0..n), all of `heap`, to their spans' bitmaps
 * (class lock of `heap` held). A block in the same span as the one before
 * it (a bin or store holds blocks in the order they were freed, and
 * programs free neighbours together) reuses that span's addresses. */
static void return_to_bitmaps(struct class_central *cc, const struct size_class *c, const struct tentry *e, unsigned n,
                              uint64_t now)
{
    const size_t span_bytes = span_bytes_of(c);
    struct bitmap_run r = {0};
    for (unsigned i = 0; i < n; i++) {
        uintptr_t a = (uintptr_t)e[i].ptr;
        if (a - r.start >= span_bytes) {
            run_end_span(cc, &r);
            struct small_seg *seg = small_seg_of(a);
            unsigned head = span_head_of(a, c);
            r.s = &seg->spans[head];
            r.start = span_start(seg, head);
            r.bm = span_bitmap(seg, head);
            /* the span's age is that of its newest free block: a span
             * whose blocks come and go is not old memory */
            if (r.s->in_dirty && r.s->dirty_since_ms != now)
                dirty_remove(cc, r.s);
            if (!r.s->in_dirty)
                dirty_push(cc, r.s, now);
        }
        size_t idx = ((a - r.start) * c->recip) >> RECIP_SHIFT;
        if (idx / 64 != r.word) {
            run_write_word(&r);
            r.word = idx / 64;
        }
        r.bits |= (uint64_t)1 << (idx % 64);
        r.added++;
    }
    run_end_span(cc, &r);
}

static void mark_dirty(unsigned heap, unsigned cls)
{
    /* read first: the bit is nearly always set already, and a read leaves
     * the line shared with the decay tick's reader */
    _Atomic uint64_t *w = &core_dirty_classes[heap].bits[cls / 64];
    uint64_t bit = (uint64_t)1 << (cls % 64);
    if (!(atomic_load_explicit(w, memory_order_relaxed) & bit))
        atomic_fetch_or_explicit(w, bit, memory_order_relaxed);
}

/* Empties the store into the bitmaps (class lock held). */
static void drain_store(struct class_central *cc, const struct size_class *c, uint64_t now)
{
    return_to_bitmaps(cc, c, cc->store, cc->store_count, now);
    cc->store_count = 0;
}

void central_drain(unsigned heap, unsigned cls)
{
    struct class_central *cc = &core_central[heap][cls];
    uint64_t now = atomic_load_explicit(&core_clock_ms, memory_order_relaxed);
    class_lock_take(heap, cls);
    drain_store(cc, &core_classes[cls], now);
    class_unlock(heap, cls);
}

void central_flush(unsigned heap, unsigned cls, const struct tentry *e, unsigned n)
{
    CORE_ASSERT(heap < SMALL_HEAPS && cls < NCLASSES && n >= 1 && n <= TCACHE_MAX_BLOCKS,
                "flush of a heap or class out of range, or of no entries");
    for (unsigned i = 0; i < n && HEAPLAB_DEBUG >= 1; i++)
        CORE_ASSERT(registry_is_small((uintptr_t)e[i].ptr) &&
                        small_seg_of((uintptr_t)e[i].ptr)->page_class[page_index((uintptr_t)e[i].ptr)] == cls + 1 &&
                        block_heap((uintptr_t)e[i].ptr) == heap &&
                        atomic_load_explicit(e[i].slot, memory_order_relaxed) == 0,
                    "flush of a block of another class or heap, or of a live one");
    const struct size_class *c = &core_classes[cls];
    struct class_central *cc = &core_central[heap][cls];
    uint64_t now = atomic_load_explicit(&core_clock_ms, memory_order_relaxed);
    class_lock_take(heap, cls);
    if (n >= STORE_MIN_BLOCKS && store_ready(cc, c) && cc->store_count + n <= cc->store_cap) {
        if (!cc->store_count)
            note_free_since(cc, now);
        memcpy(cc->store + cc->store_count, e, (size_t)n * sizeof *e);
        cc->store_count += n;
        cc->store_since_ms = now;
    } else {
        return_to_bitmaps(cc, c, e, n, now);
    }
    cc->out_bytes -= (size_t)n * c->size;
    lane_note(class_lane(heap, cls), 0, (size_t)n * c->size);
    class_unlock(heap, cls);
    mark_dirty(heap, cls);
}

static bool bits_all_set(const uint64_t *bm, size_t lo, size_t hi)
{
    for (size_t i = lo; i <= hi;) {
        size_t w = i / 64, b = i % 64;
        size_t last_in_word = w * 64 + 63 < hi ? w * 64 + 63 : hi;
        size_t n = last_in_word - i + 1;
        uint64_t m = (n == 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1)) << b;
        if ((bm[w] & m) != m)
            return false;
        i = last_in_word + 1;
    }
    return true;
}

/* adds every run of set bits of `m` (OS pages of the span at `start`) to
 * the batch */
static void purge_os_pages(struct os_purge_batch *batch, uintptr_t start, uint64_t m)
{
    while (m) {
        unsigned lo = (unsigned)__builtin_ctzll(m);
        uint64_t shifted = m >> lo;
        unsigned len = ~shifted ? (unsigned)__builtin_ctzll(~shifted) : 64;
        purge_add(batch, (void *)(start + ((uintptr_t)lo << OS_PAGE_SHIFT)), (size_t)len << OS_PAGE_SHIFT);
        m &= ~os_page_mask(lo, lo + len - 1);
    }
}

/* Purges (into the batch) every OS page of the span that only free blocks
 * overlap; returns bytes purged. Class lock held. */
static size_t purge_span(struct class_central *cc, struct span *s, struct os_purge_batch *batch)
{
    const struct size_class *c = &core_classes[s->cls];
    struct small_seg *seg = segment_of_span(s);
    unsigned head = span_head_index(s);
    unsigned os_pages = (unsigned)(span_bytes_of(c) >> OS_PAGE_SHIFT);
    uint64_t all = os_page_mask(0, os_pages - 1);
    uint64_t fresh;
    if (s->free_count == c->capacity) {
        fresh = all & ~s->purged;
    } else {
        const uint64_t *bm = span_bitmap(seg, head);
        size_t used_end = (size_t)c->capacity * c->size;
        fresh = 0;
        for (unsigned j = 0; j < os_pages; j++) {
            if (s->purged & ((uint64_t)1 << j))
                continue;
            size_t lo = (size_t)j << OS_PAGE_SHIFT, hi = lo + OS_PAGE - 1;
            if (lo < used_end) {
                size_t first = (lo * c->recip) >> RECIP_SHIFT;
                size_t last = hi < used_end ? (hi * c->recip) >> RECIP_SHIFT : c->capacity - 1;
                if (!bits_all_set(bm, first, last))
                    continue;
            }
            fresh |= (uint64_t)1 << j;
        }
    }
    if (!fresh)
        return 0;
    /* a span with no live block in one call: the pages purged before cost
     * the kernel a page-table walk, each further call a TLB shootdown */
    purge_os_pages(batch, span_start(seg, head), s->free_count == c->capacity ? all : fresh);
    s->purged |= fresh;
    size_t bytes = (size_t)__builtin_popcountll(fresh) * OS_PAGE;
    cc->purged_bytes += bytes;
    return bytes;
}

static void consume(size_t *excess, size_t bytes)
{
    if (excess)
        *excess -= bytes < *excess ? bytes : *excess;
}

size_t central_purge(unsigned heap, unsigned cls, uint64_t now_ms, uint64_t age_ms, bool try, size_t *excess,
                     bool whole_spans_only)
{
    struct class_central *cc = &core_central[heap][cls];
    const struct size_class *c = &core_classes[cls];
    size_t released = 0;
    if (age_ms != 0 && now_ms - atomic_load_explicit(&cc->oldest_ms, memory_order_relaxed) < age_ms)
        return 0;
    if (try) {
        if (!core_mutex_trylock(class_lock(heap, cls)))
            return 0;
    } else {
        class_lock_take(heap, cls);
    }
    size_t before = free_resident(cc);
    /* a store untouched for as long goes to the bitmaps first, where its
     * blocks' pages can be purged */
    if (cc->store_count && (age_ms == 0 || now_ms - cc->store_since_ms >= age_ms))
        drain_store(cc, c, now_ms);
    /* the pass's ranges go back before the lock goes (in one call while
     * other threads run: purge_batch_init); the spans it empties go back
     * to the pool only after that (another class may carve a span as soon
     * as it is there), linked meanwhile through their free dirty links */
    struct os_purge_batch batch;
    purge_batch_init(&batch);
    struct span *emptied = NULL;
    struct span *s = cc->dirty_tail;
    while (s && (age_ms == 0 || now_ms - s->dirty_since_ms >= age_ms) && (!excess || *excess > 0)) {
        struct span *older_next = s->dprev;
        if (whole_spans_only && s->free_count != c->capacity) {
            s = older_next;
            continue;
        }
        size_t bytes = purge_span(cc, s, &batch);
        released += bytes;
        consume(excess, bytes);
        dirty_remove(cc, s);
        /* mutant 5: a span released while a block of it is out */
        if (s->free_count == c->capacity || (CORE_MUTANT(5) && s->free_count + 1 == c->capacity)) {
            /* no live block left: the span goes back whole, for any class */
            size_t span_bytes = span_bytes_of(c);
            partial_remove(cc, s);
            cc->spans--;
            cc->span_bytes -= span_bytes;
            cc->purged_bytes -= span_bytes;
            segment_span_purge_slots(s, &batch);
            s->dnext = emptied;
            emptied = s;
        }
        s = older_next;
    }
    purge_flush(&batch);
    while (emptied) {
        struct span *next = emptied->dnext;
        emptied->dnext = NULL;
        segment_span_release(emptied);
        emptied = next;
    }
    if (!cc->dirty && !cc->store_count)
        atomic_fetch_and_explicit(&core_dirty_classes[heap].bits[cls / 64], ~((uint64_t)1 << (cls % 64)), memory_order_relaxed);
    uint64_t oldest = cc->dirty_tail ? cc->dirty_tail->dirty_since_ms : UINT64_MAX;
    if (cc->store_count && cc->store_since_ms < oldest)
        oldest = cc->store_since_ms;
    atomic_store_explicit(&cc->oldest_ms, oldest, memory_order_relaxed);
    size_t after = free_resident(cc);
    lane_note(class_lane(heap, cls), before, after);
    class_unlock(heap, cls);
    return released;
}

/* ---- fork ------------------------------------------------------------------ */

void central_recount_after_fork(void)
{
    struct small_census *c = &(struct small_census){0};
    small_census_take(c);
    /* (tcache_after_fork_child left the forking thread alone on the list) */
    struct tcache *self = core_threads.head;
    for (unsigned cls = 0; cls < NCLASSES; cls++) {
        const struct size_class *sc = &core_classes[cls];
        size_t stored = 0, out_bytes = 0;
        for (unsigned h = 0; h < SMALL_HEAPS; h++) {
            stored += core_central[h][cls].store_count;
            out_bytes += core_central[h][cls].out_bytes;
        }
        size_t own = self ? bin_count(&self->bins[cls]) + self->remote_n[cls] : 0;
        core_threads.orphaned[cls] = c->out[cls] - c->live[cls] - stored - own;
        /* a heap's out_bytes alone may wrap; the class's sum is what must
         * hold, so heap 0 takes the difference */
        struct class_central *cc = &core_central[0][cls];
        size_t before = free_resident(cc);
        cc->out_bytes += (c->out[cls] - stored) * sc->size - out_bytes;
        lane_note(class_lane(0, cls), before, free_resident(cc));
    }
    size_t own_requested = self ? tcache_small_net(self) : 0;
    atomic_store_explicit(&core_threads.small_requested, c->requested - own_requested, memory_order_relaxed);
}
