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

/* Small segments left completely empty are unmapped beyond this many. */
#define SPARE_EMPTY_SEGMENTS 1

static size_t purge_older_than(uint64_t now, uint64_t age, bool try, size_t *excess)
{
    size_t released = 0;
    for (unsigned h = 0; h < SMALL_HEAPS; h++)
        for (unsigned w = 0; w < 2; w++) {
            uint64_t bits = atomic_load_explicit(&core_dirty_classes[h].bits[w], memory_order_relaxed);
            while (bits) {
                unsigned cls = w * 64 + (unsigned)__builtin_ctzll(bits);
                bits &= bits - 1;
                released += central_purge(h, cls, now, age, try, excess);
            }
        }
    released += medium_purge(now, age, try, excess);
    return released;
}

void decay_tick(uint32_t *events)
{
    if (++*events % DECAY_EVENTS != 0)
        return;
    uint64_t now = os_now_ms();
    atomic_store_explicit(&core_clock_ms, now, memory_order_relaxed);
    /* over the budget, free memory goes back at once, down to three
     * quarters of the budget, oldest first; memory freed within the last
     * REUSE_GRACE_MS stays (a server's next burst reuses it: purging it
     * only made the burst fault it back in), unless so much is free that a
     * program evidently gave up a large part of its heap, which it then
     * gets back before its next phase. */
    size_t resident_free = stats_free_resident();
    if (resident_free > RETAIN_BYTES && !atomic_exchange_explicit(&over_budget_purging, 1, memory_order_acquire)) {
        size_t excess = resident_free - RETAIN_BYTES / 4 * 3;
        purge_older_than(now, REUSE_GRACE_MS, true, &excess);
        if (excess && resident_free > YOUNG_FREE_MAX)
            purge_older_than(now, 0, true, &excess);
        atomic_store_explicit(&over_budget_purging, 0, memory_order_release);
    }
    uint64_t last = atomic_load_explicit(&last_decay_ms, memory_order_relaxed);
    if (now - last < DECAY_MS)
        return;
    if (!atomic_compare_exchange_strong_explicit(&last_decay_ms, &last, now, memory_order_relaxed, memory_order_relaxed))
        return;
    /* anything free for LONG_DECAY_MS goes, within the budget too */
    purge_older_than(now, LONG_DECAY_MS, true, NULL);
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
            released += central_purge(h, cls, 0, 0, false, NULL);
    released += medium_purge(0, 0, false, NULL);
    released += large_purge(0, 0, false);
    released += segment_release_empty(0);
    return released;
}
