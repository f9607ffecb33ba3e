/* heaplab core: shared layouts, constants and cross-file prototypes.
 *
 * Map of the core (one file per job):
 *   os.c         the OS contract (os.h)
 *   registry.c   which 4 MiB chunk of the address space is which kind of segment
 *   size_class.c small size classes and their span geometry
 *   segment.c    small segments: 64 KiB pages handed to classes as spans
 *   small.c      per-heap, per-class central state: refill, flush, decay purge
 *   tcache.c     per-thread caches, thread start/exit, the small slow paths
 *   medium.c     boundary-tag arenas for 8 KiB .. 1 MiB
 *   large.c      direct mappings with a decaying cache, mremap growth
 *   decay.c      the cheap clock check that drives purging from slow paths
 *   lock.c       the core's mutex (lock.h): a futex word
 *   stats.c      exact accounting snapshot
 *   check.c      invariant walker
 *   init.c       process start-up, fork handling, trim
 *   fail.c       the failure handler
 *   api.c        the hl_ functions
 *   preload.c    standard names, only in libheaplab-preload.so
 */
#ifndef HEAPLAB_INTERNAL_H
#define HEAPLAB_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heaplab.h"
#include "lock.h"
#include "os.h"

/* The debug level: 0 (release), 1 (internal checks) or 2 (expensive checks
 * too); see "checks in three tiers" below. */
#ifndef HEAPLAB_DEBUG
#define HEAPLAB_DEBUG 0
#endif
#if HEAPLAB_DEBUG != 0 && HEAPLAB_DEBUG != 1 && HEAPLAB_DEBUG != 2
#error "HEAPLAB_DEBUG must be 0, 1 or 2"
#endif
/* Deliberate mistakes for the mutation test (tests/core/mutants.c): built
 * only into the core_mutants library, where HEAPLAB_MUTANTS is 1 and the
 * environment's HEAPLAB_MUTANT picks one. Elsewhere CORE_MUTANT(n) is the
 * constant 0 and every mistake compiles away. */
#ifndef HEAPLAB_MUTANTS
#define HEAPLAB_MUTANTS 0
#endif
#if HEAPLAB_MUTANTS != 0 && HEAPLAB_MUTANTS != 1
#error "HEAPLAB_MUTANTS must be 0 or 1"
#endif

#define CORE_INTERNAL __attribute__((visibility("hidden")))
#define CORE_NOINLINE __attribute__((noinline))
#define CORE_LIKELY(x) __builtin_expect(!!(x), 1)
#define CORE_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- geometry ---------------------------------------------------------- */

/* Every segment is SEG_SIZE bytes mapped at a SEG_SIZE-aligned address, so
 * masking a pointer finds its segment header. */
#define SEG_SHIFT 22
#define SEG_SIZE ((size_t)1 << SEG_SHIFT)
#define SEG_MASK (SEG_SIZE - 1)

/* Small segments are cut into 64 KiB pages; a span is 1, 2 or 4 pages
 * aligned to its own size, holding blocks of one class. */
#define PAGE_SHIFT 16
#define PAGE_SIZE ((size_t)1 << PAGE_SHIFT)
#define PAGES_PER_SEG (SEG_SIZE / PAGE_SIZE)
#define SPAN_MAX_PAGES 4
#define OS_PAGES_PER_PAGE (PAGE_SIZE / OS_PAGE)

/* All returned pointers are 16-byte aligned; blocks are multiples of 16. */
#define CORE_ALIGN 16
#define CORE_ALIGN_SHIFT 4

/* Routing thresholds. */
/* Largest small size class. Above it the medium heap is exact to 16 bytes
 * (a 32-byte tag per block) where small classes would round by up to 12.5%
 * and leave span tails: the memory test's bytes are mostly above 8 KiB. */
#define SMALL_MAX ((size_t)8192)
#define MEDIUM_MAX ((size_t)1 << 20) /* requests above go to the large path */
/* Alignments the small path can honour: a power-of-two class is aligned to
 * its size within a span, and spans start on PAGE_SIZE boundaries. */
#define SMALL_ALIGN_MAX ((size_t)4096)
/* Large mappings aligned to at most this keep their header at the start of
 * the block's own chunk; blocks aligned to more (a chunk or more) keep it in
 * the OS page below the block (KIND_LARGE_ALIGNED). */
#define LARGE_ALIGN_IN_CHUNK (SEG_SIZE / 2)

/* ---- counters written by one thread, read by others -------------------- */

/* Thread-cache fields are written only by their owner and read by other
 * threads only for stats and checks (which are exact only while nobody
 * allocates). A plain read-modify-write is one instruction on the fast
 * path; ThreadSanitizer builds use relaxed atomics instead, so those reads
 * are not reported as races. */
#if defined(__SANITIZE_THREAD__)
#define OWNER_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#else
#define OWNER_STORE(x, v) ((x) = (v))
#endif
#define OWNER_ADD(x, v) OWNER_STORE(x, (x) + (v))
/* a read by a thread other than the owner */
#define SHARED_READ(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* ---- size classes (size_class.c) --------------------------------------- */

/* Classes 0..7 are 16..128 B in steps of 16; above 128 B there are 8 classes
 * per doubling (spacing size/8), so rounding stays below 12.5%. */
#define TINY_CLASSES 8
#define CLASSES_PER_DOUBLING 8
#define NCLASSES 56
/* exact division of a span offset by a block size: idx = off * recip >> 40 */
#define RECIP_SHIFT 40

struct size_class {
    uint32_t size;      /* block size, a multiple of 16 */
    uint32_t capacity;  /* blocks per span */
    uint64_t recip;     /* ceil(2^RECIP_SHIFT / size) */
    uint64_t span_mask; /* span bytes - 1: a block's offset in its span is addr & span_mask */
    uint8_t span_pages; /* pages per span: 1, 2 or 4 */
    uint8_t span_shift; /* log2(span bytes) */
};
_Static_assert(sizeof(struct size_class) == 32, "size_class layout: one shift to index");

/* filled once by size_class_init(), read-only afterwards */
extern struct size_class core_classes[NCLASSES] CORE_INTERNAL;

/* Bytes between two thread-cache bins (struct tbin, pinned below). */
#define BIN_BYTES 16
/* The class of every small size as a byte offset into the thread cache's
 * bins, indexed by the size itself (16 KiB): the fast malloc reaches its bin
 * in one load, with no rounding, shift or scaling. Read before start-up
 * too (all zeros then: class 0, whose empty bin sends the request to the
 * slow path), hence relaxed atomics. */
extern _Atomic uint16_t core_bin_of[SMALL_MAX + 1] CORE_INTERNAL;

/* The arithmetic definition the table is filled from. */
static inline unsigned size_to_class_slow(size_t size)
{
    if (size <= 128)
        return (unsigned)((size - (size != 0)) >> CORE_ALIGN_SHIFT);
    unsigned e = 63u - (unsigned)__builtin_clzl(size - 1);
    unsigned m = (unsigned)((size - 1) >> (e - 3)); /* 8..15 */
    return TINY_CLASSES + (e - 7) * CLASSES_PER_DOUBLING + (m - 8);
}

/* size <= SMALL_MAX */
static inline size_t size_to_bin_offset(size_t size)
{
    return atomic_load_explicit(&core_bin_of[size], memory_order_relaxed);
}

/* size <= SMALL_MAX (the slow paths' form of the same table) */
static inline unsigned size_to_class(size_t size)
{
    return (unsigned)(size_to_bin_offset(size) / BIN_BYTES);
}

/* Smallest class whose blocks can be `align`-aligned and hold `size`, or
 * NCLASSES when the small path cannot serve it. */
unsigned class_for_aligned(size_t size, size_t align) CORE_INTERNAL;
void size_class_init(void) CORE_INTERNAL;

/* ---- registry (registry.c) --------------------------------------------- */

/* KIND_LARGE: a large mapping starts here, its header first. KIND_LARGE_ALIGNED:
 * a large block aligned to a segment or more starts here (its mapping, header
 * first, one OS page below). */
enum seg_kind { KIND_NONE = 0, KIND_SMALL = 1, KIND_MEDIUM = 2, KIND_LARGE = 3, KIND_LARGE_ALIGNED = 4 };
/* addresses above this are never heaplab's */
#define ADDRESS_BITS 47
#define REGISTRY_ENTRIES ((size_t)1 << (ADDRESS_BITS - SEG_SHIFT))

extern _Atomic uint8_t core_registry[REGISTRY_ENTRIES] CORE_INTERNAL;

/* the fast free's test: one bounds check and one byte compare */
static inline bool registry_is_small(uintptr_t a)
{
    size_t i = a >> SEG_SHIFT;
    return CORE_LIKELY(i < REGISTRY_ENTRIES) && atomic_load_explicit(&core_registry[i], memory_order_relaxed) == KIND_SMALL;
}

static inline enum seg_kind registry_kind(uintptr_t a)
{
    if (CORE_UNLIKELY(a >> ADDRESS_BITS))
        return KIND_NONE;
    return (enum seg_kind)atomic_load_explicit(&core_registry[a >> SEG_SHIFT], memory_order_relaxed);
}
static inline bool kind_is_large(enum seg_kind kind)
{
    return kind == KIND_LARGE || kind == KIND_LARGE_ALIGNED;
}
void registry_set(void *seg, enum seg_kind kind) CORE_INTERNAL;

/* ---- the small segments' range (segment.c) ----------------------------- */

/* Small segments come from one reserved range of address space, aligned to
 * its size, while it lasts (and from anywhere after, or when the kernel
 * gives no such range): free()'s first test is then whether a pointer's top
 * bits name the range, a shift and a compare, where a registry lookup takes
 * a bounds check and a byte load from a table. Every address of the range
 * can be read: a segment's own, or the zeros of the reservation around
 * them, whose page_info fails every offset check, so a pointer into the
 * range that heaplab never returned is still refused without a fault.
 * HEAPLAB_SMALL_RANGE=0 reserves none (init.c). */
#define SMALL_RANGE_SHIFT 34
#define SMALL_RANGE_SEGS ((size_t)1 << (SMALL_RANGE_SHIFT - SEG_SHIFT))
/* the range's address >> SMALL_RANGE_SHIFT, or UINTPTR_MAX (no pointer's) */
extern _Atomic uintptr_t core_small_range_key CORE_INTERNAL;
static inline bool small_range_holds(uintptr_t a)
{
    return (a >> SMALL_RANGE_SHIFT) == atomic_load_explicit(&core_small_range_key, memory_order_relaxed);
}
/* reserves the range: at start-up, before any small segment */
void segment_range_init(void) CORE_INTERNAL;

/* ---- small segments (segment.c) ---------------------------------------- */

/* Per-span state; lives in the segment header at the span's first page.
 * Invariants (under the class lock):
 *   free_count == number of set bits in the span's bitmap (1 = free block)
 *   capacity - free_count blocks are "out": in some thread cache or live
 *   a set bit in `purged` means that OS page of the span was returned to the
 *     OS (or never touched) and every block overlapping it is free
 *   in_partial  <=> 0 < free_count   (span is on its class's partial list)
 *   in_dirty    <=> free blocks may still cover unpurged whole OS pages */
struct span {
    struct span *next, *prev;   /* class partial list */
    struct span *dnext, *dprev; /* class dirty list, oldest at the tail */
    uint64_t dirty_since_ms;    /* when a block last came back to its bitmap (coarse clock) */
    uint64_t purged;            /* bit j: OS page j of the span */
    uint32_t free_count;
    uint32_t scan_word;         /* no set bitmap bit below this word */
    uint8_t cls;
    uint8_t in_partial;
    uint8_t in_dirty;
    uint8_t pages;
    uint8_t heap;               /* the small heap whose lists and lock it belongs to */
};
_Static_assert(sizeof(struct span) <= 64, "span fits one cache line");
_Static_assert(SPAN_MAX_PAGES * OS_PAGES_PER_PAGE <= 64, "purged mask covers a span");

#define SMALL_SEG_MAGIC 0x68656170736d616cULL /* "heapsmal" */
/* Bytes of bitmap and of slot array reserved per 64 KiB page: the smallest
 * class (16 B) has PAGE_SIZE/16 blocks per page. */
#define MAX_BLOCKS_PER_PAGE (PAGE_SIZE / CORE_ALIGN)
#define BITMAP_BYTES_PER_PAGE (MAX_BLOCKS_PER_PAGE / 8)
#define SLOT_BYTES_PER_PAGE (MAX_BLOCKS_PER_PAGE * sizeof(uint16_t))
/* Slack arrays of consecutive pages are one cache line further apart than
 * their size: otherwise every span's first slots would share one L1 set
 * (all at the same offset modulo 4 KiB) and evict each other. */
#define CACHE_LINE 64
#define SLOTS_STRIDE (SLOT_BYTES_PER_PAGE + CACHE_LINE)

/* What free() needs to know about a page, from the address alone: one
 * 32-byte entry per page, a copy for every page of a span. All zero for a
 * page no span holds: a recip of 0 fails every offset check, so free() needs
 * no separate "is this page in use" test. */
struct page_info {
    uint64_t span_mask;      /* span bytes - 1: a block's span offset is addr & span_mask */
    /* ceil(2^64 / size). For an offset `off` in the span, off * recip (128
     * bits) has the block index in its high half, and its low half is below
     * recip exactly when size divides off (the span has at most 4096 blocks
     * and size <= 8192, so the rounding error never reaches recip). */
    uint64_t recip;
    _Atomic uint16_t *slots; /* the span's slot array */
    uint32_t size;           /* block size */
    uint16_t bin_offset;     /* cls * BIN_BYTES: the class's thread-cache bin */
    uint8_t cls;
    uint8_t heap;            /* the span's small heap: free() sends a block of another heap home */
};
_Static_assert(sizeof(struct page_info) == 32, "page_info layout: one shift to index");

/* A small segment: header, then the bitmaps, then the slot arrays (the
 * request size + 1 of each live block; 0 means "not live", which catches
 * double frees), then the pages. */
struct small_seg {
    uint64_t magic;
    struct small_seg *next, *prev; /* pool list */
    uint64_t free_pages;           /* bit p: page p is unassigned (and untouched) */
    uint8_t page_class[PAGES_PER_SEG]; /* class + 1 of the span holding page p; 0: none */
    struct page_info page_info[PAGES_PER_SEG];
    struct span spans[PAGES_PER_SEG];  /* valid at the first page of each span */
};
#define SMALL_BITMAP_OFFSET ((size_t)8192)
#define SMALL_SLOTS_OFFSET (SMALL_BITMAP_OFFSET + PAGES_PER_SEG * BITMAP_BYTES_PER_PAGE)
#define SMALL_META_END (SMALL_SLOTS_OFFSET + PAGES_PER_SEG * SLOTS_STRIDE)
#define SMALL_FIRST_PAGE ((SMALL_META_END + PAGE_SIZE - 1) / PAGE_SIZE)
#define SMALL_META_BYTES (SMALL_FIRST_PAGE * PAGE_SIZE)
_Static_assert(sizeof(struct small_seg) <= SMALL_BITMAP_OFFSET, "small segment header fits");
_Static_assert(SMALL_SLOTS_OFFSET % OS_PAGE == 0, "slot arrays purge by OS page");
#define SMALL_USABLE_MASK (~(uint64_t)0 << SMALL_FIRST_PAGE)

static inline struct small_seg *small_seg_of(uintptr_t a)
{
    return (struct small_seg *)(a & ~(uintptr_t)SEG_MASK);
}
static inline unsigned page_index(uintptr_t a)
{
    return (unsigned)((a & SEG_MASK) >> PAGE_SHIFT);
}
/* the small heap whose span holds the block at `a` (a small segment's) */
static inline unsigned block_heap(uintptr_t a)
{
    return small_seg_of(a)->page_info[page_index(a)].heap;
}
static inline uint64_t *span_bitmap(struct small_seg *seg, unsigned head)
{
    return (uint64_t *)((char *)seg + SMALL_BITMAP_OFFSET + head * BITMAP_BYTES_PER_PAGE);
}
static inline uint16_t *span_slots(struct small_seg *seg, unsigned head)
{
    return (uint16_t *)((char *)seg + SMALL_SLOTS_OFFSET + head * SLOTS_STRIDE);
}
static inline uintptr_t span_start(struct small_seg *seg, unsigned head)
{
    return (uintptr_t)seg + ((uintptr_t)head << PAGE_SHIFT);
}
static inline unsigned span_head_of(uintptr_t a, const struct size_class *c)
{
    return page_index(a & ~(uintptr_t)c->span_mask);
}

/* Takes a span of class `cls` for small heap `heap` (all pages untouched);
 * NULL when out of memory. */
struct span *segment_span_alloc(unsigned cls, unsigned heap) CORE_INTERNAL;
/* Adds the whole OS pages of an all-free span's slot array to `batch`. */
void segment_span_purge_slots(struct span *s, struct os_purge_batch *batch) CORE_INTERNAL;
/* Returns an all-free span to its segment, for any class to take: its
 * pages and its slots' must have been given back (a batch holding them
 * flushed) before. */
void segment_span_release(struct span *s) CORE_INTERNAL;
struct small_seg *segment_of_span(struct span *s) CORE_INTERNAL;
unsigned span_head_index(struct span *s) CORE_INTERNAL;
/* Unmaps empty segments (keeping `keep` of them); returns bytes unmapped. */
size_t segment_release_empty(unsigned keep) CORE_INTERNAL;

/* What the spans themselves say, per class: spans, blocks out of them
 * (bitmap free counts), blocks among those that are live (slots set),
 * purged bytes (the spans' masks); and the bytes the live blocks were asked
 * for. Independent of the counters kept where blocks move, so stats and the
 * fork recount can be checked against them. */
struct small_census {
    size_t spans[NCLASSES], out[NCLASSES], live[NCLASSES], purged[NCLASSES];
    size_t requested;
};
/* Takes the census (pool lock held, and the class locks for a quiescent
 * picture). Reads every span's header and the slot array of every span
 * with a block out: proportional to the small heap's metadata, never its
 * blocks. */
void small_census_take(struct small_census *c) CORE_INTERNAL;

/* Segment pool state, guarded by pool_lock. */
struct segment_pool {
    core_mutex lock;
    struct small_seg *head;
    size_t segments;
    size_t free_page_count;
};
extern struct segment_pool core_pool CORE_INTERNAL;

/* ---- small classes, central state (small.c) ---------------------------- */

/* A thread takes, at its first slow path, the thread arena that the fewest
 * live threads use (the lowest such) among the first core_arenas: thread
 * arena a takes its small blocks from the spans of small heap a and its
 * medium blocks from medium arena a % MEDIUM_ARENAS. Two threads on
 * different heaps share no span, no lock and no counter line on the small
 * path. A thread started after another exited takes over its heap, whose
 * spans hold what the program kept of the old thread's blocks (threads
 * started round-robin over all heaps would each carve fresh spans: a
 * program that replaces its threads would grow with every generation). */
#define THREAD_ARENAS 16
#define SMALL_HEAPS THREAD_ARENAS
/* Arenas in use: one per CPU the process may run on, plus one, at most
 * THREAD_ARENAS (HEAPLAB_HEAPS=N at start-up sets N). Threads beyond the
 * CPUs do not run at once, so heaps of their own buy them no parallelism;
 * each heap more keeps free blocks and partly used spans that only its own
 * threads reuse, and makes the frees between its threads remote ones. The
 * one more lets the thread that set the program up, often idle afterwards,
 * keep a heap while each CPU's thread has one (docs/core-development.md
 * has the figures). Set once by core_init_slow, read-only afterwards. */
extern unsigned core_arenas CORE_INTERNAL;
/* CPUs the process may run on, at start-up (at least 1) */
extern unsigned core_cpus CORE_INTERNAL;

/* Class locks are striped per heap: class c of heap h uses
 * core_class_locks[h][c % CLASS_LOCKS]. No path ever holds two of them, and
 * fork and stats can take them all (ThreadSanitizer tracks at most 64 held
 * locks). Each lock has its own cache line. A heap's lock is shared only by
 * the threads of that heap and by decay passes (which only try it). */
#define CLASS_LOCKS 2
struct class_lock_line {
    _Alignas(64) core_mutex m;
    /* page_free bytes of the classes this lock guards, for the decay budget
     * (lane_note; read by any thread) */
    _Atomic size_t free_resident;
};
extern struct class_lock_line core_class_locks[SMALL_HEAPS][CLASS_LOCKS] CORE_INTERNAL;
static inline core_mutex *class_lock(unsigned heap, unsigned cls)
{
    return &core_class_locks[heap][cls % CLASS_LOCKS].m;
}
static inline _Atomic size_t *class_lane(unsigned heap, unsigned cls)
{
    return &core_class_locks[heap][cls % CLASS_LOCKS].free_resident;
}

/* Per-(heap, class) shared state, guarded by class_lock(heap, class).
 * Spans, their bitmaps and the store belong to one heap, and a thread's bins
 * hold blocks of its own heap only: a block freed by a thread of another
 * heap waits in that thread's remote bin and goes home, with the others of
 * its heap, in one flush to its heap's store (tcache.c, send_home).
 * Invariants, summed over the heaps of a class:
 *   span_bytes == spans * span size of the class
 *   out_bytes  == (blocks neither free in a bitmap nor in a store) * size
 *                 (thread caches + live); one heap's figure alone may wrap
 *                 after a fork (the recount puts the class's orphans on heap 0)
 *   purged_bytes == OS_PAGE * total set bits in the spans' purged masks
 *   page_free bytes of the class == span_bytes - out_bytes - purged_bytes */
/* Free blocks kept between a flush and a refill as entries of a store (a
 * stack of entries per heap and class, mapped on first use), so a program
 * that frees and reallocates more than a cache holds copies entries under
 * the lock instead of setting and scanning bitmap bits. At most this many
 * bytes of blocks per heap and class ... */
#define STORE_BYTES ((size_t)1 << 20)
/* ... that is, all of a class's STORE_BYTES (65,536 blocks of 16 B: 1 MiB
 * of entries, mapped when first used and resident only as far as it was
 * filled). A cap of 4,096 entries sent threadtest's bursts of 50,000 tiny
 * blocks per thread through the bitmaps: 1.9-2.5x mimalloc's time, against
 * 1.7-1.9x with the whole burst stored. */
#define STORE_MAX_ENTRIES 65536u
/* flushes smaller than this go straight to the bitmaps */
#define STORE_MIN_BLOCKS 4

struct class_central {
    _Alignas(64) struct span *partial;   /* spans with free blocks */
    struct tentry *store;    /* the store: free blocks in no bitmap, newest last (NULL until used) */
    uint32_t store_count;    /* entries in the store */
    uint32_t store_cap;      /* entries it has room for (0 until mapped) */
    uint64_t store_since_ms; /* last flush stored */
    /* at most the time of the oldest dirty span or stored flush (the lock
     * holder lowers it, a purge sets it exactly): a purge of what is older
     * than an age reads it first, without the lock, and leaves a class
     * with nothing that old alone instead of taking its owner's lock */
    _Atomic uint64_t oldest_ms;
    struct span *dirty;     /* newest first */
    struct span *dirty_tail;
    size_t spans;
    size_t span_bytes;
    size_t out_bytes;
    size_t purged_bytes;
};
extern struct class_central core_central[SMALL_HEAPS][NCLASSES] CORE_INTERNAL;
/* bit c of row h set: class c of heap h may have dirty spans or stored
 * blocks (a hint for the decay tick) */
struct dirty_mask {
    _Alignas(64) _Atomic uint64_t bits[2];
};
extern struct dirty_mask core_dirty_classes[SMALL_HEAPS] CORE_INTERNAL;
/* coarse clock (ms) for dirty timestamps, advanced by decay ticks */
extern _Atomic uint64_t core_clock_ms CORE_INTERNAL;
/* bytes of small pages made resident again (or for the first time) by
 * carving blocks on them, ever: the decay's sign that a program allocates
 * into memory it had freed (decay.c, the young allowance) */
extern _Atomic size_t core_unpurged_bytes CORE_INTERNAL;

/* A free block held by a thread cache or a store, with its slot (found
 * when it was freed or carved, so malloc does not recompute it). Caches and
 * stores are arrays of these, not lists through the blocks: freeing,
 * allocating and moving a block between cache, store and bitmap never
 * touches the block itself, whose line is likely cold (a list would make
 * every move a cache miss, and emptying a list a chain of them). */
struct tentry {
    void *ptr;
    _Atomic uint16_t *slot;
};

/* Fills out[0..n) with up to `want` free blocks of class `cls` from heap
 * `heap`, the one to hand out first last; returns n (0 on out of memory). */
unsigned central_refill(unsigned heap, unsigned cls, unsigned want, struct tentry *out) CORE_INTERNAL;
/* Returns the `n` free blocks of class `cls` in e[0..n), all of small heap
 * `heap`, to that heap's store (or its spans' bitmaps). */
void central_flush(unsigned heap, unsigned cls, const struct tentry *e, unsigned n) CORE_INTERNAL;
/* Purges spans of `cls` in `heap` dirty for longer than `age_ms` (0: all),
 * oldest first, until *excess bytes went back (no limit when excess is NULL;
 * *excess is decreased by what was purged); trylock when `try`; with
 * `whole_spans_only`, spans that still hold a live block are passed over.
 * Returns bytes purged. */
size_t central_purge(unsigned heap, unsigned cls, uint64_t now_ms, uint64_t age_ms, bool try, size_t *excess,
                     bool whole_spans_only) CORE_INTERNAL;
/* Empties the store of `cls` in `heap` into its blocks' spans' bitmaps. */
void central_drain(unsigned heap, unsigned cls) CORE_INTERNAL;
/* In a fork child, after tcache_after_fork_child (every lock held, the
 * forking thread the only one): blocks another thread was moving at the
 * instant of the fork (popped from its bin and not yet marked live, taken
 * from a store and not yet in its bin, on their way to another heap) are in
 * no cache, store or slot, and the counters kept where blocks move miss
 * them. Counts them from the spans themselves (bitmap free counts and
 * slots, never the blocks): per class, blocks out of spans that are neither
 * live, stored nor in this thread's cache become the orphans, and the
 * class's out_bytes and the live request bytes are set to what the spans
 * say. Reads each span's slot array: proportional to the small heap's
 * metadata, not its blocks. */
void central_recount_after_fork(void) CORE_INTERNAL;

/* ---- thread caches (tcache.c) ------------------------------------------ */

/* One bin per class: a stack of entries in the thread's cache region,
 * from base to end = base + the bin's limit. Invariant: base <= top <= end,
 * the cached blocks are base[0..top-base), the newest at top[-1]. Only the
 * low 32 bits of base and end are kept: a bin (at most 4 KiB) never spans
 * two addresses 4 GiB apart, so they compare with top's low half exactly,
 * and a bin fits in 16 bytes (the thread's bins in 14 cache lines and its
 * static TLS under 1 KiB, which lets the preload library be dlopen()ed).
 * All three are equal (top NULL, the others 0, before set-up) while caches
 * are off or the thread is not (or no longer) set up, which sends every
 * operation to the slow path: malloc goes slow when top == base, free when
 * top == end. */
struct tbin {
    struct tentry *top; /* OWNER_STORE / SHARED_READ */
    uint32_t base_lo;   /* OWNER_STORE / SHARED_READ */
    uint32_t end_lo;
};
_Static_assert(sizeof(struct tbin) == BIN_BYTES, "tbin layout");

static inline uint32_t low32(const void *p)
{
    return (uint32_t)(uintptr_t)p;
}

/* bytes of entries in a bin, for its owner */
static inline uint32_t bin_bytes_held(const struct tbin *b)
{
    return low32(b->top) - b->base_lo;
}

/* blocks in a bin, for its owner */
static inline uint32_t bin_count(const struct tbin *b)
{
    return bin_bytes_held(b) / (uint32_t)sizeof(struct tentry);
}

/* a bin's first entry, for its owner */
static inline struct tentry *bin_base(const struct tbin *b)
{
    return (struct tentry *)((char *)b->top - bin_bytes_held(b));
}

/* entries a bin has room for, for its owner */
static inline uint32_t bin_limit_of(const struct tbin *b)
{
    return (b->end_lo - b->base_lo) / (uint32_t)sizeof(struct tentry);
}

/* base <= top <= end, for its owner (the debug tier's check) */
static inline bool bin_in_bounds(const struct tbin *b)
{
    return bin_bytes_held(b) <= b->end_lo - b->base_lo && bin_bytes_held(b) % sizeof(struct tentry) == 0;
}

/* Most entries a bin holds (tcache.c sizes the bins up to this). */
#define TCACHE_MAX_BLOCKS 256u

/* blocks in another thread's bin (a snapshot). The owner may be pointing the
 * bin into its region just now (base and top are two stores), so a pair
 * that is not one bin's is read as empty rather than as the distance
 * between two unrelated addresses. */
static inline uint32_t bin_count_shared(const struct tbin *b)
{
    uint32_t held = low32(SHARED_READ(b->top)) - SHARED_READ(b->base_lo);
    if (held > TCACHE_MAX_BLOCKS * sizeof(struct tentry))
        return 0;
    return held / (uint32_t)sizeof(struct tentry);
}

enum thread_state { THREAD_NEW = 0, THREAD_INIT, THREAD_ACTIVE, THREAD_DEAD };

/* Per-thread cache, in initial-exec TLS. Only the owner writes. */
struct tcache {
    struct tbin bins[NCLASSES];
    struct tentry *region;          /* the bins' entries (NULL until caching), tcache_region_bytes */
    /* OWNER_STORE / SHARED_READ: */
    /* Bytes of small requests this thread malloc'd and freed, mod 2^64;
     * what it has live is their difference. Two words, not one: a malloc
     * and the free that follows it would otherwise update one word in
     * turn, each update waiting on the store of the one before (a chain
     * through memory that set tmalloc-st-64's pace: docs/core-development.md) */
    size_t small_requested;
    size_t small_released;
    size_t allocs;                  /* small allocations (frees are derived in stats.c) */
    size_t peak_reported;           /* part of the small net (tcache_small_net) already in core_os.live_approx */
    intptr_t live_pending;          /* medium and large live bytes not yet in core_os.live_approx (owner only) */
    uint32_t slow_events;
    uint8_t state;
    uint8_t arena;                  /* < THREAD_ARENAS: small heap, and medium arena modulo MEDIUM_ARENAS */
    uint16_t allocs_at_flush;       /* low bits of `allocs` at the thread's last flush of a full bin */
    /* Blocks of other heaps this thread freed, per class (OWNER_STORE /
     * SHARED_READ): they wait in the thread's region, never to be handed
     * out by this thread, and go home together when their bin fills */
    uint8_t remote_n[NCLASSES];
    struct tcache *next, *prev;     /* thread list, under core_threads.lock */
};

/* Where each class's remote bin starts in a thread's region, and how many
 * entries it has (set at start-up, read-only afterwards). */
extern uint32_t core_remote_first[NCLASSES] CORE_INTERNAL;
extern uint8_t core_remote_max[NCLASSES] CORE_INTERNAL;
/* The entries of the calling thread's (or a stopped thread's) remote bin
 * of class `cls`: remote_n[cls] of them. */
struct tentry *tcache_remote_base(const struct tcache *tc, unsigned cls) CORE_INTERNAL;
/* blocks in another thread's remote bin (a snapshot) */
static inline uint32_t remote_count_shared(const struct tcache *tc, unsigned cls)
{
    return SHARED_READ(tc->remote_n[cls]);
}

/* the small request bytes a thread has live (its mallocs less its frees,
 * mod 2^64), for the owner or, SHARED_READ, another thread */
static inline size_t tcache_small_net(const struct tcache *tc)
{
    return SHARED_READ(tc->small_requested) - SHARED_READ(tc->small_released);
}

extern __thread struct tcache core_tc __attribute__((tls_model("initial-exec"))) CORE_INTERNAL;

/* The calling thread's cache, computed once into a register: without the
 * empty asm the compiler re-derives it from the thread pointer for every
 * field it touches. */
static inline struct tcache *tcache_self(void)
{
    struct tcache *tc = &core_tc;
    __asm__("" : "+r"(tc));
    return tc;
}

struct thread_list {
    pthread_mutex_t lock;
    struct tcache *head;
    /* counters of threads that exited (or ran without a cache) */
    _Atomic size_t small_requested, allocs, medium_reuses;
    /* live threads set up on each thread arena */
    unsigned arena_threads[THREAD_ARENAS];
    /* their sum, for the decay's lock-free read (changed under the lock) */
    _Atomic unsigned live;
    /* blocks per class held by the caches of threads that did not survive
     * a fork, or in their hands at the fork: lost to this process, counted
     * as cached (central_recount_after_fork) */
    size_t orphaned[NCLASSES];
};
extern struct thread_list core_threads CORE_INTERNAL;
extern _Atomic int core_tcache_on CORE_INTERNAL;

/* An empty batch for a purge pass (os.h), its ranges combined into one
 * system call while the process has more than one live thread: there a
 * madvise also interrupts every other CPU running one of its threads to
 * flush theirs, and one call for the pass is far cheaper (mstress at 8
 * threads: 19% less time on the development VM). A process alone on its
 * thread gives ranges back one by one: one flush of the whole TLB then
 * cost it more afterwards than the flushes of single pages it saved
 * (tmalloc-memory: 13% more time). docs/core-development.md has the runs. */
static inline void purge_batch_init(struct os_purge_batch *b)
{
    b->n = 0;
    b->combine = atomic_load_explicit(&core_threads.live, memory_order_relaxed) > 1;
}

void *small_malloc_slow(size_t size, unsigned cls) CORE_INTERNAL;
/* `slot` (already 0) held `request + 1`; the bin was full, caching off, or
 * the block belongs to another heap than the thread's */
void small_free_slow(void *p, unsigned cls, _Atomic uint16_t *slot, size_t request) CORE_INTERNAL;
void tcache_flush_all(struct tcache *tc) CORE_INTERNAL;
/* A live block's request changed from `before` to `now` bytes (realloc in place). */
void count_request_change(size_t now, size_t before) CORE_INTERNAL;
/* In a fork child, with core_threads.lock held: drops every other thread's
 * cache from the thread list (glibc may reuse those threads' TLS for new
 * threads, zeroing it) and folds its counters into core_threads. */
void tcache_after_fork_child(void) CORE_INTERNAL;
/* At start-up, after the size classes: the exit key and the bins' layout. */
void tcache_init(void) CORE_INTERNAL;
/* A medium or large block changed live by `delta` bytes. The thread
 * gathers such changes and feeds the peak-live sampler once they reach
 * LIVE_REPORT_BYTES either way (and at thread exit), so a medium malloc or
 * free does not pay a locked instruction for a statistic. */
#define LIVE_REPORT_BYTES ((intptr_t)1 << 20)
/* Small blocks' changes feed the sampler from the slow paths once they
 * reach this: one locked add on a line every thread writes at each refill
 * and flush made two threads of threadtest 12% slower (docs/). */
#define SMALL_LIVE_REPORT_BYTES ((intptr_t)64 << 10)
void tcache_note_live_slow(intptr_t delta) CORE_INTERNAL;
/* inline, for the medium and large paths: the common case adds to the
 * thread's pending bytes */
static inline void tcache_note_live(intptr_t delta)
{
    struct tcache *tc = tcache_self();
    intptr_t pending = tc->live_pending + delta;
    if (CORE_LIKELY(tc->state == THREAD_ACTIVE && pending < LIVE_REPORT_BYTES && pending > -LIVE_REPORT_BYTES)) {
        tc->live_pending = pending;
        return;
    }
    tcache_note_live_slow(delta);
}
/* brings the calling thread's cache in line with core_tcache_on now */
void tcache_apply_mode(void) CORE_INTERNAL;

/* ---- medium arenas (medium.c) ------------------------------------------ */

#define MEDIUM_ARENAS 4
void *medium_malloc(size_t size) CORE_INTERNAL;
/* in_realloc: a realloc(p, 0) frees p, and a bad pointer or a broken tag
 * is reported as realloc's */
void medium_free(void *p, bool in_realloc) CORE_INTERNAL;
/* Validates p as a live medium block, aborting naming `what` (the function
 * called, "free(): invalid pointer") otherwise, and returns its usable size. */
size_t medium_usable(void *p, const char *what) CORE_INTERNAL;
/* Resizes in place when possible; returns 0 on success. */
int medium_resize_inplace(void *p, size_t size) CORE_INTERNAL;
/* Before a realloc copies live medium block p elsewhere: its boundary
 * tags, as free checks them (a broken size must not be copied through),
 * but a broken one is reported as realloc's. */
void medium_realloc_check_tags(void *p) CORE_INTERNAL;
/* as central_purge, for the free blocks of every arena; blocks kept whole
 * in the reuse caches are merged into the heap first, those cached for
 * cached_age_ms or longer (0: all) */
size_t medium_purge(uint64_t now_ms, uint64_t cached_age_ms, uint64_t age_ms, bool try, size_t *excess) CORE_INTERNAL;
void medium_lock_all(void) CORE_INTERNAL;
void medium_unlock_all(void) CORE_INTERNAL;
void medium_stats(hl_stats_t *s) CORE_INTERNAL;
/* the medium arenas' lanes of free resident bytes, summed */
size_t medium_free_resident(void) CORE_INTERNAL;
/* of those, the bytes of blocks kept whole in the reuse caches, summed */
size_t medium_cached_bytes(void) CORE_INTERNAL;

/* A thread's stash of medium blocks it freed (medium_stash.c), kept in its
 * cache region: the next medium request of nearly a stashed block's size
 * takes it back without the arena lock. Measured on rptest at 2 threads
 * (10% of its blocks are 8-16 KiB), the arena lock's two locked
 * instructions were most of medium malloc's and free's time: each waits
 * for the program's pending writes to its blocks. A stashed block keeps
 * MB_USED in its tag (no neighbour merges with it) and STASH_MARK as its
 * request (a second free of it is caught); the stats count it as
 * thread-cached. At most MEDIUM_STASH_BLOCKS blocks of at most
 * MEDIUM_STASH_BLOCK_MAX bytes and MEDIUM_STASH_BYTES in all: a full stash
 * gives its first (mostly older) half back to the arenas in one lock per
 * arena. */
#define MEDIUM_STASH_BLOCKS 16u
#define MEDIUM_STASH_BLOCK_MAX ((size_t)32 << 10)
#define MEDIUM_STASH_BYTES ((size_t)256 << 10)
struct medium_stash {
    /* medium mallocs served from the stash (OWNER_STORE / SHARED_READ, under
     * core_threads.lock when read by another thread): kept here rather than in
     * the thread's TLS, which has no room left */
    size_t reuses;
    uint32_t count;                       /* entries, roughly the oldest first */
    uint32_t sizes[MEDIUM_STASH_BLOCKS];  /* block sizes, tags included: a search reads no tag */
    size_t bytes;                         /* their sum */
    void *blocks[MEDIUM_STASH_BLOCKS];    /* the blocks' tags */
};
/* The calling thread's stash, or NULL when it does not cache (caching off,
 * no region, or the thread is exiting). */
struct medium_stash *tcache_medium_stash(void) CORE_INTERNAL;
/* thread tc's stash (tc itself, or a thread that stopped): NULL without a region */
struct medium_stash *tcache_stash_of(const struct tcache *tc) CORE_INTERNAL;
/* medium mallocs tc's stash served that are not yet in core_threads'
 * totals (0 without a region); core_threads.lock held, or tc the caller's */
size_t tcache_stash_reuses(const struct tcache *tc) CORE_INTERNAL;
/* Adds block (a tag) of `size` bytes, at most MEDIUM_STASH_BLOCK_MAX. A
 * full stash first gives its older half back (medium_unstash). */
void medium_stash_put(struct medium_stash *st, void *block, size_t size) CORE_INTERNAL;
/* Removes and returns the newest block of at least `need` bytes and at
 * most 1/MEDIUM_FIT_SLACK more (need <= MEDIUM_STASH_BLOCK_MAX); NULL when
 * none. */
void *medium_stash_take(struct medium_stash *st, size_t need) CORE_INTERNAL;
/* Gives every stashed block back to its arena. */
void medium_stash_flush(struct medium_stash *st) CORE_INTERNAL;
/* a kept block serves a request when at most 1/MEDIUM_FIT_SLACK bigger */
#define MEDIUM_FIT_SLACK 8
/* Frees the n stashed blocks (medium.c): each into its arena, one lock per
 * arena among them. */
void medium_unstash(void *const *blocks, unsigned n) CORE_INTERNAL;
/* Every entry of the stash is a block marked stashed, of its listed size
 * (arena locks held; medium.c); returns how many are not. */
int medium_stash_validate(const struct medium_stash *st) CORE_INTERNAL;


/* ---- large mappings (large.c) ------------------------------------------ */

/* zero: the block must read as zeros (calloc) */
void *large_malloc(size_t size, size_t align, bool zero) CORE_INTERNAL;
void large_free(void *p) CORE_INTERNAL;
/* `what` names the called function in the message when p is not a live
 * large block */
size_t large_usable(void *p, const char *what) CORE_INTERNAL;
/* Realloc of a large block (validated by large_usable) to a size that stays
 * large; NULL when it cannot be done in place or by moving pages (the block
 * is then untouched, and the caller copies). */
void *large_realloc(void *p, size_t size) CORE_INTERNAL;
size_t large_purge(uint64_t now_ms, uint64_t age_ms, bool try) CORE_INTERNAL;
void large_lock(void) CORE_INTERNAL;
void large_unlock(void) CORE_INTERNAL;
void large_stats(hl_stats_t *s) CORE_INTERNAL;


/* ---- decay (decay.c) --------------------------------------------------- */

/* Free small pages and medium blocks go back to the OS at once, oldest
 * first, while more than RETAIN_BYTES of free memory is resident (each
 * path's down to three quarters of RETAIN_BYTES), except
 * small spans that had a block freed in the last REUSE_GRACE_MS (times
 * the threads per CPU when more threads are set up than the process has
 * CPUs, up to REUSE_GRACE_STRETCH times), while no
 * more than the young allowance is free (decay.c: YOUNG_FREE_MIN, doubled up
 * to YOUNG_FREE_MAX for a program that keeps reallocating what it freed,
 * halved again after LONG_DECAY_MS without); below that budget only after
 * LONG_DECAY_MS, so a program that frees and soon reallocates a working set
 * (tmalloc-st-random, mstress's generations) does not fault it all back in
 * every round. The grace is for small spans and for the medium blocks
 * kept whole in the reuse caches: small blocks are packed, so reusing free
 * small memory reuses its pages whole, and a cached medium block comes back
 * whole, its tag where it was; while a medium block is often written only
 * in part (its first pages), and keeping a merged free medium range
 * resident mostly keeps pages nobody writes (tmalloc-st-mixed: 100 MB more
 * RSS with it, no time saved). While the process has had more
 * than one thread lately, those purges take only small spans with no live
 * block (decay.c: threads_lately). The slower clock-driven work runs at
 * most every DECAY_MS. */
#define DECAY_MS 2
#define LONG_DECAY_MS 1000
#define RETAIN_BYTES ((size_t)64 << 20)
#define REUSE_GRACE_MS 100
#define REUSE_GRACE_STRETCH 4
#define YOUNG_FREE_MIN ((size_t)128 << 20)
#define YOUNG_FREE_MAX ((size_t)1 << 30)
/* Cached large mappings are unmapped after this long. */
#define LARGE_DECAY_MS 500
/* The clock is read once per this many slow-path events of a thread. */
#define DECAY_EVENTS 16

/* Called from slow paths; every DECAY_EVENTS calls reads the clock, purges
 * the excess over the budget (summed over every heap only when it may be
 * exceeded, see decay.c) and, at most once per DECAY_MS process-wide, what
 * is old enough. */
void decay_tick_slow(uint32_t events) CORE_INTERNAL;
static inline void decay_tick(uint32_t *events)
{
    if (CORE_UNLIKELY(++*events % DECAY_EVENTS == 0))
        decay_tick_slow(*events);
}
/* Purges everything free now (hl_trim); returns bytes released. */
size_t decay_purge_all(void) CORE_INTERNAL;
/* In a fork child: forgets a purge another thread of the parent was doing. */
void decay_after_fork_child(void) CORE_INTERNAL;

/* ---- global counters (stats.c) ----------------------------------------- */

struct os_counters {
    _Atomic size_t map_count, unmap_count, purge_count;
    _Atomic size_t live_approx; /* sampled live bytes, for peak_live */
    _Atomic size_t peak_live;
    /* mapped for thread-cache regions and stores (metadata) */
    _Atomic size_t cache_meta_bytes;
};
extern struct os_counters core_os CORE_INTERNAL;
void stats_note_live(intptr_t delta) CORE_INTERNAL;
/* os_purge_add and os_purge_flush, with the system calls they made
 * counted in purge_count */
static inline void purge_add(struct os_purge_batch *b, void *p, size_t size)
{
    size_t calls = os_purge_add(b, p, size);
    if (calls)
        atomic_fetch_add_explicit(&core_os.purge_count, calls, memory_order_relaxed);
}
static inline void purge_flush(struct os_purge_batch *b)
{
    size_t calls = os_purge_flush(b);
    if (calls)
        atomic_fetch_add_explicit(&core_os.purge_count, calls, memory_order_relaxed);
}

/* Free resident bytes (page_free + medium_free) are counted for the decay
 * budget in lanes: one per class lock and one per medium arena, each
 * written only under its lock, in the cache line of that lock. So the
 * update is a plain add and not a locked instruction (which would wait for
 * every store before it, such as the program's writes to its blocks). A
 * lane alone may wrap (bytes flushed to one heap's store and taken back
 * through another); the sum does not. */
static inline void lane_note(_Atomic size_t *lane, size_t before, size_t after)
{
    if (before != after)
        atomic_store_explicit(lane, atomic_load_explicit(lane, memory_order_relaxed) + (after - before),
                              memory_order_relaxed);
}
/* the sum over every small heap's lanes (medium_free_resident has the
 * medium arenas') */
size_t stats_small_free_resident(void) CORE_INTERNAL;
/* the sum over the lanes of one small heap (a lane alone may wrap, so this
 * may read as huge: a reason to sum them all, never a figure to report) */
size_t stats_heap_free_resident(unsigned heap) CORE_INTERNAL;

/* ---- start-up, fork, locks (init.c) ------------------------------------ */

extern _Atomic int core_initialized CORE_INTERNAL;
void core_init_slow(void) CORE_INTERNAL;
static inline void core_ensure_init(void)
{
    if (CORE_UNLIKELY(!atomic_load_explicit(&core_initialized, memory_order_acquire)))
        core_init_slow();
}
/* Takes every class lock (stripe), the pool, the arenas and the large lock, in that
 * order (the one lock order of the core; the fork handlers wrap it in
 * init_lock first and core_threads.lock last). */
void core_lock_all(void) CORE_INTERNAL;
void core_unlock_all(void) CORE_INTERNAL;

/* ---- failure (fail.c) -------------------------------------------------- */

/* Writes "heaplab: <what> <pointer>" with write(2) and aborts; no allocation. */
_Noreturn void core_fail_pointer(const char *what, const void *p) CORE_INTERNAL;
_Noreturn void core_fail(const char *msg) CORE_INTERNAL;
/* Writes one line for hl_check: "heaplab check: <msg> <value>". */
void core_report(const char *msg, uintptr_t value) CORE_INTERNAL;

/* what a pointer heaplab did not hand out live is called, per function */
#define CORE_INVALID_FREE "free(): invalid pointer"
#define CORE_INVALID_REALLOC "realloc(): invalid pointer"
#define CORE_INVALID_USABLE "malloc_usable_size(): invalid pointer"

/* ---- checks in three tiers ---------------------------------------------- */

/* Pointer validation, which keeps a bad pointer from corrupting memory, is
 * always on (core_fail_pointer at the call). HEAPLAB_DEBUG adds:
 *   1: CORE_ASSERT, a slow path's preconditions (a class or heap in range, a
 *      lock held, a bin within its bounds) and cheap postconditions of what
 *      it changed (one span's bitmap, one block's tags);
 *   2: also CORE_ASSERT_EXPENSIVE, the validator of the structure a slow
 *      path changed (a heap's class, a thread's bin, a medium arena, the
 *      large lists), run whole after the change.
 * Below its level a check compiles to nothing (its condition is
 * type-checked, never evaluated), so call sites carry no #if. */
#ifdef __FILE_NAME__
#define CORE_FILE __FILE_NAME__
#else
#define CORE_FILE __FILE__
#endif
#define CORE_STRING_(x) #x
#define CORE_STRING(x) CORE_STRING_(x)
#define CORE_ASSERT_LEVEL(level, cond, what)                                                          \
    do {                                                                                              \
        if (HEAPLAB_DEBUG >= (level) && CORE_UNLIKELY(!(cond)))                                       \
            core_fail("assertion failed at " CORE_FILE ":" CORE_STRING(__LINE__) ": " what);          \
    } while (0)
#define CORE_ASSERT(cond, what) CORE_ASSERT_LEVEL(1, cond, what)
#define CORE_ASSERT_EXPENSIVE(cond, what) CORE_ASSERT_LEVEL(2, cond, what)

#if HEAPLAB_MUTANTS
extern int core_mutant CORE_INTERNAL;
#define CORE_MUTANT(n) CORE_UNLIKELY(core_mutant == (n))
#else
#define CORE_MUTANT(n) 0
#endif

/* ---- validators (check.c, medium.c, large.c) ----------------------------
 * Each walks one structure, reports every broken invariant with
 * core_report and returns how many broke. hl_check() runs them all; the
 * expensive tier runs the one a slow path just changed. */

/* 1 when the span's bitmap, free count and partial-list flag agree (class
 * lock held): the cheap check of one span */
int span_is_valid(struct span *s) CORE_INTERNAL;
/* Counts kept while a span is validated, for hl_check's totals. */
struct span_tally {
    size_t out_blocks, live_blocks, purged_bytes;
};
/* Every block of the span at page `head` of `seg` (class lock held): free
 * blocks hold no request, live ones fit their block, no purged OS page
 * overlaps a block that is out; adds to *t when t is not NULL. */
int span_validate(struct small_seg *seg, unsigned head, struct span_tally *t) CORE_INTERNAL;
/* Class `cls` of small heap `heap` (its class lock held): its partial and
 * dirty lists and its store. */
int central_validate(unsigned heap, unsigned cls) CORE_INTERNAL;
/* Bin `cls` of thread cache tc (its owner, or with the thread stopped):
 * within its bounds, every entry a free block of the class with its slot. */
int bin_validate(const struct tcache *tc, unsigned cls) CORE_INTERNAL;
/* Medium arena `index` (its lock held): every tag, bin, reuse entry, counter. */
int arena_validate(unsigned index) CORE_INTERNAL;
/* The large live and cache lists and their counters (large lock held). */
int large_lists_validate(void) CORE_INTERNAL;


/* ---- small block slots, for the paths (api.c, tcache.c) and check.c ---- */

/* The slot of the block at `a` (class c): request + 1 while the block is
 * live, 0 otherwise. */
static inline _Atomic uint16_t *small_slot_of(uintptr_t a, const struct size_class *c)
{
    size_t off = a & c->span_mask;
    size_t idx = (off * c->recip) >> RECIP_SHIFT;
    unsigned head = page_index(a & ~(uintptr_t)c->span_mask);
    char *slots = (char *)(a & ~(uintptr_t)SEG_MASK) + SMALL_SLOTS_OFFSET + head * SLOTS_STRIDE;
    return (_Atomic uint16_t *)slots + idx;
}

/* the value a live block's slot holds for a request of `request` bytes */
static inline uint16_t slot_value(size_t request)
{
    return (uint16_t)(request + 1);
}
_Static_assert(SMALL_MAX + 1 <= UINT16_MAX, "a slot holds any small request + 1");

#endif
