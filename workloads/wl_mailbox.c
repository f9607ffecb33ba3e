/* The classic workloads' hand-off box: see wl_mailbox.h. */
#include "wl_mailbox.h"

#include <sched.h>

static void mb_lock(wl_mailbox *mb)
{
    while (atomic_flag_test_and_set_explicit(&mb->lock, memory_order_acquire))
        sched_yield();
}

static void mb_unlock(wl_mailbox *mb)
{
    atomic_flag_clear_explicit(&mb->lock, memory_order_release);
}

int wl_mailbox_init(wl_ctx *ctx, wl_mailbox *mb, size_t capacity, int senders)
{
    mb->slots = wl_scratch_get(ctx, capacity * sizeof *mb->slots);
    if (mb->slots == NULL)
        return -1;
    atomic_flag_clear(&mb->lock);
    mb->capacity = capacity;
    mb->head = 0;
    mb->count = 0;
    mb->senders = senders;
    return 0;
}

void wl_mailbox_release(wl_mailbox *mb)
{
    if (mb->slots == NULL)
        return;
    wl_scratch_put(mb->slots, mb->capacity * sizeof *mb->slots);
    mb->slots = NULL;
}

/* Copies up to n pointers in; the caller holds the lock. */
static size_t put_locked(wl_mailbox *mb, void *const *blocks, size_t n)
{
    size_t room = mb->capacity - mb->count;
    size_t k = n < room ? n : room;
    size_t tail = (mb->head + mb->count) % mb->capacity;
    for (size_t i = 0; i < k; i++) {
        mb->slots[tail] = blocks[i];
        tail = tail + 1 == mb->capacity ? 0 : tail + 1;
    }
    mb->count += k;
    return k;
}

size_t wl_mailbox_try_put(wl_mailbox *mb, void *const *blocks, size_t n)
{
    mb_lock(mb);
    size_t k = put_locked(mb, blocks, n);
    mb_unlock(mb);
    return k;
}

void wl_mailbox_put(wl_mailbox *mb, void *const *blocks, size_t n)
{
    while (n > 0) {
        size_t k = wl_mailbox_try_put(mb, blocks, n);
        blocks += k;
        n -= k;
        if (n > 0)
            sched_yield(); /* full: let the receiver run */
    }
}

size_t wl_mailbox_take(wl_mailbox *mb, void **out, size_t cap, int wait)
{
    for (;;) {
        mb_lock(mb);
        size_t k = mb->count < cap ? mb->count : cap;
        for (size_t i = 0; i < k; i++) {
            out[i] = mb->slots[mb->head];
            mb->head = mb->head + 1 == mb->capacity ? 0 : mb->head + 1;
        }
        mb->count -= k;
        int open = mb->senders > 0;
        mb_unlock(mb);
        if (k > 0 || !wait || !open)
            return k;
        sched_yield(); /* empty: let a sender run */
    }
}

void wl_mailbox_close(wl_mailbox *mb)
{
    mb_lock(mb);
    mb->senders--;
    mb_unlock(mb);
}
