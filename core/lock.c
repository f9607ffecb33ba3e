/* heaplab core: the contended side of core_mutex (lock.h). */
#include "lock.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Spins before sleeping: a holder on the other core is usually done within
 * this many reads of the word. */
#define SPINS 100

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

void core_mutex_lock_slow(core_mutex *m)
{
    for (int i = 0; i < SPINS; i++) {
        if (atomic_load_explicit(&m->state, memory_order_relaxed) == CORE_MUTEX_FREE && core_mutex_trylock(m))
            return;
        cpu_relax();
    }
    /* From here the lock is marked contended whenever this thread takes it,
     * so the holder's unlock always wakes a sleeper (at worst one wake too
     * many). */
    /* a wait that finds the word changed fails with EAGAIN: the program's
     * errno must not see it */
    int saved = errno;
    while (atomic_exchange_explicit(&m->state, CORE_MUTEX_CONTENDED, memory_order_acquire) != CORE_MUTEX_FREE)
        syscall(SYS_futex, &m->state, FUTEX_WAIT_PRIVATE, CORE_MUTEX_CONTENDED, NULL, NULL, 0);
    errno = saved;
}

void core_mutex_wake(core_mutex *m)
{
    int saved = errno;
    syscall(SYS_futex, &m->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = saved;
}
