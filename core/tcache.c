/* heaplab core: per-thread caches and the small slow paths.
 *
 * A thread's cache is a set of bounded LIFO stacks of entries, one per
 * class: the bins live in initial-exec TLS, their entries in one region per
 * thread mapped by the core (a thread that exits leaves its region for the
 * next one). The fast paths in api.c pop and push without atomics or locks.
 * A thread sets itself up on its first slow path (a pthread key whose
 * destructor flushes the cache at thread exit); after that destructor ran,
 * the thread keeps working uncached (allocation from later TLS destructors). */
#include "internal.h"

#include <errno.h>
#include <string.h>

__thread struct tcache core_tc __attribute__((tls_model("initial-exec")));
/* glibc keeps a small reserve of static TLS for libraries loaded after
 * start-up; a cache that fits in it lets the preload library be dlopen()ed
 * as well as preloaded (at 1,856 bytes it no longer fitted) */
_Static_assert(sizeof(struct tcache) <= 1024, "the thread cache outgrew the dlopen reserve of static TLS");
struct thread_list core_threads = {.lock = PTHREAD_MUTEX_INITIALIZER};
_Atomic int core_tcache_on = 1;

/* Per-class cache bound: about this many bytes, within [MIN, MAX] blocks. */
#define TCACHE_BIN_BYTES ((size_t)65536)
#define TCACHE_MIN_BLOCKS 4u


/* The bins' layout in a region: bin c's entries start at bin_first[c], its
 * remote bin's (core_remote_max[c] entries) at core_remote_first[c]. Set by
 * tcache_init, read-only afterwards. */
static uint32_t bin_first[NCLASSES];
uint32_t core_remote_first[NCLASSES];
uint8_t core_remote_max[NCLASSES];
static size_t region_bytes;
/* where the medium stash sits in a region (after the bins' entries) */
static size_t stash_offset;
/* regions of threads that exited, linked through their first entry's ptr
 * (under core_threads.lock) */
static struct tentry *spare_regions;

/* blocks of class `cls` in `bytes`, within [lo, hi] */
static unsigned blocks_within(size_t bytes, unsigned cls, unsigned lo, unsigned hi)
{
    size_t n = bytes / core_classes[cls].size;
    return n < lo ? lo : n > hi ? hi : (unsigned)n;
}

static unsigned bin_limit(unsigned cls)
{
    return blocks_within(TCACHE_BIN_BYTES, cls, TCACHE_MIN_BLOCKS, TCACHE_MAX_BLOCKS);
}

/* A remote bin holds half a bin, and at most REMOTE_BIN_BYTES of blocks
 * (at least 2): it goes home in a flush no bigger than a full bin's (which
 * gives half the bin back), and a thread that frees other threads' blocks
 * keeps few of them away from home per class. While a class's blocks wait
 * here, their owner finds its store empty and carves new ones: with half
 * bins, rptest at 2 threads (10% of its frees on another thread, 16 B to
 * 16 KB) kept about 2 MB more resident (docs/core-development.md). The
 * classes of 64 B and below keep their 128 entries. */
#define REMOTE_BIN_BYTES ((size_t)8192)
static unsigned remote_limit(unsigned cls)
{
    return blocks_within(REMOTE_BIN_BYTES, cls, 2, bin_limit(cls) / 2);
}
_Static_assert(TCACHE_MAX_BLOCKS / 2 <= UINT8_MAX, "a remote bin's count fits remote_n");
_Static_assert(TCACHE_MIN_BLOCKS / 2 >= 1, "every class has a remote bin");

struct tentry *tcache_remote_base(const struct tcache *tc, unsigned cls)
{
    return tc->region ? tc->region + core_remote_first[cls] : NULL;
}

/* Sends the blocks of the thread's remote bin of `cls` home: one flush per
 * heap among them (a flush goes to one heap's store; blocks of several
 * heaps in one flush would be handed out by the first heap's threads). */
static void send_home(struct tcache *tc, unsigned cls)
{
    struct tentry *e = tcache_remote_base(tc, cls);
    unsigned n = tc->remote_n[cls];
    while (n) {
        unsigned heap = block_heap((uintptr_t)e[0].ptr), k = 1;
        for (unsigned i = 1; i < n; i++) {
            if (block_heap((uintptr_t)e[i].ptr) != heap)
                continue;
            if (i != k) {
                struct tentry t = e[k];
                e[k] = e[i];
                e[i] = t;
            }
            k++;
        }
        central_flush(heap, cls, e, k);
        e += k;
        n -= k;
        OWNER_STORE(tc->remote_n[cls], (uint8_t)n);
    }
}

static struct tentry *region_take(void)
{
    pthread_mutex_lock(&core_threads.lock);
    struct tentry *r = spare_regions;
    if (r)
        spare_regions = r->ptr;
    pthread_mutex_unlock(&core_threads.lock);
    if (r)
        return r;
    r = os_map_aligned(region_bytes, OS_PAGE, "heaplab thread cache");
    if (r) {
        atomic_fetch_add_explicit(&core_os.map_count, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&core_os.cache_meta_bytes, region_bytes, memory_order_relaxed);
    }
    return r;
}

/* core_threads.lock held */
static void region_give_locked(struct tentry *r)
{
    r->ptr = spare_regions;
    spare_regions = r;
}

/* Points every (empty) bin into the thread's region: full limits when
 * `on`, none otherwise. A thread that cannot get a region runs uncached. */
static void set_limits(struct tcache *tc, bool on)
{
    if (on && !tc->region)
        tc->region = region_take();
    for (unsigned cls = 0; cls < NCLASSES; cls++) {
        struct tbin *b = &tc->bins[cls];
        struct tentry *base = tc->region ? tc->region + bin_first[cls] : NULL;
        OWNER_STORE(b->base_lo, low32(base));
        OWNER_STORE(b->top, base);
        b->end_lo = on && base ? low32(base + bin_limit(cls)) : low32(base);
    }
}

struct medium_stash *tcache_stash_of(const struct tcache *tc)
{
    return tc->region ? (struct medium_stash *)((char *)tc->region + stash_offset) : NULL;
}

size_t tcache_stash_reuses(const struct tcache *tc)
{
    const struct medium_stash *st = tcache_stash_of(tc);
    return st ? SHARED_READ(st->reuses) : 0;
}

void tcache_flush_all(struct tcache *tc)
{
    struct medium_stash *st = tcache_stash_of(tc);
    if (st)
        medium_stash_flush(st);
    for (unsigned cls = 0; cls < NCLASSES; cls++) {
        struct tbin *b = &tc->bins[cls];
        unsigned n = bin_count(b);
        if (n) {
            struct tentry *base = bin_base(b);
            central_flush(tc->arena, cls, base, n);
            OWNER_STORE(b->top, base);
        }
        if (tc->remote_n[cls])
            send_home(tc, cls);
    }
}

static void thread_exit(void *arg)
{
    struct tcache *tc = arg;
    tcache_flush_all(tc);
    /* what the sampler has not been told yet, or it would drift by up to
     * the thresholds at each thread exit */
    stats_note_live(tc->live_pending + (intptr_t)(tcache_small_net(tc) - tc->peak_reported));
    tc->live_pending = 0;
    tc->peak_reported = 0;
    /* One critical section under the lock that stats and hl_check read
     * threads under: the thread leaves the list, its counts (the stash's
     * reuses, kept in the region, among them) join the totals, and its
     * bins let go of the region (all NULL) as the region goes to the spare
     * list, so no reader counts anything twice or sees a region that
     * another thread has taken. */
    struct tentry *region = tc->region;
    struct medium_stash *st = tcache_stash_of(tc);
    pthread_mutex_lock(&core_threads.lock);
    if (tc->prev)
        tc->prev->next = tc->next;
    else
        core_threads.head = tc->next;
    if (tc->next)
        tc->next->prev = tc->prev;
    core_threads.arena_threads[tc->arena]--;
    atomic_fetch_sub_explicit(&core_threads.live, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&core_threads.small_requested, tcache_small_net(tc), memory_order_relaxed);
    atomic_fetch_add_explicit(&core_threads.allocs, tc->allocs, memory_order_relaxed);
    atomic_fetch_add_explicit(&core_threads.medium_reuses, tcache_stash_reuses(tc), memory_order_relaxed);
    OWNER_STORE(tc->small_requested, 0);
    OWNER_STORE(tc->small_released, 0);
    OWNER_STORE(tc->allocs, 0);
    if (st)
        OWNER_STORE(st->reuses, 0);
    tc->region = NULL;
    set_limits(tc, false); /* off: takes no region, so not the lock */
    if (region)
        region_give_locked(region);
    pthread_mutex_unlock(&core_threads.lock);
    tc->state = THREAD_DEAD;
}

void tcache_after_fork_child(void)
{
    struct tcache *self = &core_tc;
    bool self_listed = false;
    for (struct tcache *tc = core_threads.head; tc; tc = tc->next) {
        if (tc == self) {
            self_listed = true;
            continue;
        }
        /* the bins themselves may be mid-update (the fast paths write
         * them without ordering), so they are not emptied: their blocks
         * stay out, and central_recount_after_fork counts them (with any
         * block that was between a bin and a store) as orphans */
        atomic_fetch_add_explicit(&core_threads.small_requested, tcache_small_net(tc), memory_order_relaxed);
        atomic_fetch_add_explicit(&core_threads.allocs, SHARED_READ(tc->allocs), memory_order_relaxed);
        /* its stash is left as it is, the same way: the stashed blocks'
         * tags keep them counted as cached */
        atomic_fetch_add_explicit(&core_threads.medium_reuses, tcache_stash_reuses(tc), memory_order_relaxed);
    }
    core_threads.head = self_listed ? self : NULL;
    self->prev = self->next = NULL;
    /* the child's only thread is the one that forked */
    for (unsigned a = 0; a < THREAD_ARENAS; a++)
        core_threads.arena_threads[a] = 0;
    if (self_listed)
        core_threads.arena_threads[self->arena] = 1;
    atomic_store_explicit(&core_threads.live, self_listed ? 1u : 0u, memory_order_relaxed);
}

void tcache_init(void)
{
    /* without a key (a program that used up every pthread key before the
     * core started) exiting threads keep their caches: a leak, not a crash */
    (void)os_thread_exit_init(thread_exit);
    /* entry 0 is a guard: the malloc fast path reads the entry below the
     * one it pops (a prefetch of the next block), which for bin 0's first
     * entry would be outside the region. It also links spare regions. */
    size_t entries = 1;
    for (unsigned cls = 0; cls < NCLASSES; cls++) {
        bin_first[cls] = (uint32_t)entries;
        entries += bin_limit(cls);
        core_remote_first[cls] = (uint32_t)entries;
        core_remote_max[cls] = (uint8_t)remote_limit(cls);
        entries += core_remote_max[cls];
    }
    stash_offset = entries * sizeof(struct tentry);
    region_bytes = (stash_offset + sizeof(struct medium_stash) + OS_PAGE - 1) & ~(OS_PAGE - 1);
}

static void thread_setup(struct tcache *tc)
{
    tc->state = THREAD_INIT;
    pthread_mutex_lock(&core_threads.lock);
    unsigned arena = 0;
    for (unsigned a = 1; a < core_arenas; a++)
        if (core_threads.arena_threads[a] < core_threads.arena_threads[arena])
            arena = a;
    core_threads.arena_threads[arena]++;
    atomic_fetch_add_explicit(&core_threads.live, 1, memory_order_relaxed);
    tc->arena = (uint8_t)arena;
    tc->prev = NULL;
    tc->next = core_threads.head;
    if (core_threads.head)
        core_threads.head->prev = tc;
    core_threads.head = tc;
    pthread_mutex_unlock(&core_threads.lock);
    /* may allocate (glibc's second-level key array): state INIT serves
     * that request uncached */
    os_thread_exit_arm(tc);
    set_limits(tc, atomic_load_explicit(&core_tcache_on, memory_order_relaxed));
    tc->state = THREAD_ACTIVE;
}

/* Brings the thread's cache in line with core_tcache_on; returns whether
 * this thread caches now. */
static bool thread_caching(struct tcache *tc)
{
    if (CORE_UNLIKELY(tc->state == THREAD_NEW))
        thread_setup(tc);
    if (tc->state != THREAD_ACTIVE)
        return false;
    bool on = atomic_load_explicit(&core_tcache_on, memory_order_relaxed);
    bool was_on = tc->bins[0].end_lo != tc->bins[0].base_lo;
    if (on != was_on) {
        if (!on)
            tcache_flush_all(tc);
        set_limits(tc, on);
    }
    /* caching, unless no region could be had */
    return tc->bins[0].end_lo != tc->bins[0].base_lo;
}

struct medium_stash *tcache_medium_stash(void)
{
    struct tcache *tc = &core_tc;
    return thread_caching(tc) ? tcache_stash_of(tc) : NULL;
}

void tcache_apply_mode(void)
{
    struct tcache *tc = &core_tc;
    if (tc->state == THREAD_ACTIVE)
        (void)thread_caching(tc);
}

static void count_alloc(struct tcache *tc, size_t request)
{
    if (tc->state == THREAD_DEAD) {
        atomic_fetch_add_explicit(&core_threads.small_requested, request, memory_order_relaxed);
        atomic_fetch_add_explicit(&core_threads.allocs, 1, memory_order_relaxed);
        return;
    }
    OWNER_ADD(tc->small_requested, request);
    OWNER_ADD(tc->allocs, 1);
}

static void count_free(struct tcache *tc, size_t request)
{
    if (tc->state == THREAD_DEAD) {
        atomic_fetch_sub_explicit(&core_threads.small_requested, request, memory_order_relaxed);
        return;
    }
    OWNER_ADD(tc->small_released, request);
}

void count_request_change(size_t now, size_t before)
{
    struct tcache *tc = &core_tc;
    if (tc->state == THREAD_DEAD) {
        atomic_fetch_add_explicit(&core_threads.small_requested, now - before, memory_order_relaxed);
        return;
    }
    OWNER_ADD(tc->small_requested, now - before);
}

void tcache_note_live_slow(intptr_t delta)
{
    struct tcache *tc = &core_tc;
    /* a thread that was never set up has no exit handler to report what
     * it gathered: it sets up now (as on its first small slow path) */
    if (CORE_UNLIKELY(tc->state == THREAD_NEW))
        thread_setup(tc);
    if (tc->state != THREAD_ACTIVE) {
        stats_note_live(delta);
        return;
    }
    intptr_t pending = tc->live_pending + delta;
    if (pending >= LIVE_REPORT_BYTES || pending <= -LIVE_REPORT_BYTES) {
        stats_note_live(pending);
        pending = 0;
    }
    tc->live_pending = pending;
}

/* feeds the peak-live sampler with what this thread changed since it last
 * did, once that reaches SMALL_LIVE_REPORT_BYTES either way */
static void report_live(struct tcache *tc)
{
    if (tc->state == THREAD_DEAD)
        return;
    size_t now = tcache_small_net(tc);
    intptr_t delta = (intptr_t)(now - tc->peak_reported);
    if (delta < SMALL_LIVE_REPORT_BYTES && delta > -SMALL_LIVE_REPORT_BYTES)
        return;
    stats_note_live(delta);
    tc->peak_reported = now;
}

CORE_NOINLINE void *small_malloc_slow(size_t size, unsigned cls)
{
    if (CORE_UNLIKELY(!atomic_load_explicit(&core_initialized, memory_order_acquire))) {
        /* the class table was still empty when the fast path read it (the
         * aligned paths initialise first, so this is a plain malloc) */
        core_init_slow();
        cls = size_to_class(size);
    }
    CORE_ASSERT(cls < NCLASSES && size <= SMALL_MAX && core_classes[cls].size >= size,
                "small malloc of a class out of range, or too small for the size");
    struct tcache *tc = &core_tc;
    struct tentry got;
    if (thread_caching(tc)) {
        struct tbin *b = &tc->bins[cls];
        CORE_ASSERT(bin_in_bounds(b), "thread cache bin out of its bounds before a slow malloc");
        struct tentry *top = b->top;
        if (bin_count(b) == 0) {
            /* an empty bin is refilled to its limit: refills stay rarer
             * than 1 in TCACHE_MAX_BLOCKS small-block mallocs, which keeps
             * them out of the p99 latency */
            unsigned n = central_refill(tc->arena, cls, bin_limit_of(b), top);
            if (n == 0)
                goto out_of_memory;
            top += n;
        }
        top--;
        got = *top;
        OWNER_STORE(b->top, top);
        CORE_ASSERT(bin_in_bounds(b), "thread cache bin out of its bounds after a slow malloc");
        CORE_ASSERT_EXPENSIVE(bin_validate(tc, cls) == 0, "thread cache bin invalid after a slow malloc");
    } else if (central_refill(tc->arena, cls, 1, &got) == 0) {
        goto out_of_memory;
    }
    atomic_store_explicit(got.slot, slot_value(size), memory_order_relaxed);
    count_alloc(tc, size);
    report_live(tc);
    decay_tick(&tc->slow_events);
    return got.ptr;

out_of_memory:
    errno = ENOMEM;
    return NULL;
}

CORE_NOINLINE void small_free_slow(void *p, unsigned cls, _Atomic uint16_t *slot, size_t request)
{
    CORE_ASSERT(cls < NCLASSES && request <= core_classes[cls].size &&
                    atomic_load_explicit(slot, memory_order_relaxed) == 0,
                "small free of a class out of range, a request bigger than its block, or a block still live");
    struct tcache *tc = &core_tc;
    struct tentry mine = {p, slot};
    count_free(tc, request);
    if (!thread_caching(tc)) {
        central_flush(block_heap((uintptr_t)p), cls, &mine, 1);
    } else if (block_heap((uintptr_t)p) != tc->arena) {
        /* Another heap's block is never handed out here: reused by this
         * thread it would share cache lines with its owner's blocks (the
         * false sharing cache-scratch measures), and its owner would carve
         * new spans while its freed blocks sat in other threads' caches. */
        unsigned n = tc->remote_n[cls];
        tcache_remote_base(tc, cls)[n] = mine;
        OWNER_STORE(tc->remote_n[cls], (uint8_t)(n + 1));
        if (n + 1 == core_remote_max[cls])
            send_home(tc, cls);
    } else {
        struct tbin *b = &tc->bins[cls];
        CORE_ASSERT(bin_in_bounds(b), "thread cache bin out of its bounds before a slow free");
        if (low32(b->top) == b->end_lo) {
            /* the bin is full: give its older half back in one flush and
             * keep the newer half (warm in the cache), so that a program
             * hovering around the limit does not flush and refill the whole
             * bin each time. Measured against flushing the whole bin:
             * kevy-churn -5%, memalloc-fixed +11% throughput,
             * tmalloc-st-random +6% time. */
            struct tentry *base = bin_base(b);
            unsigned n = bin_count(b), give = n - n / 2;
            /* A thread that has not allocated since its last flush frees a
             * burst (threadtest's and tmalloc-mt's free phases): it gives
             * the whole bin back, in one flush instead of two, and moves
             * no kept half down. (16 bits of the count: a wrap that hides
             * 65,536 mallocs only picks the bigger flush.) */
            uint16_t allocs_now = (uint16_t)tc->allocs;
            if (allocs_now == tc->allocs_at_flush)
                give = n;
            tc->allocs_at_flush = allocs_now;
            central_flush(tc->arena, cls, base, give);
            if (give < n)
                memmove(base, base + give, (size_t)(n - give) * sizeof *base);
            /* mutant 4: a bin top moved one entry too far */
            OWNER_STORE(b->top, base + (n - give) + CORE_MUTANT(4));
        }
        *b->top = mine;
        OWNER_STORE(b->top, b->top + 1);
        CORE_ASSERT(bin_in_bounds(b), "thread cache bin out of its bounds after a slow free");
    }
    CORE_ASSERT_EXPENSIVE(bin_validate(tc, cls) == 0, "thread cache bin invalid after a slow free");
    report_live(tc);
    decay_tick(&tc->slow_events);
}
