/* heaplab core: the accounting snapshot.
 *
 * Each state is derived from counters kept where the state changes: class
 * centrals (spans, blocks out, purged pages), the segment pool (free pages),
 * thread caches (bin counts, requested bytes), arenas and the large lists.
 * The identity of heaplab.h holds exactly whenever no other thread is
 * allocating during the call. */
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

size_t stats_free_resident(void)
{
    size_t sum = medium_free_resident();
    for (unsigned h = 0; h < SMALL_HEAPS; h++)
        for (unsigned i = 0; i < CLASS_LOCKS; i++)
            sum += atomic_load_explicit(&core_class_locks[h][i].free_resident, memory_order_relaxed);
    return sum;
}

/* bytes of a span's slot array and bitmap that are in use (resident) */
static size_t span_meta_bytes(const struct size_class *c)
{
    size_t slots = ((size_t)c->capacity * sizeof(uint16_t) + OS_PAGE - 1) & ~(OS_PAGE - 1);
    return (size_t)c->span_pages * BITMAP_BYTES_PER_PAGE + slots;
}

static void small_stats(hl_stats_t *s)
{
    size_t slot_bytes = BITMAP_BYTES_PER_PAGE + SLOTS_STRIDE;
    size_t assigned_pages = 0, out = 0, out_blocks = 0, cached_blocks = 0;
    for (unsigned cls = 0; cls < NCLASSES; cls++) {
        const struct size_class *c = &core_classes[cls];
        size_t meta = span_meta_bytes(c);
        /* summed over the heaps first: one heap's out_bytes alone may wrap */
        size_t spans = 0, span_bytes = 0, out_bytes = 0, purged_bytes = 0;
        for (unsigned h = 0; h < SMALL_HEAPS; h++) {
            const struct class_central *cc = &core_central[h][cls];
            spans += cc->spans;
            span_bytes += cc->span_bytes;
            out_bytes += cc->out_bytes;
            purged_bytes += cc->purged_bytes;
        }
        assigned_pages += spans * c->span_pages;
        s->metadata += spans * meta;
        s->untouched += spans * (c->span_pages * slot_bytes - meta);
        s->untouched += purged_bytes;
        s->page_free += span_bytes - out_bytes - purged_bytes;
        out += out_bytes;
        out_blocks += out_bytes / c->size;
    }
    size_t segs = core_pool.segments;
    s->mapped += segs * SEG_SIZE;
    s->metadata += segs * SMALL_BITMAP_OFFSET;
    /* slots of pages that are not assigned, the padding after the slots, and
     * the free pages themselves */
    s->untouched += (segs * PAGES_PER_SEG - assigned_pages) * slot_bytes;
    s->untouched += segs * (SMALL_META_BYTES - SMALL_META_END);
    s->untouched += core_pool.free_page_count * PAGE_SIZE;

    size_t tcache = 0, requested = atomic_load_explicit(&core_threads.small_requested, memory_order_relaxed);
    size_t allocs = atomic_load_explicit(&core_threads.allocs, memory_order_relaxed);
    for (unsigned cls = 0; cls < NCLASSES; cls++) {
        tcache += core_threads.orphaned[cls] * core_classes[cls].size;
        cached_blocks += core_threads.orphaned[cls];
    }
    for (struct tcache *tc = core_threads.head; tc; tc = tc->next) {
        for (unsigned cls = 0; cls < NCLASSES; cls++) {
            size_t n = bin_count_shared(&tc->bins[cls]);
            tcache += n * core_classes[cls].size;
            cached_blocks += n;
        }
        requested += SHARED_READ(tc->small_requested);
        allocs += SHARED_READ(tc->allocs);
    }
    /* every small block ever allocated is live or freed; the live ones are
     * the blocks out of spans that no cache holds */
    s->alloc_count += allocs;
    s->free_count += allocs - (out_blocks - cached_blocks);
    s->tcache += tcache;
    s->live += requested;
    s->rounding += out - tcache - requested;
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
