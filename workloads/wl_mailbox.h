/* A bounded mailbox of block pointers: one or more sender threads put
 * blocks in, one receiver takes them out and frees them. It is how the
 * classic workloads hand blocks to another thread (xmalloc's producers to
 * their consumer, rptest's threads to their neighbour).
 *
 * A spin lock guards a ring of pointers in bookkeeping memory
 * (wl_scratch_get), so handing over allocates nothing from the measured
 * allocator. A thread that finds the lock taken, or has to wait for room or
 * for blocks, yields the CPU at once (sched_yield) instead of spinning or
 * sleeping in the kernel: with more threads than cores a spinning waiter
 * would steal the core from the thread it waits for, and under callgrind,
 * which runs one thread at a time and hands over in FIFO order
 * (--fair-sched), a yield passes the CPU deterministically where a sleep
 * would race with the host's wake-up, so instruction counts repeat.
 *
 * Invariant: 0 <= count <= capacity; the pointers in the box are
 * slots[(head + i) % capacity] for i < count.
 */
#ifndef HEAPLAB_WORKLOADS_WL_MAILBOX_H
#define HEAPLAB_WORKLOADS_WL_MAILBOX_H

#include <stdatomic.h>
#include <stddef.h>

#include "wl_common.h"

typedef struct wl_mailbox {
    _Alignas(WL_CACHE_LINE) atomic_flag lock;
    void **slots;           /* [capacity] */
    size_t capacity;
    size_t head;            /* next slot to take */
    size_t count;           /* pointers in the box */
    int senders;            /* senders that have not closed their side */
} wl_mailbox;

/* Maps the ring. Returns 0, or -1 after wl_fail(). */
int wl_mailbox_init(wl_ctx *ctx, wl_mailbox *mb, size_t capacity, int senders);

/* Unmaps the ring (the box must be empty or its blocks already freed). */
void wl_mailbox_release(wl_mailbox *mb);

/* Puts up to n pointers without waiting; returns how many went in. */
size_t wl_mailbox_try_put(wl_mailbox *mb, void *const *blocks, size_t n);

/* Puts all n pointers, waiting while the box is full. */
void wl_mailbox_put(wl_mailbox *mb, void *const *blocks, size_t n);

/* Takes up to cap pointers into out and returns how many. With `wait`, waits
 * until there is at least one or every sender has closed (then returns 0). */
size_t wl_mailbox_take(wl_mailbox *mb, void **out, size_t cap, int wait);

/* A sender says it will put nothing more. */
void wl_mailbox_close(wl_mailbox *mb);

#endif
