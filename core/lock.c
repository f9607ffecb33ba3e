/* heaplab core: the contended side of hl_mutex (lock.h). */
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

void hl_mutex_lock_slow(hl_mutex *m)
{
    for (int i = 0; i < SPINS; i++) {
        if (atomic_load_explicit(&m->state, memory_order_relaxed) == HL_MUTEX_FREE && hl_mutex_trylock(m))
            return;
        cpu_relax();
    }
    /* From here the lock is marked contended whenever this thread takes it,
     * so the holder's unlock always wakes a sleeper (at worst one wake too
     * many). */
    /* a wait that finds the word changed fails with EAGAIN: the program's
     * errno must not see it */
    int saved = errno;
    while (atomic_exchange_explicit(&m->state, HL_MUTEX_CONTENDED, memory_order_acquire) != HL_MUTEX_FREE)
        syscall(SYS_futex, &m->state, FUTEX_WAIT_PRIVATE, HL_MUTEX_CONTENDED, NULL, NULL, 0);
    errno = saved;
}

void hl_mutex_wake(hl_mutex *m)
{
    int saved = errno;
    syscall(SYS_futex, &m->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    errno = saved;
}
