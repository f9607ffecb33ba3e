/* heaplab core: the only contract with the operating system.
 *
 * Every mapping, purge, clock read, futex, environment read and thread or
 * fork hook of the allocator goes through these functions: a port touches
 * this header's one implementation (os.c) and nothing else. Each function says
 * what it does to the process's resident set (RSS), because the accounting
 * in stats.c depends on it.
 */
#ifndef HEAPLAB_OS_H
#define HEAPLAB_OS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Size of the OS page the purge ranges are computed in. os_init() refuses
 * to run on a system whose page size differs (the ranges would then be
 * wrong, and a purge would silently return nothing). */
#define OS_PAGE_SHIFT 12
#define OS_PAGE ((size_t)1 << OS_PAGE_SHIFT)

/* not exported from libheaplab-preload.so */
#define OS_HIDDEN __attribute__((visibility("hidden")))

/* Checks the page size; returns 0 when heaplab can run here. */
int os_init(void) OS_HIDDEN;

/* Maps `size` bytes of fresh, zero-filled, read-write memory whose address
 * is a multiple of `align` (a power of two >= OS_PAGE). The mapping is
 * charged against the kernel's commit limit like any private writable
 * mapping (no MAP_NORESERVE): under the default heuristic a request larger
 * than the machine can back fails here. RSS: unchanged; the pages become
 * resident only when first touched. Returns NULL on failure.
 * `name` labels the mapping in /proc/PID/maps where the kernel allows it.
 * No function of this contract changes errno. */
void *os_map_aligned(size_t size, size_t align, const char *name) OS_HIDDEN;

/* The same, but the address `at` bytes into the mapping (at < align, an
 * OS_PAGE multiple) is the multiple of `align`: a block aligned to more than
 * a segment gets its header in the page just below it. */
void *os_map_aligned_at(size_t size, size_t align, size_t at, const char *name) OS_HIDDEN;

/* Unmaps [p, p+size). RSS: drops by whatever of it was resident. */
void os_unmap(void *p, size_t size) OS_HIDDEN;

/* Reserves `size` bytes of address space at a multiple of `size` (a power
 * of two), readable and reading as zeros, writable nowhere: no memory is
 * charged or made resident (a read maps the kernel's shared zero page),
 * and core dumps leave it out.
 * Made with the raw system calls, so that a sanitizer's runtime does not
 * set up its shadow for the whole range. NULL when the kernel refuses it,
 * or when the process has an address-space limit (RLIMIT_AS), where so
 * much reserved address space would crowd out the program's own. */
void *os_reserve_readable(size_t size) OS_HIDDEN;
/* Turns [p, p+size), inside such a reservation, into fresh zero-filled
 * read-write memory, charged like os_map_aligned's. 0 on success. */
int os_commit_fixed(void *p, size_t size, const char *name) OS_HIDDEN;
/* Gives [p, p+size) back: its pages are dropped and it reads as zeros again,
 * read-only, charged nothing, out of core dumps. RSS: drops by whatever of
 * it was resident. */
void os_decommit_readable(void *p, size_t size) OS_HIDDEN;

/* A batch of ranges to give back to the OS (os_purge_flush), kept on the
 * purging thread's stack: together in one call when `combine` is set, one
 * call per range otherwise. Ranges laid out as the kernel's struct iovec. */
#define OS_PURGE_BATCH 64
struct os_range {
    void *base;
    size_t len;
};
struct os_purge_batch {
    unsigned n;
    bool combine;
    struct os_range range[OS_PURGE_BATCH];
};

/* Adds [p, p+size) (OS_PAGE multiples) to the batch, giving the batch back
 * first when it is full. The range is given back only at that flush or the
 * next os_purge_flush: until then the caller keeps it free (under the lock
 * that guards it). Returns what that flush returned, 0 when none ran. */
size_t os_purge_add(struct os_purge_batch *b, void *p, size_t size) OS_HIDDEN;

/* Gives every range of the batch back to the OS but keeps the mappings
 * (the next touch reads zeros), and empties the batch. With `combine`, in
 * one process_madvise call where the kernel takes MADV_DONTNEED for the
 * calling process through the PIDFD_SELF sentinel (recent kernels: 6.18 on
 * the development VM); otherwise, or where the kernel refuses, one madvise
 * per range. One call flushes the TLB once for all its ranges (the whole
 * TLB, as they span more than a few pages) where a madvise each flushes
 * just its range's pages: fewer flushes, each of everything. RSS: drops at
 * once (MADV_DONTNEED), unlike MADV_FREE, which only drops under memory
 * pressure. Returns the system calls that succeeded. */
size_t os_purge_flush(struct os_purge_batch *b) OS_HIDDEN;
/* From now on, one madvise per range whatever the kernel allows. */
void os_purge_batches_off(void) OS_HIDDEN;

/* Grows or shrinks the mapping [p, p+old) to `new_size` without moving it.
 * RSS: a shrink drops the cut pages; a grow adds untouched pages only.
 * Returns 0 on success, -1 when the neighbouring addresses are taken. */
int os_remap_inplace(void *p, size_t old_size, size_t new_size) OS_HIDDEN;

/* Moves the pages of [p, p+size) onto the start of `dst`, a fresh mapping
 * of at least `size` bytes; the rest of `dst` stays as it was (untouched
 * zero pages), so a caller grows a mapping by moving it onto a bigger one.
 * (The move never grows inside mremap itself: valgrind 3.19 marks a tail
 * grown by MREMAP_FIXED inaccessible when the destination follows another
 * mapping, and reports every later access to it.)
 * RSS: unchanged (pages move without copying). Returns 0 on success. */
int os_move_to(void *p, size_t size, void *dst) OS_HIDDEN;

/* Sleeps while *word == expected (or returns at once when it is not, or
 * spuriously): the contended side of core_mutex (lock.c). */
void os_futex_wait(_Atomic uint32_t *word, uint32_t expected) OS_HIDDEN;
/* Wakes one thread sleeping on word. */
void os_futex_wake_one(_Atomic uint32_t *word) OS_HIDDEN;
/* A pause in a spin loop (lets the other hyperthread run). */
void os_cpu_relax(void) OS_HIDDEN;

/* Asks the CPU to bring the line at p into its cache, owned for writing
 * (a hint: it never faults, and any address will do). Inline, for the
 * malloc fast path, so the one CPU-specific line of the core outside os.c
 * sits here. On x86-64 it is PREFETCHW (a no-op where the CPU lacks it):
 * the read prefetch gcc emits for __builtin_prefetch(p, 1) without
 * -mprfchw brings the line in shared, and the program's first write then
 * needs a second transaction, which made a producer thread slower than no
 * prefetch at all (docs/core-development.md has the runs). */
static inline void os_prefetch_for_write(const void *p)
{
#if defined(__x86_64__)
    __asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1);
#endif
}

/* CPUs this process may run on (its affinity mask), at least 1. */
unsigned os_cpu_count(void) OS_HIDDEN;

/* The environment variable `name`, or NULL (read at start-up only). */
const char *os_getenv(const char *name) OS_HIDDEN;

/* Registers on_exit(arg) to run when a thread that called
 * os_thread_exit_arm(arg) exits (once per thread). Returns 0 on success. */
int os_thread_exit_init(void (*on_exit)(void *)) OS_HIDDEN;
/* May allocate (glibc's second-level key array). */
void os_thread_exit_arm(void *arg) OS_HIDDEN;

/* Registers handlers around fork(): prepare before, parent and child after.
 * May allocate. Returns 0 on success. */
int os_on_fork(void (*prepare)(void), void (*parent)(void), void (*child)(void)) OS_HIDDEN;

/* Monotonic time in milliseconds: drives the decay of free memory. Not a
 * fast-path call (a vDSO read, tens of nanoseconds). */
uint64_t os_now_ms(void) OS_HIDDEN;

#endif
