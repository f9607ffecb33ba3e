/* The interposed allocation calls: see record.h.
 *
 * Start-up: the real functions are found with dlsym(RTLD_NEXT), and dlsym
 * itself may call calloc or malloc before they are known. Those calls are
 * served from a small static arena (bootstrap_alloc) whose blocks are
 * never freed and never recorded.
 *
 * Re-entry: anything the recorder does that might allocate (thread-key
 * set-up, pthread_atfork) runs with `inside` set, so those calls go
 * straight to the real allocator unrecorded.
 *
 * Order: a block's id is dropped from the map before the real free, so an
 * address the allocator hands out again always gets a new id. */
#include "record.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef struct real_fns {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    size_t (*usable_size)(void *);
    void (*free_sized)(void *, size_t);
    void (*free_aligned_sized)(void *, size_t, size_t);
} real_fns;

static real_fns real;
static atomic_int resolving;
static int active;
static uint64_t start_ns;
static __thread int inside __attribute__((tls_model("initial-exec")));

/* ---- the start-up arena ---- */

enum { BOOTSTRAP_BYTES = 64 * 1024, BOOTSTRAP_ALIGN = 16 };
static alignas(BOOTSTRAP_ALIGN) unsigned char bootstrap[BOOTSTRAP_BYTES];
static size_t bootstrap_used;

static int in_bootstrap(const void *p)
{
    return (const unsigned char *)p >= bootstrap &&
           (const unsigned char *)p < bootstrap + BOOTSTRAP_BYTES;
}

/* Blocks carry their size in the 16 bytes before them (realloc needs it). */
static void *bootstrap_alloc(size_t n)
{
    size_t need = BOOTSTRAP_ALIGN + ((n + BOOTSTRAP_ALIGN - 1) & ~(size_t)(BOOTSTRAP_ALIGN - 1));
    if (n > BOOTSTRAP_BYTES || bootstrap_used + need > BOOTSTRAP_BYTES)
        return NULL;
    unsigned char *p = bootstrap + bootstrap_used + BOOTSTRAP_ALIGN;
    memcpy(p - sizeof n, &n, sizeof n);
    bootstrap_used += need;
    return p;
}

static size_t bootstrap_size(const void *p)
{
    size_t n;
    memcpy(&n, (const unsigned char *)p - sizeof n, sizeof n);
    return n;
}

/* ---- start-up ---- */

static void *next_fn(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

static void fork_prepare(void)
{
    rec_out_fork_prepare();
    rec_ids_lock_all();
}

static void fork_parent(void)
{
    rec_ids_unlock_all();
    rec_out_fork_parent();
}

static void fork_child(void)
{
    rec_ids_unlock_all();
    rec_out_fork_child();
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* noinline: runs once, from the first call or the library constructor */
__attribute__((noinline)) static void resolve(void)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&resolving, &expected, 1))
        return; /* dlsym called us back: the caller uses the arena */
    inside = 1;
    real_fns r;
    r.malloc = next_fn("malloc");
    r.free = next_fn("free");
    r.calloc = next_fn("calloc");
    r.realloc = next_fn("realloc");
    r.aligned_alloc = next_fn("aligned_alloc");
    r.posix_memalign = next_fn("posix_memalign");
    r.memalign = next_fn("memalign");
    r.valloc = next_fn("valloc");
    r.pvalloc = next_fn("pvalloc");
    r.usable_size = next_fn("malloc_usable_size");
    r.free_sized = next_fn("free_sized");
    r.free_aligned_sized = next_fn("free_aligned_sized");
    if (!r.malloc || !r.free || !r.calloc || !r.realloc) {
        static const char msg[] = "heaplab-record: cannot find the real malloc\n";
        (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
        abort();
    }
    real = r;
    rec_ids_init();
    start_ns = now_ns();
    if (rec_out_init(getenv(TRACE_RAW_DIR_ENV)) == 0) {
        pthread_atfork(fork_prepare, fork_parent, fork_child);
        active = 1;
    }
    inside = 0;
}

__attribute__((constructor)) static void record_start(void)
{
    if (!real.malloc)
        resolve();
}

__attribute__((destructor)) static void record_stop(void)
{
    rec_out_flush_all();
}

/* ---- recording ---- */

static int recording(void)
{
    return active && !inside;
}

static void emit(trace_op op, uint64_t size, uint64_t id, uint64_t old, uint32_t aux,
                 unsigned align_log2)
{
    trace_raw_event e = {
        .t_us = (now_ns() - start_ns) / 1000u,
        .size = size,
        .id = id,
        .old = old,
        .aux = aux,
        .op = (uint8_t)op,
        .align_log2 = (uint8_t)align_log2,
    };
    inside = 1;
    rec_out_event(&e);
    inside = 0;
}

static uint64_t add_id(void *p)
{
    inside = 1;
    uint64_t id = p ? rec_ids_add(p) : 0;
    inside = 0;
    return id;
}

static uint64_t take_id(void *p, int remove)
{
    inside = 1;
    uint64_t id = p ? rec_ids_take(p, remove) : 0;
    inside = 0;
    return id;
}

static unsigned log2_up(size_t align)
{
    unsigned k = 0;
    while (k < 63 && ((size_t)1 << k) < align)
        k++;
    return k;
}

/* ---- the interface ---- */

EXPORT void *malloc(size_t n)
{
    if (!real.malloc) {
        resolve();
        if (!real.malloc)
            return bootstrap_alloc(n);
    }
    void *p = real.malloc(n);
    if (recording())
        emit(TRACE_MALLOC, n, add_id(p), 0, 0, 0);
    return p;
}

EXPORT void *calloc(size_t count, size_t n)
{
    if (!real.calloc) {
        resolve();
        if (!real.calloc)
            return count && n > BOOTSTRAP_BYTES / count ? NULL : bootstrap_alloc(count * n);
    }
    void *p = real.calloc(count, n);
    if (recording())
        emit(TRACE_CALLOC, n, add_id(p), 0, count > UINT32_MAX ? UINT32_MAX : (uint32_t)count,
             0);
    return p;
}

EXPORT void free(void *p)
{
    if (!p || in_bootstrap(p))
        return;
    if (!recording()) {
        real.free(p);
        return;
    }
    uint64_t old = take_id(p, 1);
    real.free(p);
    emit(TRACE_FREE, 0, 0, old, 0, 0);
}

EXPORT void *realloc(void *p, size_t n)
{
    if (p && in_bootstrap(p)) {
        void *q = malloc(n);
        size_t have = bootstrap_size(p);
        if (q)
            memcpy(q, p, have < n ? have : n);
        return q;
    }
    if (!real.realloc) {
        resolve();
        if (!real.realloc)
            return bootstrap_alloc(n);
    }
    if (!recording())
        return real.realloc(p, n);
    uint64_t old = take_id(p, 1);
    void *q = real.realloc(p, n);
    uint64_t id = 0;
    if (q) {
        id = add_id(q);
    } else if (n != 0 || !p) {
        /* failed: the old block is still there, under its old id */
        inside = 1;
        rec_ids_restore(p, old);
        inside = 0;
    }
    emit(TRACE_REALLOC, n, id, old, 0, 0);
    return q;
}

EXPORT void *reallocarray(void *p, size_t count, size_t n)
{
    if (count && n > SIZE_MAX / count) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, count * n);
}

static void *aligned_done(void *p, size_t align, size_t n, trace_aligned_call call)
{
    if (recording())
        emit(TRACE_ALIGNED, n, add_id(p), 0, (uint32_t)call, log2_up(align));
    return p;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    if (!real.malloc)
        resolve();
    return aligned_done(real.aligned_alloc(align, n), align, n, TRACE_CALL_ALIGNED_ALLOC);
}

EXPORT void *memalign(size_t align, size_t n)
{
    if (!real.malloc)
        resolve();
    return aligned_done(real.memalign(align, n), align, n, TRACE_CALL_MEMALIGN);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (!real.malloc)
        resolve();
    int rc = real.posix_memalign(out, align, n);
    aligned_done(rc == 0 ? *out : NULL, align, n, TRACE_CALL_POSIX_MEMALIGN);
    return rc;
}

EXPORT void *valloc(size_t n)
{
    if (!real.malloc)
        resolve();
    return aligned_done(real.valloc(n), (size_t)sysconf(_SC_PAGESIZE), n, TRACE_CALL_VALLOC);
}

EXPORT void *pvalloc(size_t n)
{
    if (!real.malloc)
        resolve();
    return aligned_done(real.pvalloc(n), (size_t)sysconf(_SC_PAGESIZE), n, TRACE_CALL_PVALLOC);
}

EXPORT size_t malloc_usable_size(void *p)
{
    if (p && in_bootstrap(p))
        return bootstrap_size(p);
    if (!real.malloc)
        resolve();
    size_t n = real.usable_size ? real.usable_size(p) : 0;
    if (recording() && p)
        emit(TRACE_USABLE_SIZE, n, 0, take_id(p, 0), 0, 0);
    return n;
}

static void sized_free(void *p, size_t n, size_t align)
{
    if (!p || in_bootstrap(p))
        return;
    uint64_t old = recording() ? take_id(p, 1) : 0;
    if (align && real.free_aligned_sized)
        real.free_aligned_sized(p, align, n);
    else if (!align && real.free_sized)
        real.free_sized(p, n);
    else
        real.free(p);
    if (recording())
        emit(TRACE_FREE_SIZED, n, 0, old, 0, log2_up(align));
}

EXPORT void free_sized(void *p, size_t n)
{
    sized_free(p, n, 0);
}

EXPORT void free_aligned_sized(void *p, size_t align, size_t n)
{
    sized_free(p, n, align);
}
