/* heaplab core: the public hl_ functions.
 *
 * Fast paths (instruction counts from callgrind on tmalloc-st-64, gcc 12 Release):
 *   small malloc, 20: one load of a table indexed by the size gives the
 *     bin's offset, a pop of an entry from the thread's bin (addressed
 *     through %fs), a prefetch of the next entry's block, the request + 1
 *     stored in the block's slot (the entry carries the slot's address),
 *     two counters;
 *   small free, 39: the pointer's top bits against the small segments'
 *     range, the page's info entry, one 64x64->128 multiply that both
 *     validates the offset and yields the block index, the slot (0 means
 *     "not live": a double or wild free), a push of an entry. Neither
 *     touches the block itself.
 * No lock, no atomic read-modify-write. Everything else is noinline and
 * named *_slow. */
#include "internal.h"

#include <errno.h>
#include <string.h>

#define VERSION_STRING "heaplab 0.1.0"

/* ---- small fast paths --------------------------------------------------- */

/* The thread cache through the thread pointer's segment register (%fs on
 * x86-64): an access adds the cache's offset inside the instruction, where
 * a plain pointer to it first loads the thread pointer from %fs:0 and adds
 * the offset (a load and an add more on every malloc and free). GNU C names
 * that segment the __seg_fs address space; this file is compiled as gnu11
 * for it (core/CMakeLists.txt). The sanitizer builds keep the plain
 * pointer: ThreadSanitizer's atomics take no such pointers, and
 * AddressSanitizer checks its shadow at the offset as if it were an address
 * (a fault on the first malloc). */
#if defined(__SEG_FS) && defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define TC_SEG __seg_fs
static inline struct tcache TC_SEG *tcache_here(void)
{
    uintptr_t off;
    /* the cache's offset from the thread pointer: a load from the GOT in
     * the shared library, an immediate once the linker has placed the
     * static library's TLS in a program (it rewrites this instruction) */
    __asm__("movq core_tc@gottpoff(%%rip), %0" : "=r"(off));
    return (struct tcache TC_SEG *)off;
}
#else
#define TC_SEG
static inline struct tcache *tcache_here(void)
{
    return tcache_self();
}
#endif

static inline struct tbin TC_SEG *tcache_here_bin(struct tcache TC_SEG *tc, size_t bin_offset)
{
    return (struct tbin TC_SEG *)((char TC_SEG *)tc->bins + bin_offset);
}

/* bin_offset: the class's bin, cls * BIN_BYTES */
static inline void *small_malloc(size_t size, size_t bin_offset)
{
    struct tcache TC_SEG *tc = tcache_here();
    struct tbin TC_SEG *b = tcache_here_bin(tc, bin_offset);
    struct tentry *e = b->top;
    if (CORE_UNLIKELY(low32(e) == b->base_lo))
        return small_malloc_slow(size, (unsigned)(bin_offset / BIN_BYTES));
    e--;
    OWNER_STORE(b->top, e);
    /* The block this bin hands out next, on its way into the cache while
     * the program writes this one: heaplab never touches a block, so the
     * program's first write to it missed, where an allocator that threads
     * its free list through the blocks has just read the line. At the
     * bin's base, e[-1] is the region's guard entry or another bin's: a
     * stale address, which a prefetch ignores (tcache.c, tcache_init). */
    os_prefetch_for_write(e[-1].ptr);
    atomic_store_explicit(e->slot, slot_value(size), memory_order_relaxed);
    OWNER_ADD(tc->small_requested, size);
    OWNER_ADD(tc->allocs, 1);
    return e->ptr;
}

/* Validates a pointer into a small segment (registry already says small)
 * and returns its page's info and its live slot; aborts on anything
 * heaplab did not hand out live, naming `what` (the function called). */
static inline const struct page_info *small_validate(uintptr_t a, _Atomic uint16_t **slot_out, uint16_t *value_out,
                                                     const char *what)
{
    const struct page_info *pi = &small_seg_of(a)->page_info[page_index(a)];
    size_t off = a & pi->span_mask;
    unsigned __int128 t = (unsigned __int128)off * pi->recip;
    /* not a block start (or no span here: recip is 0) */
    if (CORE_UNLIKELY((uint64_t)t >= pi->recip))
        core_fail_pointer(what, (void *)a);
    /* indexes past the span's last block have slots that are always 0 */
    _Atomic uint16_t *slot = pi->slots + (size_t)(t >> 64);
    uint16_t value = atomic_load_explicit(slot, memory_order_relaxed);
    /* 0: the block is not live (already freed, or in a cache) */
    if (CORE_UNLIKELY(value == 0))
        core_fail_pointer(what, (void *)a);
    *slot_out = slot;
    *value_out = value;
    return pi;
}

/* A block of another heap goes into the thread's remote bin of its class,
 * to be sent home with others (tcache.c, send_home); the bin's last entry,
 * and a thread that does not cache (its bins have no room), take the slow
 * path. */
static CORE_NOINLINE void small_free_remote(uintptr_t a, _Atomic uint16_t *slot, size_t request, unsigned cls)
{
    struct tcache *tc = tcache_self();
    const struct tbin *b = &tc->bins[cls];
    unsigned n = tc->remote_n[cls];
    if (CORE_UNLIKELY(b->end_lo == b->base_lo || n + 1 >= core_remote_max[cls])) {
        small_free_slow((void *)a, cls, slot, request);
        return;
    }
    struct tentry *r = tc->region + core_remote_first[cls] + n;
    r->ptr = (void *)a;
    r->slot = slot;
    OWNER_STORE(tc->remote_n[cls], (uint8_t)(n + 1));
    OWNER_ADD(tc->small_released, request);
}

static inline void small_free(uintptr_t a)
{
    _Atomic uint16_t *slot;
    uint16_t value;
    const struct page_info *pi = small_validate(a, &slot, &value, CORE_INVALID_FREE);
    size_t request = (size_t)value - 1;
    atomic_store_explicit(slot, 0, memory_order_relaxed);
    struct tcache TC_SEG *tc = tcache_here();
    size_t bin_offset = pi->bin_offset;
    struct tbin TC_SEG *b = tcache_here_bin(tc, bin_offset);
    struct tentry *e = b->top;
    if (CORE_UNLIKELY(pi->heap != tc->arena)) {
        small_free_remote(a, slot, request, pi->cls);
        return;
    }
    if (CORE_UNLIKELY(low32(e) == b->end_lo)) {
        small_free_slow((void *)a, (unsigned)(bin_offset / BIN_BYTES), slot, request);
        return;
    }
    e->ptr = (void *)a;
    e->slot = slot;
    OWNER_STORE(b->top, e + 1);
    /* (frees are not counted here: stats derive them from allocs and the
     * blocks still out) */
    OWNER_ADD(tc->small_released, request);
}

/* ---- medium, large and odd cases ---------------------------------------- */

static CORE_NOINLINE void *malloc_big_slow(size_t size)
{
    if (size > PTRDIFF_MAX) {
        errno = ENOMEM;
        return NULL;
    }
    core_ensure_init();
    if (size <= MEDIUM_MAX)
        return medium_malloc(size);
    return large_malloc(size, CORE_ALIGN, false);
}

static CORE_NOINLINE void free_other_slow(void *p)
{
    if (p == NULL)
        return;
    enum seg_kind kind = registry_kind((uintptr_t)p);
    if (kind == KIND_SMALL)
        small_free((uintptr_t)p); /* a small segment outside the range */
    else if (kind == KIND_MEDIUM)
        medium_free(p, false);
    else if (kind_is_large(kind))
        large_free(p);
    else
        core_fail_pointer(CORE_INVALID_FREE, p);
}

void *hl_malloc(size_t size)
{
    if (CORE_LIKELY(size <= SMALL_MAX))
        return small_malloc(size, size_to_bin_offset(size));
    return malloc_big_slow(size);
}

void hl_free(void *p)
{
    uintptr_t a = (uintptr_t)p;
    if (CORE_LIKELY(small_range_holds(a))) {
        small_free(a);
        return;
    }
    free_other_slow(p);
}

void hl_free_sized(void *p, size_t size)
{
    (void)size;
    hl_free(p);
}

void hl_free_aligned_sized(void *p, size_t align, size_t size)
{
    (void)align;
    (void)size;
    hl_free(p);
}

void *hl_calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total) || total > PTRDIFF_MAX) {
        errno = ENOMEM;
        return NULL;
    }
    if (total > MEDIUM_MAX) {
        core_ensure_init();
        return large_malloc(total, CORE_ALIGN, true);
    }
    void *p = hl_malloc(total);
    if (p)
        memset(p, 0, total);
    return p;
}

size_t hl_usable_size(void *p)
{
    uintptr_t a = (uintptr_t)p;
    if (p == NULL)
        return 0;
    switch (registry_kind(a)) {
    case KIND_SMALL: {
        _Atomic uint16_t *slot;
        uint16_t value;
        return small_validate(a, &slot, &value, CORE_INVALID_USABLE)->size;
    }
    case KIND_MEDIUM:
        return medium_usable(p, CORE_INVALID_USABLE);
    case KIND_LARGE:
    case KIND_LARGE_ALIGNED:
        return large_usable(p, CORE_INVALID_USABLE);
    default:
        core_fail_pointer(CORE_INVALID_USABLE, p);
    }
}

static bool is_pow2(size_t x)
{
    return x != 0 && (x & (x - 1)) == 0;
}

/* align: a power of two */
static void *aligned_internal(size_t align, size_t size)
{
    if (size > PTRDIFF_MAX) {
        errno = ENOMEM;
        return NULL;
    }
    if (align <= CORE_ALIGN)
        return hl_malloc(size);
    core_ensure_init();
    unsigned cls = class_for_aligned(size, align);
    if (cls < NCLASSES)
        return small_malloc(size, (size_t)cls * BIN_BYTES);
    return large_malloc(size, align, false);
}

void *hl_aligned_alloc(size_t align, size_t size)
{
    if (!is_pow2(align)) {
        errno = EINVAL;
        return NULL;
    }
    return aligned_internal(align, size);
}

int hl_posix_memalign(void **out, size_t align, size_t size)
{
    if (!is_pow2(align) || align % sizeof(void *) != 0)
        return EINVAL;
    int saved = errno;
    void *p = aligned_internal(align, size);
    if (!p) {
        errno = saved;
        return ENOMEM;
    }
    *out = p;
    return 0;
}

void *hl_memalign(size_t align, size_t size)
{
    /* glibc rounds a non-power-of-two alignment up */
    if (align > SIZE_MAX / 2 + 1) {
        errno = EINVAL;
        return NULL;
    }
    if (!is_pow2(align)) {
        size_t a = CORE_ALIGN;
        while (a < align)
            a <<= 1;
        align = a;
    }
    return aligned_internal(align, size);
}

void *hl_valloc(size_t size)
{
    return aligned_internal(OS_PAGE, size);
}

void *hl_pvalloc(size_t size)
{
    size_t rounded = (size + OS_PAGE - 1) & ~(OS_PAGE - 1);
    if (rounded < size) {
        errno = ENOMEM;
        return NULL;
    }
    return aligned_internal(OS_PAGE, rounded ? rounded : OS_PAGE);
}

/* realloc by moving: a new block, a copy, then the old block goes */
static void *realloc_move(void *p, size_t old_usable, size_t size)
{
    void *q = hl_malloc(size);
    if (!q)
        return NULL;
    memcpy(q, p, old_usable < size ? old_usable : size);
    hl_free(p);
    return q;
}

void *hl_realloc(void *p, size_t size)
{
    if (p == NULL)
        return hl_malloc(size);
    uintptr_t a = (uintptr_t)p;
    enum seg_kind kind = registry_kind(a);
    if (kind == KIND_NONE)
        core_fail_pointer(CORE_INVALID_REALLOC, p);
    if (size == 0) {
        /* glibc frees and returns NULL */
        if (kind == KIND_MEDIUM)
            medium_free(p, true);
        else
            hl_free(p);
        return NULL;
    }
    if (size > PTRDIFF_MAX) {
        errno = ENOMEM;
        return NULL;
    }
    if (kind == KIND_SMALL) {
        _Atomic uint16_t *slot;
        uint16_t value;
        const struct page_info *pi = small_validate(a, &slot, &value, CORE_INVALID_REALLOC);
        const struct size_class *c = &core_classes[pi->cls];
        /* stay when the block fits and is not more than twice too big */
        if (size <= c->size && (size > c->size / 2 || size_to_class(size) == pi->cls)) {
            size_t old_request = (size_t)value - 1;
            atomic_store_explicit(slot, slot_value(size), memory_order_relaxed);
            count_request_change(size, old_request);
            return p;
        }
        return realloc_move(p, c->size, size);
    }
    if (kind == KIND_MEDIUM) {
        size_t usable = medium_usable(p, CORE_INVALID_REALLOC);
        if (size > SMALL_MAX && size <= MEDIUM_MAX) {
            if (medium_resize_inplace(p, size) == 0)
                return p;
        } else {
            /* (resize_inplace checked them otherwise) */
            medium_realloc_check_tags(p);
        }
        return realloc_move(p, usable, size);
    }
    size_t usable = large_usable(p, CORE_INVALID_REALLOC);
    if (size > MEDIUM_MAX) {
        void *q = large_realloc(p, size);
        if (q)
            return q;
    }
    return realloc_move(p, usable, size);
}

void *hl_reallocarray(void *p, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return hl_realloc(p, total);
}

/* ---- control ------------------------------------------------------------ */

enum hl_route hl_route(size_t size, size_t align)
{
    if (align == 0)
        align = 1;
    if (!is_pow2(align) || size > PTRDIFF_MAX)
        return HL_ROUTE_INVALID;
    core_ensure_init();
    if (class_for_aligned(size, align) < NCLASSES)
        return HL_ROUTE_SMALL;
    if (align > CORE_ALIGN)
        return HL_ROUTE_LARGE;
    return size <= MEDIUM_MAX ? HL_ROUTE_MEDIUM : HL_ROUTE_LARGE;
}

const char *hl_route_name(enum hl_route r)
{
    switch (r) {
    case HL_ROUTE_SMALL:
        return "small";
    case HL_ROUTE_MEDIUM:
        return "medium";
    case HL_ROUTE_LARGE:
        return "large";
    default:
        return "invalid";
    }
}

int hl_set_tcache(int on)
{
    core_ensure_init();
    int prev = atomic_exchange_explicit(&core_tcache_on, on ? 1 : 0, memory_order_relaxed);
    /* other threads follow on their next slow path */
    tcache_apply_mode();
    return prev;
}

int hl_tcache_enabled(void)
{
    core_ensure_init();
    return atomic_load_explicit(&core_tcache_on, memory_order_relaxed);
}

void hl_thread_flush(void)
{
    if (!atomic_load_explicit(&core_initialized, memory_order_acquire))
        return;
    tcache_flush_all(&core_tc);
}

const char *hl_version(void)
{
    return VERSION_STRING;
}
