/* heaplab core: decay, the clock check that gives free memory back.
 *
 * Nothing on a fast path reads the clock. Every DECAY_EVENTS slow-path events
 * a thread reads it and the resident free bytes: above a budget, the oldest
 * free memory is purged at once down to three quarters of it; and at most once
 * per DECAY_MS process-wide, one thread (the one that wins a compare-and-swap)
 * purges what has been free for LONG_DECAY_MS. Purges use trylock, so a
 * purging thread never waits behind another. */
#include "internal.h"


static _Atomic uint64_t last_decay_ms;
/* 1 while a thread purges the excess over the budget */
static _Atomic int over_budget_purging;

/* The young allowance: how much free memory may stay resident over the
 * budget while it is young. A program that gives up a large part of its
 * heap gets it back at once (tmalloc-memory's phases); one that frees its
 * heap and allocates it again, over and over (a server's requests,
 * mstress's generations), only faults back in what each purge gave away:
 * each purge of young memory that follows the carving, since the one
 * before, of a budget's worth of purged pages or of half what that one
 * gave back doubles the allowance; LONG_DECAY_MS without a young purge
 * halves it. (With threads, a young purge gives back only spans with no
 * live block, often less than a budget: mstress's generations carved all
 * of it again each time, yet a budget's worth alone never doubled the
 * allowance; docs/core-development.md has the runs.) Read and written only
 * by the thread that holds over_budget_purging. */
static size_t young_allowance = YOUNG_FREE_MIN;
static uint64_t young_purge_ms;
static size_t unpurged_at_young_purge;
static bool young_purged_before;
static size_t young_released; /* by the last young purge */

static size_t young_allowance_at(uint64_t now)
{
    while (young_allowance > YOUNG_FREE_MIN && now - young_purge_ms >= LONG_DECAY_MS) {
        young_allowance /= 2;
        young_purge_ms += LONG_DECAY_MS;
    }
    return young_allowance;
}

static void young_purge_noted(uint64_t now)
{
    size_t unpurged = atomic_load_explicit(&core_unpurged_bytes, memory_order_relaxed);
    size_t carved = unpurged - unpurged_at_young_purge;
    /* (the first young purge follows the heap's growth, not a reuse) */
    if (young_purged_before && (carved >= RETAIN_BYTES || carved >= young_released / 2) &&
        young_allowance < YOUNG_FREE_MAX)
        young_allowance *= 2;
    young_purged_before = true;
    unpurged_at_young_purge = unpurged;
    young_purge_ms = now;
}

/* The most threads seen by an over-budget check in the last LONG_DECAY_MS.
 * While it is above 1, the budget's purges pass over small spans that still
 * hold live blocks (their free pages go back after LONG_DECAY_MS instead):
 * each madvise in a process whose threads run on other CPUs interrupts every
 * one of them to flush its TLB, and a span in use is carved again soon, its
 * purged pages faulting back in one OS page at a time. A process alone on
 * its thread pays neither and gets the pages back at once (tmalloc-memory's
 * phases). Remembered for a while because threads come and go: the last
 * threads of mstress's generation free their blocks as they exit, with
 * few threads left, just before the next generation carves them again.
 * Read and written only by the thread that holds over_budget_purging. */
static unsigned recent_threads;
static uint64_t recent_threads_ms;

static unsigned threads_lately(uint64_t now)
{
    unsigned live = atomic_load_explicit(&core_threads.live, memory_order_relaxed);
    if (live >= recent_threads || now - recent_threads_ms >= LONG_DECAY_MS) {
        recent_threads = live;
        recent_threads_ms = now;
    }
    return recent_threads;
}

/* Small segments left completely empty are unmapped beyond this many. */
#define SPARE_EMPTY_SEGMENTS 1

/* Purges small spans free for `kept_age` ms or longer until *small_excess
 * bytes went back, then medium blocks free for `medium_age` or longer until
 * *medium_excess did (0 ages: any; NULL excesses: no limit), oldest first
 * within each; with `whole_spans_only`, only small spans with no live block.
 * Medium blocks kept whole in the reuse caches for `kept_age` or longer
 * join the free blocks first: like a small span, a cached block is reused
 * where it is, so a program that soon allocates its size again writes no
 * new boundary tag (see medium.c). */
static size_t purge_older_than(uint64_t now, uint64_t kept_age, size_t *small_excess, uint64_t medium_age,
                               size_t *medium_excess, bool try, bool whole_spans_only)
{
    size_t released = 0;
    for (unsigned h = 0; h < SMALL_HEAPS && (!small_excess || *small_excess); h++)
        for (unsigned w = 0; w < 2; w++) {
            uint64_t bits = atomic_load_explicit(&core_dirty_classes[h].bits[w], memory_order_relaxed);
            while (bits) {
                unsigned cls = w * 64 + (unsigned)__builtin_ctzll(bits);
                bits &= bits - 1;
                released += central_purge(h, cls, now, kept_age, try, small_excess, whole_spans_only);
            }
        }
    /* (with no medium excess too: the cached blocks past the grace join
     * the free blocks, which a later check counts) */
    released += medium_purge(now, kept_age, medium_age, try, medium_excess);
    return released;
}

/* The reuse grace, stretched when more threads are set up than there are
 * CPUs: a descheduled thread reuses what it freed only when it runs again,
 * a time slice or more later (up to REUSE_GRACE_STRETCH times). */
static uint64_t reuse_grace_ms(void)
{
    unsigned threads = atomic_load_explicit(&core_threads.live, memory_order_relaxed);
    unsigned cpus = core_cpus;
    unsigned stretch = threads > cpus ? (threads + cpus - 1) / cpus : 1;
    if (stretch > REUSE_GRACE_STRETCH)
        stretch = REUSE_GRACE_STRETCH;
    return (uint64_t)REUSE_GRACE_MS * stretch;
}

/* what `bytes` of free memory are beyond three quarters of the budget */
static size_t beyond_budget(size_t bytes)
{
    return bytes > RETAIN_BYTES / 4 * 3 ? bytes - RETAIN_BYTES / 4 * 3 : 0;
}

/* The small heaps' free memory, when the budget may be exceeded; 0
 * otherwise. The sum reads a line of every heap that the heap's threads
 * write on each refill and flush, so two busy threads that summed on every
 * tick kept taking each other's lines: a tick sums only when its thread's
 * own heap holds more than its share of the budget, when the medium arenas
 * hold half of it, or every DECAY_SUM_TICKS-th tick of the thread (memory
 * sent home to heaps whose own threads are idle). Below those marks the
 * total is within the budget anyway. */
#define DECAY_SUM_TICKS 16
static size_t small_free_if_over(uint32_t events, size_t medium_free)
{
    size_t own = stats_heap_free_resident(core_tc.arena);
    if (medium_free <= RETAIN_BYTES / 2 && own <= RETAIN_BYTES / 2 / core_arenas &&
        events % (DECAY_EVENTS * DECAY_SUM_TICKS) != 0)
        return 0;
    return stats_small_free_resident();
}

void decay_tick_slow(uint32_t events)
{
    uint64_t now = os_now_ms();
    /* written when it moves: read by every flush of every thread */
    if (atomic_load_explicit(&core_clock_ms, memory_order_relaxed) < now)
        atomic_store_explicit(&core_clock_ms, now, memory_order_relaxed);
    /* over the budget, free memory goes back at once, oldest first: each
     * path's down to three quarters of the budget (so that small memory
     * kept young does not make the medium arenas give back theirs); small
     * spans freed within the last REUSE_GRACE_MS stay, and medium blocks
     * cached whole as long (a server's next burst reuses them: purging
     * them only made the burst fault them back in), unless so much is
     * free that a program evidently gave up a large part of its heap,
     * which it then gets back before its next phase. */
    size_t medium_free = medium_free_resident();
    size_t small_free = small_free_if_over(events, medium_free);
    size_t resident_free = small_free + medium_free;
    if (resident_free > RETAIN_BYTES && !atomic_exchange_explicit(&over_budget_purging, 1, memory_order_acquire)) {
        size_t small_excess = beyond_budget(small_free);
        /* the medium blocks kept whole for reuse bring the budget's purge
         * here, which merges the ones past the grace into the heap, but
         * what it purges is measured on the merged free blocks alone: the
         * caches' young blocks are resident mostly in their first pages
         * (tmalloc-st-mixed: 10,000 purges of free ranges in its steady
         * phase when they counted, for pages faulted in again) */
        size_t medium_cached = medium_cached_bytes();
        size_t medium_excess = beyond_budget(medium_free > medium_cached ? medium_free - medium_cached : 0);
        bool whole_spans_only = threads_lately(now) > 1;
        purge_older_than(now, reuse_grace_ms(), &small_excess, DECAY_MS, &medium_excess, true, whole_spans_only);
        if (small_excess && resident_free > young_allowance_at(now)) {
            young_purge_noted(now);
            young_released = purge_older_than(now, 0, &small_excess, 0, &medium_excess, true, whole_spans_only);
        }
        atomic_store_explicit(&over_budget_purging, 0, memory_order_release);
    }
    uint64_t last = atomic_load_explicit(&last_decay_ms, memory_order_relaxed);
    if (now - last < DECAY_MS)
        return;
    if (!atomic_compare_exchange_strong_explicit(&last_decay_ms, &last, now, memory_order_relaxed, memory_order_relaxed))
        return;
    /* anything free for LONG_DECAY_MS goes, within the budget too */
    purge_older_than(now, LONG_DECAY_MS, NULL, LONG_DECAY_MS, NULL, true, false);
    large_purge(now, LARGE_DECAY_MS, true);
    segment_release_empty(SPARE_EMPTY_SEGMENTS);
}

void decay_after_fork_child(void)
{
    /* a thread of the parent may have been purging: it does not exist here */
    atomic_store_explicit(&over_budget_purging, 0, memory_order_relaxed);
}

size_t decay_purge_all(void)
{
    /* every class, not only the ones flagged dirty: trim must not miss one.
     * Stores first, so that blocks of one heap stored in another
     * are in their spans' bitmaps before any span is purged. */
    size_t released = 0;
    for (unsigned h = 0; h < SMALL_HEAPS; h++)
        for (unsigned cls = 0; cls < NCLASSES; cls++)
            central_drain(h, cls);
    for (unsigned h = 0; h < SMALL_HEAPS; h++)
        for (unsigned cls = 0; cls < NCLASSES; cls++)
            released += central_purge(h, cls, 0, 0, false, NULL, false);
    released += medium_purge(0, 0, 0, false, NULL);
    released += large_purge(0, 0, false);
    released += segment_release_empty(0);
    return released;
}
