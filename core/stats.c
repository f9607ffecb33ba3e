/* heaplab core: the accounting snapshot.
 *
 * Each state is counted on its own: from the records every block carries
 * (slots of small blocks, tags of medium blocks, headers of large ones),
 * from the thread caches' bins, and from the counters kept where memory
 * changes state (class centrals, the segment pool, arenas, the large
 * lists); no state is what is left over from the others. So the identity of
 * heaplab.h fails when a counter and the records disagree (a lost update, a
 * bin off by one, a span released with a block live). It holds exactly
 * whenever no other thread is allocating during the call. The records are
 * walked: a snapshot reads every small span's slot array, every medium tag
 * and every large header, proportional to the heap's metadata and its
 * count of medium and large blocks. */
#include "internal.h"

#include <string.h>

struct os_counters core_os;

void stats_note_live(intptr_t delta)
{
    size_t live = atomic_fetch_add_explicit(&core_os.live_approx, (size_t)delta, memory_order_relaxed) + (size_t)delta;
    if ((intptr_t)live < 0)
        return;
    size_t peak = atomic_load_explicit(&core_os.peak_live, memory_order_relaxed);
    while (live > peak &&
           !atomic_compare_exchange_weak_explicit(&core_os.peak_live, &peak, live, memory_order_relaxed, memory_order_relaxed)) {
    }
}

size_t stats_heap_free_resident(unsigned heap)
{
    size_t sum = 0;
    for (unsigned i = 0; i < CLASS_LOCKS; i++)
        sum += atomic_load_explicit(&core_class_locks[heap][i].free_resident, memory_order_relaxed);
    return sum;
}

size_t stats_small_free_resident(void)
{
    size_t sum = 0;
    for (unsigned h = 0; h < SMALL_HEAPS; h++)
        sum += stats_heap_free_resident(h);
    return sum;
}

/* bytes of a span's slot array and bitmap that are in use (resident) */
static size_t span_meta_bytes(const struct size_class *c)
{
    size_t slots = ((size_t)c->capacity * sizeof(uint16_t) + OS_PAGE - 1) & ~(OS_PAGE - 1);
    return (size_t)c->span_pages * BITMAP_BYTES_PER_PAGE + slots;
}

/* Each state from a count of its own, so that the identity can fail:
 * live and rounding from the live blocks' request records (slots),
 * thread-cached from the bins, free in pages from the classes' counters
 * (span, out and purged bytes), untouched from the spans' purged masks and
 * the pool's free pages. The identity then holds only while the out_bytes
 * counters agree with the records and the bins, the purged counters with
 * the masks, and the pool's pages with the classes' spans. */
static void small_stats(hl_stats_t *s)
{
    struct small_census census;
    small_census_take(&census);
    size_t slot_bytes = BITMAP_BYTES_PER_PAGE + SLOTS_STRIDE;
    size_t assigned_pages = 0, live_blocks = 0;
    size_t cached[NCLASSES];
    for (unsigned cls = 0; cls < NCLASSES; cls++)
        cached[cls] = core_threads.orphaned[cls];
    size_t allocs = atomic_load_explicit(&core_threads.allocs, memory_order_relaxed);
    size_t reuses = atomic_load_explicit(&core_threads.medium_reuses, memory_order_relaxed);
    for (struct tcache *tc = core_threads.head; tc; tc = tc->next) {
        for (unsigned cls = 0; cls < NCLASSES; cls++)
            cached[cls] += bin_count_shared(&tc->bins[cls]) + remote_count_shared(tc, cls);
        allocs += SHARED_READ(tc->allocs);
        reuses += tcache_stash_reuses(tc);
    }
    /* a medium block taken from a stash: a malloc, and the free of the
     * block's life before it, which no arena counted */
    s->alloc_count += reuses;
    s->free_count += reuses;
    for (unsigned cls = 0; cls < NCLASSES; cls++) {
        const struct size_class *c = &core_classes[cls];
        size_t meta = span_meta_bytes(c);
        /* summed over the heaps first: one heap's out_bytes alone may wrap */
        size_t span_bytes = 0, out_bytes = 0, purged_bytes = 0;
        for (unsigned h = 0; h < SMALL_HEAPS; h++) {
            const struct class_central *cc = &core_central[h][cls];
            span_bytes += cc->span_bytes;
            out_bytes += cc->out_bytes;
            purged_bytes += cc->purged_bytes;
        }
        size_t spans = census.spans[cls];
        assigned_pages += spans * c->span_pages;
        s->metadata += spans * meta;
        s->untouched += spans * (c->span_pages * slot_bytes - meta);
        s->untouched += census.purged[cls];
        s->page_free += span_bytes - out_bytes - purged_bytes;
        s->tcache += cached[cls] * c->size;
        s->rounding += census.live[cls] * c->size;
        live_blocks += census.live[cls];
    }
    s->live += census.requested;
    s->rounding -= census.requested;
    size_t segs = core_pool.segments;
    s->mapped += segs * SEG_SIZE;
    s->metadata += segs * SMALL_BITMAP_OFFSET;
    /* slots of pages that are not assigned, the padding after the slots, and
     * the free pages themselves */
    s->untouched += (segs * PAGES_PER_SEG - assigned_pages) * slot_bytes;
    s->untouched += segs * (SMALL_META_BYTES - SMALL_META_END);
    s->untouched += core_pool.free_page_count * PAGE_SIZE;
    /* every small block ever allocated is live or freed */
    s->alloc_count += allocs;
    s->free_count += allocs - live_blocks;
}

void hl_stats(hl_stats_t *out)
{
    memset(out, 0, sizeof *out);
    if (!atomic_load_explicit(&core_initialized, memory_order_acquire))
        return;
    core_lock_all();
    pthread_mutex_lock(&core_threads.lock);
    small_stats(out);
    pthread_mutex_unlock(&core_threads.lock);
    /* thread-cache regions and stores: the caches' own bookkeeping */
    size_t cache_meta = atomic_load_explicit(&core_os.cache_meta_bytes, memory_order_relaxed);
    out->mapped += cache_meta;
    out->metadata += cache_meta;
    medium_stats(out);
    large_stats(out);
    core_unlock_all();
    out->resident_estimate = out->mapped - out->untouched;
    size_t peak = atomic_load_explicit(&core_os.peak_live, memory_order_relaxed);
    if (out->live > peak) {
        atomic_store_explicit(&core_os.peak_live, out->live, memory_order_relaxed);
        peak = out->live;
    }
    out->peak_live = peak;
    out->os_map_count = atomic_load_explicit(&core_os.map_count, memory_order_relaxed);
    out->os_unmap_count = atomic_load_explicit(&core_os.unmap_count, memory_order_relaxed);
    out->purge_count = atomic_load_explicit(&core_os.purge_count, memory_order_relaxed);
}

int hl_stats_balanced(const hl_stats_t *s)
{
    size_t sum = s->live + s->rounding + s->tcache + s->page_free + s->medium_free + s->large_cache + s->untouched + s->metadata;
    return sum == s->mapped;
}
