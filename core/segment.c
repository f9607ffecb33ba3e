/* heaplab core: small segments.
 *
 * A small segment is 4 MiB at a 4 MiB boundary: a header with the per-page
 * table, the block bitmaps and slot arrays, then 64 KiB pages. Spans of 1,
 * 2 or 4 pages (SPAN_MAX_PAGES), aligned to their size, are handed to size
 * classes; a span whose blocks are all free comes back here fully purged,
 * so its pages can serve any other class. Guarded by core_pool.lock (after class locks). */
#include "internal.h"

#include <string.h>

struct segment_pool core_pool = {.lock = CORE_MUTEX_INIT};

struct small_seg *segment_of_span(struct span *s)
{
    return small_seg_of((uintptr_t)s);
}

unsigned span_head_index(struct span *s)
{
    struct small_seg *seg = segment_of_span(s);
    return (unsigned)(s - seg->spans);
}

/* ---- the range (internal.h) ---- */

_Atomic uintptr_t core_small_range_key = UINTPTR_MAX;
static char *range_base;
/* Under core_pool.lock: slots below range_next have been handed out; a set
 * bit of range_free is one of them given back since. */
static size_t range_next;
static uint64_t range_free[SMALL_RANGE_SEGS / 64];

void segment_range_init(void)
{
    range_base = os_reserve_readable((size_t)1 << SMALL_RANGE_SHIFT);
    if (range_base)
        atomic_store_explicit(&core_small_range_key, (uintptr_t)range_base >> SMALL_RANGE_SHIFT,
                              memory_order_relaxed);
}

/* a slot of the range made read-write, or NULL when the range is used up
 * or absent (pool lock held) */
static struct small_seg *range_take(void)
{
    if (!range_base)
        return NULL;
    size_t i = SMALL_RANGE_SEGS;
    for (size_t w = 0; w < SMALL_RANGE_SEGS / 64 && i == SMALL_RANGE_SEGS; w++)
        if (range_free[w])
            i = w * 64 + (size_t)__builtin_ctzll(range_free[w]);
    bool reused = i < SMALL_RANGE_SEGS;
    if (!reused) {
        if (range_next == SMALL_RANGE_SEGS)
            return NULL;
        i = range_next;
    }
    char *p = range_base + (i << SEG_SHIFT);
    if (os_commit_fixed(p, SEG_SIZE, "heaplab-small") != 0)
        return NULL;
    if (reused)
        range_free[i / 64] &= ~((uint64_t)1 << (i % 64));
    else
        range_next++;
    return (struct small_seg *)p;
}

/* gives a segment back to the OS: to the range, or unmapped (pool lock held) */
static void segment_give_back(struct small_seg *seg)
{
    uintptr_t a = (uintptr_t)seg;
    if (!small_range_holds(a)) {
        os_unmap(seg, SEG_SIZE);
        return;
    }
    os_decommit_readable(seg, SEG_SIZE);
    size_t i = (a - (uintptr_t)range_base) >> SEG_SHIFT;
    range_free[i / 64] |= (uint64_t)1 << (i % 64);
}

static struct small_seg *segment_new(void)
{
    struct small_seg *seg = range_take();
    if (!seg)
        seg = os_map_aligned(SEG_SIZE, SEG_SIZE, "heaplab-small");
    if (!seg)
        return NULL;
    atomic_fetch_add_explicit(&core_os.map_count, 1, memory_order_relaxed);
    seg->magic = SMALL_SEG_MAGIC;
    seg->free_pages = SMALL_USABLE_MASK;
    seg->prev = NULL;
    seg->next = core_pool.head;
    if (core_pool.head)
        core_pool.head->prev = seg;
    core_pool.head = seg;
    core_pool.segments++;
    core_pool.free_page_count += PAGES_PER_SEG - SMALL_FIRST_PAGE;
    registry_set(seg, KIND_SMALL);
    return seg;
}

/* lowest page index starting `k` free pages aligned to k, or -1 */
static int find_run(uint64_t free_pages, unsigned k)
{
    static const uint64_t aligned_starts[SPAN_MAX_PAGES + 1] = {
        [1] = ~(uint64_t)0,
        [2] = 0x5555555555555555ULL,
        [4] = 0x1111111111111111ULL,
    };
    uint64_t m = free_pages;
    for (unsigned i = 1; i < k; i++)
        m &= free_pages >> i;
    m &= aligned_starts[k];
    return m ? __builtin_ctzll(m) : -1;
}

static uint64_t run_mask(unsigned head, unsigned k)
{
    uint64_t bits = k == 64 ? ~(uint64_t)0 : (((uint64_t)1 << k) - 1);
    return bits << head;
}

struct span *segment_span_alloc(unsigned cls, unsigned heap)
{
    const struct size_class *c = &core_classes[cls];
    unsigned k = c->span_pages;
    core_mutex_lock(&core_pool.lock);
    struct small_seg *seg;
    int head = -1;
    for (seg = core_pool.head; seg; seg = seg->next) {
        head = find_run(seg->free_pages, k);
        if (head >= 0)
            break;
    }
    if (!seg) {
        seg = segment_new();
        if (!seg) {
            core_mutex_unlock(&core_pool.lock);
            return NULL;
        }
        head = find_run(seg->free_pages, k);
    }
    seg->free_pages &= ~run_mask((unsigned)head, k);
    core_pool.free_page_count -= k;
    struct page_info info = {
        .span_mask = c->span_mask,
        .recip = UINT64_MAX / c->size + 1, /* ceil(2^64 / size) */
        .slots = (_Atomic uint16_t *)span_slots(seg, (unsigned)head),
        .size = c->size,
        .bin_offset = (uint16_t)(cls * BIN_BYTES),
        .cls = (uint8_t)cls,
        .heap = (uint8_t)heap,
    };
    for (unsigned p = (unsigned)head; p < (unsigned)head + k; p++) {
        seg->page_info[p] = info;
        seg->page_class[p] = (uint8_t)(cls + 1);
    }
    core_mutex_unlock(&core_pool.lock);

    struct span *s = &seg->spans[head];
    memset(s, 0, sizeof *s);
    s->cls = (uint8_t)cls;
    s->heap = (uint8_t)heap;
    s->pages = (uint8_t)k;
    s->free_count = c->capacity;
    /* fresh or fully purged: nothing of it is resident */
    s->purged = run_mask(0, k * OS_PAGES_PER_PAGE);
    uint64_t *bm = span_bitmap(seg, (unsigned)head);
    size_t words = k * BITMAP_BYTES_PER_PAGE / sizeof(uint64_t);
    size_t full = c->capacity / 64;
    for (size_t w = 0; w < words; w++)
        bm[w] = w < full ? ~(uint64_t)0 : 0;
    if (c->capacity % 64)
        bm[full] = ((uint64_t)1 << (c->capacity % 64)) - 1;
    return s;
}

void segment_span_purge_slots(struct span *s, struct os_purge_batch *batch)
{
    struct small_seg *seg = segment_of_span(s);
    unsigned head = span_head_index(s);
    /* The slots are all zero again: the pages the class wrote can go back
     * too, as far as they lie inside the span's reserve. The reserve's
     * pages past them were never written since the last span there gave
     * its own back (every span goes back through here): a call for them
     * cost a system call, in a threaded process a TLB flush on every CPU
     * of the process, and returned nothing. */
    uintptr_t first = (uintptr_t)span_slots(seg, head);
    uintptr_t written_end = first + core_classes[s->cls].capacity * sizeof(uint16_t);
    uintptr_t lo = (first + OS_PAGE - 1) & ~(uintptr_t)(OS_PAGE - 1);
    uintptr_t hi = (written_end + OS_PAGE - 1) & ~(uintptr_t)(OS_PAGE - 1);
    uintptr_t reserve_end = (first + s->pages * SLOTS_STRIDE) & ~(uintptr_t)(OS_PAGE - 1);
    if (hi > reserve_end)
        hi = reserve_end;
    if (hi > lo)
        purge_add(batch, (void *)lo, hi - lo);
}

void segment_span_release(struct span *s)
{
    struct small_seg *seg = segment_of_span(s);
    unsigned head = span_head_index(s);
    unsigned k = s->pages;
    core_mutex_lock(&core_pool.lock);
    for (unsigned p = head; p < head + k; p++) {
        seg->page_class[p] = 0;
        memset(&seg->page_info[p], 0, sizeof seg->page_info[p]);
    }
    seg->free_pages |= run_mask(head, k);
    core_pool.free_page_count += k;
    core_mutex_unlock(&core_pool.lock);
}

size_t segment_release_empty(unsigned keep)
{
    size_t released = 0;
    unsigned kept = 0;
    core_mutex_lock(&core_pool.lock);
    struct small_seg *seg = core_pool.head;
    while (seg) {
        struct small_seg *next = seg->next;
        if (seg->free_pages == SMALL_USABLE_MASK) {
            if (kept < keep) {
                kept++;
            } else {
                if (seg->prev)
                    seg->prev->next = seg->next;
                else
                    core_pool.head = seg->next;
                if (seg->next)
                    seg->next->prev = seg->prev;
                core_pool.segments--;
                core_pool.free_page_count -= PAGES_PER_SEG - SMALL_FIRST_PAGE;
                registry_set(seg, KIND_NONE);
                segment_give_back(seg);
                atomic_fetch_add_explicit(&core_os.unmap_count, 1, memory_order_relaxed);
                released += SEG_SIZE;
            }
        }
        seg = next;
    }
    core_mutex_unlock(&core_pool.lock);
    return released;
}

void small_census_take(struct small_census *c)
{
    memset(c, 0, sizeof *c);
    for (struct small_seg *seg = core_pool.head; seg; seg = seg->next) {
        for (unsigned p = SMALL_FIRST_PAGE; p < PAGES_PER_SEG;) {
            if (seg->page_class[p] == 0) {
                p++;
                continue;
            }
            unsigned cls = seg->page_class[p] - 1u;
            const struct size_class *sc = &core_classes[cls];
            const struct span *s = &seg->spans[p];
            c->spans[cls]++;
            c->out[cls] += sc->capacity - s->free_count;
            c->purged[cls] += (size_t)__builtin_popcountll(s->purged) * OS_PAGE;
            if (s->free_count < sc->capacity) {
                /* (the fast paths write slots without a lock) */
                _Atomic uint16_t *slots = (_Atomic uint16_t *)span_slots(seg, p);
                for (unsigned i = 0; i < sc->capacity; i++) {
                    uint16_t v = atomic_load_explicit(&slots[i], memory_order_relaxed);
                    if (v) {
                        c->live[cls]++;
                        c->requested += (size_t)v - 1;
                    }
                }
            }
            p += sc->span_pages;
        }
    }
}
