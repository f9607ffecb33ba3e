/* heaplab core: large blocks (above MEDIUM_MAX, or over-aligned).
 *
 * Each block is its own mapping at a 4 MiB boundary, header first. A freed
 * mapping is kept in a small cache (bounded in entries and bytes) and reused
 * by a later request it fits without being more than twice too big; cached
 * mappings older than LARGE_DECAY_MS are unmapped. A growing realloc first
 * tries mremap in place, then moves the pages (no copy) to a new aligned
 * address. One lock; every operation here costs a syscall or a page fault
 * far more than the lock.
 *
 * A block aligned to more than LARGE_ALIGN_IN_CHUNK starts at a chunk
 * boundary itself, so its header cannot sit at the start of its chunk: its
 * mapping starts one OS page below the block, header first, and the block's
 * chunk is registered as KIND_LARGE_ALIGNED (free() then finds the header
 * one page below the pointer; a pointer into a plain large mapping is never
 * read that way, so a wild one still fails without a fault). These blocks
 * are rare: they are never cached, and a realloc copies them.
 *
 * The registry entry of a range is cleared before the range goes back to
 * the OS (unmapped or moved away): from then on another thread may map a
 * block of its own there and register it. */
#include "internal.h"

#include <errno.h>
#include <string.h>

#define LARGE_MAGIC 0x686561706c617267ULL /* "heaplarg" */
#define LARGE_CACHE_ENTRIES 16
#define LARGE_CACHE_BYTES ((size_t)128 << 20)
/* a cached mapping serves a request when it is at most this many times the need */
#define LARGE_REUSE_FACTOR 2

enum large_state { LARGE_LIVE = 1, LARGE_CACHED = 2 };

/* At the start of every large mapping. Invariants: check == LARGE_MAGIC ^
 * address; the user pointer is base + offset, inside the first 4 MiB;
 * offset + request <= map_size. */
struct large_hdr {
    uintptr_t check;
    size_t map_size; /* bytes mapped, a multiple of OS_PAGE */
    size_t offset;   /* user pointer - base: >= header, a multiple of the alignment (or OS_PAGE) */
    size_t request;
    struct large_hdr *next, *prev; /* live list, or cache list (newest first) */
    uint64_t since_ms;             /* cached: when freed */
    uint32_t state;
    uint32_t chunk_aligned;        /* 1: the block starts a chunk (KIND_LARGE_ALIGNED) */
};
#define LARGE_HDR_BYTES ((size_t)64)
_Static_assert(sizeof(struct large_hdr) <= LARGE_HDR_BYTES, "large header fits");

/* Counters (under lock): live_map == sum of map_size over live blocks,
 * live_offset == sum of offsets, live_request == sum of requests,
 * cache_bytes == sum of map_size over cached mappings. */
static struct {
    core_mutex lock;
    struct large_hdr *live, *cache;
    size_t live_count, live_map, live_offset, live_request;
    size_t cache_count, cache_bytes;
    size_t allocs, frees;
} L = {.lock = CORE_MUTEX_INIT};

/* The expensive tier's check before the lock goes (lock held). */
static void lists_checked_unlock(void)
{
    CORE_ASSERT_EXPENSIVE(large_lists_validate() == 0, "large lists invalid");
    core_mutex_unlock(&L.lock);
}

static void list_push(struct large_hdr **head, struct large_hdr *h)
{
    h->prev = NULL;
    h->next = *head;
    if (*head)
        (*head)->prev = h;
    *head = h;
}

static void list_remove(struct large_hdr **head, struct large_hdr *h)
{
    if (h->prev)
        h->prev->next = h->next;
    else
        *head = h->next;
    if (h->next)
        h->next->prev = h->prev;
}

/* the chunk whose registry entry names this mapping: the block's own */
static void *registry_key(const struct large_hdr *h)
{
    return h->chunk_aligned ? (char *)h + OS_PAGE : (char *)h;
}

static void unmap_mapping(struct large_hdr *h)
{
    registry_set(registry_key(h), KIND_NONE);
    os_unmap(h, h->map_size);
    atomic_fetch_add_explicit(&core_os.unmap_count, 1, memory_order_relaxed);
}

static struct large_hdr *cache_take(size_t need)
{
    CORE_ASSERT(core_mutex_is_held(&L.lock), "large cache read without the lock");
    struct large_hdr *best = NULL;
    for (struct large_hdr *h = L.cache; h; h = h->next)
        if (h->map_size >= need && h->map_size / LARGE_REUSE_FACTOR <= need && (!best || h->map_size < best->map_size))
            best = h;
    if (best) {
        list_remove(&L.cache, best);
        L.cache_count--;
        L.cache_bytes -= best->map_size;
    }
    return best;
}

/* the largest cached mapping smaller than `need` (removed from the cache) */
static struct large_hdr *cache_take_smaller(size_t need)
{
    CORE_ASSERT(core_mutex_is_held(&L.lock), "large cache read without the lock");
    struct large_hdr *best = NULL;
    for (struct large_hdr *h = L.cache; h; h = h->next)
        if (h->map_size < need && (!best || h->map_size > best->map_size))
            best = h;
    if (best) {
        list_remove(&L.cache, best);
        L.cache_count--;
        L.cache_bytes -= best->map_size;
    }
    return best;
}

/* Grows the mapping at h (not chunk-aligned, owned by the caller) to `need`
 * bytes, in place or by moving its pages (no copy) to a new aligned
 * address. Returns the new header or NULL (h is then still mapped,
 * unchanged). Registry entries follow the move: the old one is cleared
 * before the move releases the old range, which another thread may map and
 * register the moment it is free. */
static struct large_hdr *grow_mapping(struct large_hdr *h, size_t need)
{
    size_t old = h->map_size;
    if (os_remap_inplace(h, old, need) == 0) {
        h->map_size = need;
        return h;
    }
    void *dst = os_map_aligned(need, SEG_SIZE, "heaplab-large");
    if (!dst)
        return NULL;
    registry_set(h, KIND_NONE);
    if (os_move_to(h, old, dst) != 0) {
        registry_set(h, KIND_LARGE);
        os_unmap(dst, need);
        return NULL;
    }
    atomic_fetch_add_explicit(&core_os.map_count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&core_os.unmap_count, 1, memory_order_relaxed);
    struct large_hdr *moved = dst;
    moved->map_size = need;
    registry_set(moved, KIND_LARGE);
    return moved;
}

static void live_insert(struct large_hdr *h, size_t offset, size_t request)
{
    CORE_ASSERT(core_mutex_is_held(&L.lock) && offset + request <= h->map_size,
                "large block listed without the lock, or bigger than its mapping");
    h->check = LARGE_MAGIC ^ (uintptr_t)h;
    h->offset = offset;
    h->request = request;
    h->state = LARGE_LIVE;
    list_push(&L.live, h);
    L.live_count++;
    /* mutant 6: a large block's mapping left out of the counters */
    L.live_map += CORE_MUTANT(6) ? 0 : h->map_size;
    L.live_offset += offset;
    L.live_request += request;
}

static void live_remove(struct large_hdr *h)
{
    CORE_ASSERT(core_mutex_is_held(&L.lock) && h->state == LARGE_LIVE, "large block unlisted without the lock, or not live");
    list_remove(&L.live, h);
    L.live_count--;
    L.live_map -= h->map_size;
    L.live_offset -= h->offset;
    L.live_request -= h->request;
}

/* A block aligned to a chunk or more: its own mapping, never cached. */
static void *chunk_aligned_malloc(size_t size, size_t align)
{
    size_t need = (OS_PAGE + size + OS_PAGE - 1) & ~(OS_PAGE - 1);
    struct large_hdr *h = os_map_aligned_at(need, align, OS_PAGE, "heaplab-large");
    if (!h) {
        errno = ENOMEM;
        return NULL;
    }
    atomic_fetch_add_explicit(&core_os.map_count, 1, memory_order_relaxed);
    h->map_size = need;
    h->chunk_aligned = 1;
    registry_set(registry_key(h), KIND_LARGE_ALIGNED);
    core_mutex_lock(&L.lock);
    live_insert(h, OS_PAGE, size);
    L.allocs++;
    lists_checked_unlock();
    tcache_note_live((intptr_t)size);
    decay_tick(&core_tc.slow_events);
    return (char *)h + OS_PAGE;
}

void *large_malloc(size_t size, size_t align, bool zero)
{
    size_t offset = align > LARGE_HDR_BYTES ? align : LARGE_HDR_BYTES;
    /* (align <= SIZE_MAX / 2 + 1: a power of two) */
    if (size > PTRDIFF_MAX - offset - OS_PAGE || align > PTRDIFF_MAX - size - OS_PAGE) {
        errno = ENOMEM;
        return NULL;
    }
    if (align > LARGE_ALIGN_IN_CHUNK)
        return chunk_aligned_malloc(size, align);
    size_t need = (offset + size + OS_PAGE - 1) & ~(OS_PAGE - 1);
    core_mutex_lock(&L.lock);
    struct large_hdr *h = cache_take(need);
    struct large_hdr *smaller = h ? NULL : cache_take_smaller(need);
    lists_checked_unlock();
    bool fresh = false;
    if (smaller) {
        /* its resident pages are reused; only the growth is new */
        h = grow_mapping(smaller, need);
        if (!h)
            unmap_mapping(smaller);
    }
    if (!h) {
        h = os_map_aligned(need, SEG_SIZE, "heaplab-large");
        if (!h) {
            errno = ENOMEM;
            return NULL;
        }
        atomic_fetch_add_explicit(&core_os.map_count, 1, memory_order_relaxed);
        h->map_size = need;
        registry_set(h, KIND_LARGE);
        fresh = true;
    }
    core_mutex_lock(&L.lock);
    live_insert(h, offset, size);
    L.allocs++;
    lists_checked_unlock();
    void *p = (char *)h + offset;
    if (zero && !fresh)
        memset(p, 0, size);
    tcache_note_live((intptr_t)size);
    decay_tick(&core_tc.slow_events);
    return p;
}

/* Where the header of a large block at `a` is, by the registry's kind: one
 * OS page below a chunk-aligned block, else at the start of its chunk. */
static struct large_hdr *header_of(uintptr_t a, enum seg_kind kind)
{
    if (kind == KIND_LARGE_ALIGNED)
        return (struct large_hdr *)(a - OS_PAGE);
    return (struct large_hdr *)(a & ~(uintptr_t)SEG_MASK);
}

/* The header of live large block p; aborts naming `what` when p is not one.
 * Reads only memory the registry says is a large mapping's. */
static struct large_hdr *valid_header(void *p, const char *what)
{
    uintptr_t a = (uintptr_t)p;
    enum seg_kind kind = registry_kind(a);
    bool shape_ok = kind == KIND_LARGE_ALIGNED ? (a & SEG_MASK) == 0
                                               : !(a & (CORE_ALIGN - 1)) && (a & SEG_MASK) >= LARGE_HDR_BYTES;
    if (!shape_ok)
        core_fail_pointer(what, p);
    struct large_hdr *h = header_of(a, kind);
    if (h->check != (LARGE_MAGIC ^ (uintptr_t)h) || h->state != LARGE_LIVE || (char *)h + h->offset != (char *)p)
        core_fail_pointer(what, p);
    return h;
}

size_t large_usable(void *p, const char *what)
{
    struct large_hdr *h = valid_header(p, what);
    return h->map_size - h->offset;
}

void large_free(void *p)
{
    struct large_hdr *h = valid_header(p, CORE_INVALID_FREE);
    struct large_hdr *evict = NULL;
    uint64_t now = os_now_ms();
    core_mutex_lock(&L.lock);
    size_t request = h->request;
    live_remove(h);
    L.frees++;
    h->state = LARGE_CACHED;
    h->since_ms = now;
    if (h->map_size > LARGE_CACHE_BYTES || h->chunk_aligned) {
        evict = h;
    } else {
        list_push(&L.cache, h);
        L.cache_count++;
        L.cache_bytes += h->map_size;
        /* over the bounds: the oldest entry goes (one per free keeps it bounded) */
        if (L.cache_count > LARGE_CACHE_ENTRIES || L.cache_bytes > LARGE_CACHE_BYTES) {
            struct large_hdr *old = L.cache;
            while (old->next)
                old = old->next;
            list_remove(&L.cache, old);
            L.cache_count--;
            L.cache_bytes -= old->map_size;
            evict = old;
        }
    }
    lists_checked_unlock();
    if (evict)
        unmap_mapping(evict);
    tcache_note_live(-(intptr_t)request);
    decay_tick(&core_tc.slow_events);
}

void *large_realloc(void *p, size_t size)
{
    /* (p was validated by the caller's large_usable) */
    struct large_hdr *h = header_of((uintptr_t)p, registry_kind((uintptr_t)p));
    size_t offset = h->offset;
    /* (a chunk-aligned block's mapping cannot follow it to a new chunk) */
    if (size > PTRDIFF_MAX - offset - OS_PAGE || h->chunk_aligned)
        return NULL;
    size_t need = (offset + size + OS_PAGE - 1) & ~(OS_PAGE - 1);
    size_t old_request = h->request;
    core_mutex_lock(&L.lock);
    live_remove(h);
    lists_checked_unlock();
    struct large_hdr *result = h;
    size_t old_map = h->map_size;
    if (need <= old_map) {
        /* shrink in place when at least half would be spare */
        if (need <= old_map / 2 && os_remap_inplace(h, old_map, need) == 0)
            h->map_size = need;
    } else {
        result = grow_mapping(h, need);
    }
    core_mutex_lock(&L.lock);
    if (result)
        live_insert(result, offset, size);
    else
        live_insert(h, offset, old_request);
    lists_checked_unlock();
    if (!result)
        return NULL;
    tcache_note_live((intptr_t)(size - old_request));
    return (char *)result + offset;
}

size_t large_purge(uint64_t now_ms, uint64_t age_ms, bool try)
{
    struct large_hdr *victims = NULL;
    size_t released = 0;
    if (try) {
        if (!core_mutex_trylock(&L.lock))
            return 0;
    } else {
        core_mutex_lock(&L.lock);
    }
    struct large_hdr *h = L.cache;
    while (h) {
        struct large_hdr *next = h->next;
        if (age_ms == 0 || now_ms - h->since_ms >= age_ms) {
            list_remove(&L.cache, h);
            L.cache_count--;
            L.cache_bytes -= h->map_size;
            h->next = victims;
            victims = h;
        }
        h = next;
    }
    lists_checked_unlock();
    while (victims) {
        struct large_hdr *next = victims->next;
        released += victims->map_size;
        unmap_mapping(victims);
        victims = next;
    }
    return released;
}

void large_lock(void)
{
    core_mutex_lock(&L.lock);
}

void large_unlock(void)
{
    core_mutex_unlock(&L.lock);
}

/* Live, rounding and metadata from the live blocks' headers, the cache
 * from its list, the mapped total from the counters (see stats.c). */
void large_stats(hl_stats_t *s)
{
    s->mapped += L.live_map + L.cache_bytes;
    for (const struct large_hdr *h = L.live; h; h = h->next) {
        s->live += h->request;
        s->metadata += h->offset;
        s->rounding += h->map_size - h->offset - h->request;
    }
    for (const struct large_hdr *h = L.cache; h; h = h->next)
        s->large_cache += h->map_size;
    s->alloc_count += L.allocs;
    s->free_count += L.frees;
}

int large_lists_validate(void)
{
    int bad = 0;
    size_t n = 0, map = 0, off = 0, req = 0;
    for (struct large_hdr *h = L.live; h; h = h->next) {
        n++;
        map += h->map_size;
        off += h->offset;
        req += h->request;
        enum seg_kind kind = h->chunk_aligned ? KIND_LARGE_ALIGNED : KIND_LARGE;
        if (h->check != (LARGE_MAGIC ^ (uintptr_t)h) || h->state != LARGE_LIVE || h->offset + h->request > h->map_size ||
            registry_kind((uintptr_t)registry_key(h)) != kind) {
            core_report("large block header or registry entry broken", (uintptr_t)h);
            bad++;
        }
    }
    if (n != L.live_count || map != L.live_map || off != L.live_offset || req != L.live_request) {
        core_report("large live counters disagree with the live list", n);
        bad++;
    }
    size_t cn = 0, cb = 0;
    for (struct large_hdr *h = L.cache; h; h = h->next) {
        cn++;
        cb += h->map_size;
        if (h->state != LARGE_CACHED || h->chunk_aligned || registry_kind((uintptr_t)h) != KIND_LARGE) {
            core_report("cached large mapping in a wrong state", (uintptr_t)h);
            bad++;
        }
    }
    if (cn != L.cache_count || cb != L.cache_bytes || cn > LARGE_CACHE_ENTRIES) {
        core_report("large cache counters disagree with the cache list", cn);
        bad++;
    }
    return bad;
}
