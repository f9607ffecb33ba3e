/* heaplab core: the contended side of core_mutex (lock.h). */
#include "lock.h"

#include "os.h"

/* Spins before sleeping: a holder on the other core is usually done within
 * this many reads of the word. */
#define SPINS 100

void core_mutex_lock_slow(core_mutex *m)
{
    for (int i = 0; i < SPINS; i++) {
        if (atomic_load_explicit(&m->state, memory_order_relaxed) == CORE_MUTEX_FREE && core_mutex_trylock(m))
            return;
        os_cpu_relax();
    }
    /* From here the lock is marked contended whenever this thread takes it,
     * so the holder's unlock always wakes a sleeper (at worst one wake too
     * many). */
    while (atomic_exchange_explicit(&m->state, CORE_MUTEX_CONTENDED, memory_order_acquire) != CORE_MUTEX_FREE)
        os_futex_wait(&m->state, CORE_MUTEX_CONTENDED);
}

void core_mutex_wake(core_mutex *m)
{
    os_futex_wake_one(&m->state);
}
