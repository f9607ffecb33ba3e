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

typedef struct core_mutex {
    _Atomic uint32_t state;
} core_mutex;

/* zero is a free lock, so static storage needs no initialiser */
#define CORE_MUTEX_INIT {0}

enum { CORE_MUTEX_FREE = 0, CORE_MUTEX_HELD = 1, CORE_MUTEX_CONTENDED = 2 };

void core_mutex_lock_slow(core_mutex *m) __attribute__((visibility("hidden")));
void core_mutex_wake(core_mutex *m) __attribute__((visibility("hidden")));

static inline bool core_mutex_trylock(core_mutex *m)
{
    uint32_t expected = CORE_MUTEX_FREE;
    return atomic_compare_exchange_strong_explicit(&m->state, &expected, CORE_MUTEX_HELD, memory_order_acquire,
                                                   memory_order_relaxed);
}

/* held by some thread: the debug tier's precondition (it cannot tell which) */
static inline bool core_mutex_is_held(core_mutex *m)
{
    return atomic_load_explicit(&m->state, memory_order_relaxed) != CORE_MUTEX_FREE;
}

static inline void core_mutex_lock(core_mutex *m)
{
    if (__builtin_expect(!core_mutex_trylock(m), 0))
        core_mutex_lock_slow(m);
}

static inline void core_mutex_unlock(core_mutex *m)
{
    if (__builtin_expect(atomic_exchange_explicit(&m->state, CORE_MUTEX_FREE, memory_order_release) ==
                             CORE_MUTEX_CONTENDED,
                         0))
        core_mutex_wake(m);
}

#endif
