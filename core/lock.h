/* heaplab core: the mutex of the core's own locks (class locks, the segment
 * pool, medium arenas, the large list).
 *
 * A word with three states: 0 free, 1 held, 2 held and someone may sleep on
 * it. Taking a free lock is one compare-and-swap and giving it back one
 * exchange; only contention reaches the slow path, which spins briefly (the
 * critical sections are short) and then sleeps on a futex. glibc's mutex
 * does the same in about 30 instructions per call, checking kinds and owners
 * the core never uses: on a medium malloc + free, 110 of some 570. The
 * acquire and release orders are what ThreadSanitizer follows. */
#ifndef HEAPLAB_LOCK_H
#define HEAPLAB_LOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct hl_mutex {
    _Atomic uint32_t state;
} hl_mutex;

/* zero is a free lock, so static storage needs no initialiser */
#define HL_MUTEX_INIT {0}

enum { HL_MUTEX_FREE = 0, HL_MUTEX_HELD = 1, HL_MUTEX_CONTENDED = 2 };

void hl_mutex_lock_slow(hl_mutex *m) __attribute__((visibility("hidden")));
void hl_mutex_wake(hl_mutex *m) __attribute__((visibility("hidden")));

static inline bool hl_mutex_trylock(hl_mutex *m)
{
    uint32_t expected = HL_MUTEX_FREE;
    return atomic_compare_exchange_strong_explicit(&m->state, &expected, HL_MUTEX_HELD, memory_order_acquire,
                                                   memory_order_relaxed);
}

static inline void hl_mutex_lock(hl_mutex *m)
{
    if (__builtin_expect(!hl_mutex_trylock(m), 0))
        hl_mutex_lock_slow(m);
}

static inline void hl_mutex_unlock(hl_mutex *m)
{
    if (__builtin_expect(atomic_exchange_explicit(&m->state, HL_MUTEX_FREE, memory_order_release) ==
                             HL_MUTEX_CONTENDED,
                         0))
        hl_mutex_wake(m);
}

#endif
