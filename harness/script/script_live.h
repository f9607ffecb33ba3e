/* A thread's live blocks: a ring of (pointer, size) pairs in memory mapped
 * from the system, never from the allocator being measured. */
#ifndef HEAPLAB_SCRIPT_LIVE_H
#define HEAPLAB_SCRIPT_LIVE_H

#include <stddef.h>

#include "script_internal.h"

typedef struct live_block {
    void *p;
    size_t size;
} live_block;

/* Invariant: the live blocks are ring[head], ring[head+1], ... count of them,
 * indices taken modulo cap, oldest first (as far as random removals, which
 * move the newest block into the hole, keep that order); bytes is the sum of
 * their sizes. */
typedef struct live_set {
    live_block *ring;
    long long cap;
    long long head;
    long long count;
    size_t bytes;
} live_set;

/* Maps and pre-faults room for `cap` blocks, so the bookkeeping's pages are
 * resident before the first phase and weigh the same in every phase and for
 * every allocator. Returns 0 or -1 (errno from mmap). */
int live_map(live_set *ls, long long cap);
void live_unmap(live_set *ls);

/* Appends a block; the caller keeps count < cap (the static count does). */
static inline void live_push(live_set *ls, void *p, size_t size)
{
    long long i = ls->head + ls->count;
    if (i >= ls->cap)
        i -= ls->cap;
    ls->ring[i].p = p;
    ls->ring[i].size = size;
    ls->count++;
    ls->bytes += size;
}

/* The slot of the i-th live block (0 = oldest). */
static inline live_block *live_at(live_set *ls, long long i)
{
    long long j = ls->head + i;
    return &ls->ring[j >= ls->cap ? j - ls->cap : j];
}

/* Removes and returns a block in the given order; `pick` is a random number
 * used by ORDER_RANDOM. The set must not be empty. */
static inline live_block live_take(live_set *ls, sc_order order, unsigned long long pick)
{
    live_block b;
    if (order == ORDER_FIFO) {
        b = ls->ring[ls->head];
        ls->head = ls->head + 1 == ls->cap ? 0 : ls->head + 1;
    } else {
        live_block *last = live_at(ls, ls->count - 1);
        if (order == ORDER_RANDOM) {
            live_block *victim = live_at(ls, (long long)(pick % (unsigned long long)ls->count));
            b = *victim;
            *victim = *last;
        } else {
            b = *last;
        }
    }
    ls->count--;
    ls->bytes -= b.size;
    return b;
}

#endif
