/* heaplab core: the small path's validators and hl_check, the invariant
 * walker. hl_check takes every lock and runs every validator; it is meant
 * for tests, called while no other thread allocates. The expensive debug
 * tier runs the same validators from the slow paths. */
#include "internal.h"

#include <string.h>

int span_is_valid(struct span *s)
{
    struct small_seg *seg = segment_of_span(s);
    unsigned head = span_head_index(s);
    const struct size_class *c = &core_classes[s->cls];
    const uint64_t *bm = span_bitmap(seg, head);
    size_t free_bits = 0;
    for (size_t w = 0; w < (c->capacity + 63) / 64; w++)
        free_bits += (size_t)__builtin_popcountll(bm[w]);
    return seg->magic == SMALL_SEG_MAGIC && seg->page_class[head] == s->cls + 1u && free_bits == s->free_count &&
           (s->free_count > 0) == (s->in_partial != 0);
}

int span_validate(struct small_seg *seg, unsigned head, struct span_tally *t)
{
    int bad = 0;
    struct span *s = &seg->spans[head];
    unsigned cls = seg->page_class[head] - 1u;
    const struct size_class *c = &core_classes[cls];
    if (seg->page_class[head] == 0 || s->cls != cls || s->pages != c->span_pages || head % c->span_pages ||
        s->heap >= SMALL_HEAPS) {
        core_report("span header disagrees with the page table", span_start(seg, head));
        return 1;
    }
    const uint64_t *bm = span_bitmap(seg, head);
    _Atomic uint16_t *slots = (_Atomic uint16_t *)span_slots(seg, head);
    size_t free_bits = 0, live = 0;
    size_t words = (size_t)c->span_pages * BITMAP_BYTES_PER_PAGE / sizeof(uint64_t);
    for (size_t w = 0; w < words; w++) {
        uint64_t bits = bm[w];
        for (unsigned b = 0; b < 64; b++) {
            size_t idx = w * 64 + b;
            bool is_free = bits & ((uint64_t)1 << b);
            if (idx >= c->capacity) {
                if (is_free) {
                    core_report("bitmap bit set past the span's capacity", span_start(seg, head));
                    bad++;
                }
                continue;
            }
            uint16_t sl = atomic_load_explicit(&slots[idx], memory_order_relaxed);
            if (is_free) {
                free_bits++;
                if (w < s->scan_word) {
                    core_report("free block below the span's scan hint", span_start(seg, head) + idx * c->size);
                    bad++;
                }
                if (sl != 0) {
                    core_report("free block still has a request recorded", span_start(seg, head) + idx * c->size);
                    bad++;
                }
            } else {
                if (sl != 0)
                    live++;
                if (sl > c->size + 1) {
                    core_report("recorded request larger than the block", span_start(seg, head) + idx * c->size);
                    bad++;
                }
                /* an out block must not overlap a purged OS page */
                size_t off = idx * c->size;
                unsigned lo = (unsigned)(off >> OS_PAGE_SHIFT), hi = (unsigned)((off + c->size - 1) >> OS_PAGE_SHIFT);
                for (unsigned j = lo; j <= hi; j++)
                    if (s->purged & ((uint64_t)1 << j)) {
                        core_report("purged OS page overlaps a block in use", span_start(seg, head) + off);
                        bad++;
                        break;
                    }
            }
        }
    }
    if (free_bits != s->free_count) {
        core_report("span free count disagrees with its bitmap", span_start(seg, head));
        bad++;
    }
    if ((s->free_count > 0) != (s->in_partial != 0)) {
        core_report("span partial-list membership wrong", span_start(seg, head));
        bad++;
    }
    if (t) {
        t->out_blocks += c->capacity - s->free_count;
        t->live_blocks += live;
        t->purged_bytes += (size_t)__builtin_popcountll(s->purged) * OS_PAGE;
    }
    return bad;
}

/* Checks entries e[0..n) of free blocks of class `cls` (a thread cache
 * bin or a store): each must be a block of that class, carry its own slot
 * and not be live. At the first bad one it reports `what` and stops. */
static int check_entries(const struct tentry *e, size_t n, unsigned cls, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        uintptr_t a = (uintptr_t)e[i].ptr;
        if (registry_kind(a) != KIND_SMALL || small_seg_of(a)->page_class[page_index(a)] != cls + 1 ||
            e[i].slot != small_slot_of(a, &core_classes[cls]) ||
            atomic_load_explicit(e[i].slot, memory_order_relaxed) != 0) {
            core_report(what, a);
            return 1;
        }
    }
    return 0;
}

/* Entries e[0..n) (already checked as free blocks of a class) whose block
 * belongs to `heap` (want true) or to another heap (want false) */
static int check_heaps(const struct tentry *e, size_t n, unsigned heap, bool want, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        uintptr_t a = (uintptr_t)e[i].ptr;
        if ((block_heap(a) == heap) != want) {
            core_report(what, a);
            return 1;
        }
    }
    return 0;
}

int central_validate(unsigned heap, unsigned cls)
{
    int bad = 0;
    const struct class_central *cc = &core_central[heap][cls];
    for (struct span *s = cc->partial; s; s = s->next)
        if (s->cls != cls || s->heap != heap || !s->in_partial || s->free_count == 0 || (s->next && s->next->prev != s)) {
            core_report("partial list holds a wrong span; class", cls);
            bad++;
            break;
        }
    for (struct span *s = cc->dirty; s; s = s->dnext)
        if (s->cls != cls || s->heap != heap || !s->in_dirty || (s->dnext && s->dnext->dprev != s) ||
            (!s->dnext && cc->dirty_tail != s)) {
            core_report("dirty list broken; class", cls);
            bad++;
            break;
        }
    if (cc->store_count > cc->store_cap) {
        core_report("store holds more entries than it has room for; class", cls);
        bad++;
    } else {
        int entries_bad = check_entries(cc->store, cc->store_count, cls, "store holds a live block or one of another class");
        bad += entries_bad ? entries_bad
                           : check_heaps(cc->store, cc->store_count, heap, true, "store holds a block of another heap");
    }
    return bad;
}

int bin_validate(const struct tcache *tc, unsigned cls)
{
    const struct tbin *b = &tc->bins[cls];
    if (bin_bytes_held(b) > b->end_lo - b->base_lo || bin_bytes_held(b) % sizeof(struct tentry) != 0) {
        core_report("thread cache bin out of its bounds; class", cls);
        return 1;
    }
    if (check_entries(bin_base(b), bin_count(b), cls, "thread cache holds a live block or one of another class") ||
        check_heaps(bin_base(b), bin_count(b), tc->arena, true, "thread cache holds a block of another heap"))
        return 1;
    unsigned remote = tc->remote_n[cls];
    const struct tentry *e = tcache_remote_base(tc, cls);
    if (remote && !e) {
        core_report("remote bin holds blocks without a region; class", cls);
        return 1;
    }
    if (check_entries(e, remote, cls, "remote bin holds a live block or one of another class") ||
        check_heaps(e, remote, tc->arena, false, "remote bin holds a block of the thread's own heap"))
        return 1;
    return 0;
}

/* Every small segment and span, each class's central state against them,
 * and the blocks out of spans against the live, cached and stored ones. */
static int check_small(void)
{
    int bad = 0;
    /* spans and purged bytes per heap; blocks out per class (a heap's
     * out_bytes alone is not meaningful, see class_central) */
    static size_t spans[SMALL_HEAPS][NCLASSES];
    static struct span_tally tally[SMALL_HEAPS][NCLASSES];
    memset(spans, 0, sizeof spans);
    memset(tally, 0, sizeof tally);
    size_t segs = 0, free_pages = 0;
    for (struct small_seg *seg = core_pool.head; seg; seg = seg->next, segs++) {
        if (seg->magic != SMALL_SEG_MAGIC || registry_kind((uintptr_t)seg) != KIND_SMALL ||
            (seg->free_pages & ~SMALL_USABLE_MASK)) {
            core_report("small segment header or registry entry broken", (uintptr_t)seg);
            bad++;
            continue;
        }
        free_pages += (size_t)__builtin_popcountll(seg->free_pages);
        for (unsigned p = SMALL_FIRST_PAGE; p < PAGES_PER_SEG;) {
            bool page_free = seg->free_pages & ((uint64_t)1 << p);
            if (page_free || seg->page_class[p] == 0) {
                if (page_free != (seg->page_class[p] == 0)) {
                    core_report("page free mask disagrees with the page table", (uintptr_t)seg + ((uintptr_t)p << PAGE_SHIFT));
                    bad++;
                }
                p++;
                continue;
            }
            unsigned cls = seg->page_class[p] - 1u;
            unsigned k = core_classes[cls].span_pages;
            for (unsigned q = p; q < p + k && q < PAGES_PER_SEG; q++)
                if (seg->page_class[q] != cls + 1 || (seg->free_pages & ((uint64_t)1 << q))) {
                    core_report("span pages disagree in the page table", (uintptr_t)seg + ((uintptr_t)q << PAGE_SHIFT));
                    bad++;
                }
            unsigned h = seg->spans[p].heap % SMALL_HEAPS;
            spans[h][cls]++;
            bad += span_validate(seg, p, &tally[h][cls]);
            p += k;
        }
    }
    if (segs != core_pool.segments || free_pages != core_pool.free_page_count) {
        core_report("segment pool counters disagree with its segments", segs);
        bad++;
    }
    /* blocks out of spans are either live (slot set) or in a thread cache */
    size_t cached[NCLASSES] = {0};
    pthread_mutex_lock(&core_threads.lock);
    for (unsigned cls = 0; cls < NCLASSES; cls++)
        cached[cls] = core_threads.orphaned[cls];
    for (struct tcache *tc = core_threads.head; tc; tc = tc->next)
        for (unsigned cls = 0; cls < NCLASSES; cls++)
            cached[cls] += bin_count_shared(&tc->bins[cls]) + remote_count_shared(tc, cls);
    pthread_mutex_unlock(&core_threads.lock);
    for (unsigned cls = 0; cls < NCLASSES; cls++) {
        const struct size_class *c = &core_classes[cls];
        size_t stored = 0, out_bytes = 0, out = 0, live = 0;
        for (unsigned h = 0; h < SMALL_HEAPS; h++) {
            const struct class_central *cc = &core_central[h][cls];
            bad += central_validate(h, cls);
            if (spans[h][cls] != cc->spans || spans[h][cls] * ((size_t)1 << c->span_shift) != cc->span_bytes ||
                tally[h][cls].purged_bytes != cc->purged_bytes) {
                core_report("class counters disagree with its spans; class", cls);
                bad++;
            }
            stored += cc->store_count;
            out_bytes += cc->out_bytes;
            out += tally[h][cls].out_blocks;
            live += tally[h][cls].live_blocks;
        }
        if ((out - stored) * c->size != out_bytes) {
            core_report("class's blocks out disagree with its spans; class", cls);
            bad++;
        }
        if (out != live + cached[cls] + stored) {
            core_report("blocks out of spans != live + cached + in stores; class", cls);
            bad++;
        }
    }
    /* the calling thread's cache, block by block */
    for (unsigned cls = 0; cls < NCLASSES; cls++)
        bad += bin_validate(&core_tc, cls);
    return bad;
}

int hl_check(void)
{
    if (!atomic_load_explicit(&core_initialized, memory_order_acquire))
        return 0;
    core_lock_all();
    int bad = check_small() + large_lists_validate();
    for (unsigned i = 0; i < MEDIUM_ARENAS; i++)
        bad += arena_validate(i);
    /* the calling thread's medium stash (others' change without a lock) */
    const struct medium_stash *st = tcache_stash_of(&core_tc);
    if (st)
        bad += medium_stash_validate(st);
    core_unlock_all();
    hl_stats_t s;
    hl_stats(&s);
    if (!hl_stats_balanced(&s)) {
        core_report("stats identity broken; mapped", s.mapped);
        bad++;
    }
    return bad;
}
