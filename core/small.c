/* heaplab core: the shared side of the small path.
 *
 * Each size class has one central state under its (striped) lock: spans with free
 * blocks (a bitmap per span, 1 = free) and a list of "dirty" spans whose free
 * blocks may cover whole OS pages still resident. Thread caches refill from
 * and flush to it in batches; with caches off every request comes here.
 * Blocks are tracked in bitmaps rather than intrusive lists so that an OS
 * page holding only free blocks can be purged without losing a free list. */
#include "internal.h"

struct class_central hl_central[NCLASSES];
/* adaptive: spin briefly before sleeping, the critical sections are short */
pthread_mutex_t hl_class_locks[CLASS_LOCKS] = {[0 ... CLASS_LOCKS - 1] = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP};
_Atomic uint64_t hl_dirty_classes[2];
_Atomic uint64_t hl_clock_ms;

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

static void dirty_push(struct class_central *cc, struct span *s, uint64_t now)
{
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

static struct span *new_span(struct class_central *cc, unsigned cls)
{
    struct span *s = segment_span_alloc(cls);
    if (!s)
        return NULL;
    size_t bytes = span_bytes_of(&hl_classes[cls]);
    cc->spans++;
    cc->span_bytes += bytes;
    cc->purged_bytes += bytes;
    partial_push(cc, s);
    return s;
}

unsigned central_refill(unsigned cls, unsigned want, struct tnode **out)
{
    const struct size_class *c = &hl_classes[cls];
    struct class_central *cc = &hl_central[cls];
    struct tnode *first = NULL, **link = &first;
    unsigned n = 0;
    pthread_mutex_lock(class_lock(cls));
    size_t before = free_resident(cc);
    if (cc->xfer_count) {
        /* the newest batch this thread stored, else the newest fitting */
        unsigned top = cc->xfer_count - 1, pick = top;
        for (unsigned i = cc->xfer_count; i-- > 0;)
            if (cc->xfer_owner[i] == (const void *)&hl_tc && cc->xfer_n[i] <= want) {
                pick = i;
                break;
            }
        if (pick != top) {
            struct tnode *l = cc->xfer[pick];
            uint32_t nn = cc->xfer_n[pick];
            const void *o = cc->xfer_owner[pick];
            cc->xfer[pick] = cc->xfer[top];
            cc->xfer_n[pick] = cc->xfer_n[top];
            cc->xfer_owner[pick] = cc->xfer_owner[top];
            cc->xfer[top] = l;
            cc->xfer_n[top] = nn;
            cc->xfer_owner[top] = o;
        }
    }
    if (cc->xfer_count && cc->xfer_n[cc->xfer_count - 1] <= want) {
        /* a whole stored batch: its nodes already carry their slack slots */
        cc->xfer_count--;
        *out = cc->xfer[cc->xfer_count];
        n = cc->xfer_n[cc->xfer_count];
        cc->xfer_bytes -= (size_t)n * c->size;
        cc->out_bytes += (size_t)n * c->size;
        size_t after = free_resident(cc);
        pthread_mutex_unlock(class_lock(cls));
        stats_note_free_resident(before, after);
        return n;
    }
    while (n < want) {
        struct span *s = cc->partial;
        if (!s && !(s = new_span(cc, cls)))
            break;
        struct small_seg *seg = segment_of_span(s);
        unsigned head = span_head_index(s);
        uint64_t *bm = span_bitmap(seg, head);
        uintptr_t start = span_start(seg, head);
        unsigned words = (c->capacity + 63) / 64;
        unsigned w = s->scan_word;
        while (n < want && w < words) {
            uint64_t bits = bm[w];
            while (bits && n < want) {
                unsigned b = (unsigned)__builtin_ctzll(bits);
                bits &= bits - 1;
                size_t off = ((size_t)w * 64 + b) * c->size;
                if (s->purged)
                    touch_block(cc, s, off, c->size);
                struct tnode *node = (struct tnode *)(start + off);
                node->slack = small_slack_slot((uintptr_t)node, c);
                *link = node;
                link = &node->next;
                n++;
                s->free_count--;
            }
            bm[w] = bits;
            if (!bits)
                w++;
        }
        s->scan_word = w;
        if (s->free_count == 0)
            partial_remove(cc, s);
#if HEAPLAB_DEBUG
        hl_assert(span_is_valid(s), "span invalid after refill");
#endif
    }
    *link = NULL;
    cc->out_bytes += (size_t)n * c->size;
    size_t after = free_resident(cc);
    pthread_mutex_unlock(class_lock(cls));
    stats_note_free_resident(before, after);
    *out = first;
    return n;
}

/* Returns a list of blocks to their bitmaps (class lock held). */
static void return_to_bitmaps(struct class_central *cc, const struct size_class *c, struct tnode *list, uint64_t now)
{
    for (struct tnode *node = list; node;) {
        struct tnode *next = node->next;
        uintptr_t a = (uintptr_t)node;
        struct small_seg *seg = small_seg_of(a);
        unsigned head = span_head_of(a, c);
        struct span *s = &seg->spans[head];
        size_t off = a - span_start(seg, head);
        size_t idx = (off * c->recip) >> RECIP_SHIFT;
        span_bitmap(seg, head)[idx / 64] |= (uint64_t)1 << (idx % 64);
        if (idx / 64 < s->scan_word)
            s->scan_word = (uint32_t)(idx / 64);
        if (s->free_count++ == 0)
            partial_push(cc, s);
        if (!s->in_dirty)
            dirty_push(cc, s, now);
#if HEAPLAB_DEBUG
        hl_assert(span_is_valid(s), "span invalid after a block came back");
#endif
        node = next;
    }
}

/* Empties the transfer slots into the bitmaps (class lock held). */
static void drain_transfer(struct class_central *cc, const struct size_class *c, uint64_t now)
{
    while (cc->xfer_count) {
        cc->xfer_count--;
        return_to_bitmaps(cc, c, cc->xfer[cc->xfer_count], now);
    }
    cc->xfer_bytes = 0;
}

void central_flush(unsigned cls, struct tnode *list, unsigned n)
{
    const struct size_class *c = &hl_classes[cls];
    struct class_central *cc = &hl_central[cls];
    uint64_t now = atomic_load_explicit(&hl_clock_ms, memory_order_relaxed);
    pthread_mutex_lock(class_lock(cls));
    size_t bytes = (size_t)n * c->size;
    if (n >= TRANSFER_MIN_BLOCKS && cc->xfer_count < TRANSFER_SLOTS && cc->xfer_bytes + bytes <= TRANSFER_BYTES) {
        cc->xfer[cc->xfer_count] = list;
        cc->xfer_n[cc->xfer_count] = n;
        cc->xfer_owner[cc->xfer_count] = &hl_tc;
        cc->xfer_count++;
        cc->xfer_bytes += bytes;
        cc->xfer_since_ms = now;
    } else {
        return_to_bitmaps(cc, c, list, now);
    }
    cc->out_bytes -= (size_t)n * c->size;
    pthread_mutex_unlock(class_lock(cls));
    stats_note_free_resident(0, (size_t)n * c->size);
    atomic_fetch_or_explicit(&hl_dirty_classes[cls / 64], (uint64_t)1 << (cls % 64), memory_order_relaxed);
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

/* madvise every run of set bits of `m` (OS pages of the span at `start`) */
static void purge_os_pages(uintptr_t start, uint64_t m)
{
    while (m) {
        unsigned lo = (unsigned)__builtin_ctzll(m);
        uint64_t shifted = m >> lo;
        unsigned len = ~shifted ? (unsigned)__builtin_ctzll(~shifted) : 64;
        if (os_purge((void *)(start + ((uintptr_t)lo << OS_PAGE_SHIFT)), (size_t)len << OS_PAGE_SHIFT) == 0)
            atomic_fetch_add_explicit(&hl_os.purge_count, 1, memory_order_relaxed);
        m &= ~os_page_mask(lo, lo + len - 1);
    }
}

/* Purges every OS page of the span that only free blocks overlap; returns
 * bytes purged. Class lock held. */
static size_t purge_span(struct class_central *cc, struct span *s)
{
    const struct size_class *c = &hl_classes[s->cls];
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
    purge_os_pages(span_start(seg, head), fresh);
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

size_t central_purge(unsigned cls, uint64_t now_ms, uint64_t age_ms, bool try, size_t *excess)
{
    struct class_central *cc = &hl_central[cls];
    const struct size_class *c = &hl_classes[cls];
    size_t released = 0;
    if (try) {
        if (pthread_mutex_trylock(class_lock(cls)) != 0)
            return 0;
    } else {
        pthread_mutex_lock(class_lock(cls));
    }
    size_t before = free_resident(cc);
    /* stored batches untouched for as long go to the bitmaps first, where
     * their pages can be purged */
    if (cc->xfer_count && (age_ms == 0 || now_ms - cc->xfer_since_ms >= age_ms))
        drain_transfer(cc, c, now_ms);
    struct span *s = cc->dirty_tail;
    while (s && (age_ms == 0 || now_ms - s->dirty_since_ms >= age_ms) && (!excess || *excess > 0)) {
        struct span *older_next = s->dprev;
        size_t bytes = purge_span(cc, s);
        released += bytes;
        consume(excess, bytes);
        dirty_remove(cc, s);
        if (s->free_count == c->capacity) {
            /* no live block left: the span goes back whole, for any class */
            size_t span_bytes = span_bytes_of(c);
            partial_remove(cc, s);
            cc->spans--;
            cc->span_bytes -= span_bytes;
            cc->purged_bytes -= span_bytes;
            segment_span_release(s);
        }
        s = older_next;
    }
    if (!cc->dirty && !cc->xfer_count)
        atomic_fetch_and_explicit(&hl_dirty_classes[cls / 64], ~((uint64_t)1 << (cls % 64)), memory_order_relaxed);
    size_t after = free_resident(cc);
    pthread_mutex_unlock(class_lock(cls));
    stats_note_free_resident(before, after);
    return released;
}
