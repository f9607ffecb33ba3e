/* heaplab: the allocator core's public interface.
 *
 * The hl_ functions follow the C and glibc contracts of their namesakes
 * (malloc(0) gives a unique pointer, calloc overflow gives NULL + ENOMEM,
 * a bad alignment gives EINVAL, ...). libheaplab-preload.so exports the same
 * functions under the standard names.
 */
#ifndef HEAPLAB_H
#define HEAPLAB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void *hl_malloc(size_t size);
void hl_free(void *p);
void *hl_calloc(size_t n, size_t size);
void *hl_realloc(void *p, size_t size);
void *hl_reallocarray(void *p, size_t n, size_t size);
void *hl_aligned_alloc(size_t align, size_t size);
int hl_posix_memalign(void **out, size_t align, size_t size);
void *hl_memalign(size_t align, size_t size);
void *hl_valloc(size_t size);
void *hl_pvalloc(size_t size);
size_t hl_usable_size(void *p);
void hl_free_sized(void *p, size_t size);
void hl_free_aligned_sized(void *p, size_t align, size_t size);

/* Exact accounting. Every byte heaplab has mapped is in exactly one state:
 *   mapped == live + rounding + tcache + page_free + medium_free
 *             + large_cache + untouched + metadata
 * Each X(name, description) below is one field of struct hl_stats, in bytes
 * unless the name ends in _count; the harness prints them under the same
 * names. Keep the states first and in this order. */
#define HL_STATS_FIELDS(X)                                                        \
    X(mapped, "bytes of address space heaplab holds from the OS")                 \
    X(live, "bytes requested by the program and not yet freed")                   \
    X(rounding, "bytes of live blocks beyond the request (size-class rounding)")  \
    X(tcache, "bytes of free blocks held in thread caches")                       \
    X(page_free, "bytes of free blocks in small-object pages")                    \
    X(medium_free, "bytes of free blocks in the medium heap")                     \
    X(large_cache, "bytes of freed large mappings kept for reuse")                \
    X(untouched, "bytes mapped but never handed out, or returned to the OS")      \
    X(metadata, "bytes of heaplab's own structures and headers")                  \
    X(resident_estimate, "mapped minus what heaplab has returned with madvise")   \
    X(peak_live, "largest live seen by hl_stats or sampled from threads")         \
    X(alloc_count, "allocations served")                                          \
    X(free_count, "frees served")                                                 \
    X(os_map_count, "mappings requested from the OS")                             \
    X(os_unmap_count, "mappings returned to the OS")                              \
    X(purge_count, "system calls that gave pages back (madvise, or process_madvise for a batch)")

typedef struct hl_stats {
#define HL_STATS_DECLARE(name, doc) size_t name;
    HL_STATS_FIELDS(HL_STATS_DECLARE)
#undef HL_STATS_DECLARE
} hl_stats_t;

#define HL_STATS_VERSION 1

/* Fills *out with a consistent snapshot (takes every lock briefly). */
void hl_stats(hl_stats_t *out);
/* 1 when the identity above holds exactly, 0 otherwise. */
int hl_stats_balanced(const hl_stats_t *s);

/* Walks every structure and checks every invariant. Returns 0 when all hold;
 * otherwise writes one line per broken invariant to stderr and returns how
 * many broke. For tests: slow, takes every lock. */
int hl_check(void);

/* Gives every page that holds no live object back to the OS now (thread
 * caches of the calling thread are flushed first). Returns bytes released. */
size_t hl_trim(void);

/* Returns the calling thread's cached blocks to their pages now. */
void hl_thread_flush(void);

enum hl_route { HL_ROUTE_SMALL, HL_ROUTE_MEDIUM, HL_ROUTE_LARGE, HL_ROUTE_INVALID };
/* Which path a request of this size and alignment takes. */
enum hl_route hl_route(size_t size, size_t align);
const char *hl_route_name(enum hl_route r);

/* Per-thread caches on (1) or off (0). Also set at start-up by the
 * environment: HEAPLAB_TCACHE=0 turns them off. Returns the previous value. */
int hl_set_tcache(int on);
int hl_tcache_enabled(void);

const char *hl_version(void);

#ifdef __cplusplus
}
#endif
#endif
