/* heaplab core: process start-up, the lock order, fork and trim.
 *
 * Fork safety rests on two facts:
 *   - the fork handlers are registered before any second thread can exist
 *     (a constructor initialises the core before main, and before the
 *     constructors of the program that might start threads), so no fork can
 *     happen between a thread taking a core lock and the handlers existing;
 *   - the prepare handler takes every core lock, init_lock included, in the
 *     one lock order, so no lock is mid-update when the address space is
 *     copied. Fast paths take no lock at all; decay only trylocks. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

_Atomic int core_initialized;
#if HEAPLAB_MUTANTS
/* the deliberate mistake this process makes (HEAPLAB_MUTANT; 0: none) */
int core_mutant;
static void mutant_from_env(void)
{
    const char *m = os_getenv("HEAPLAB_MUTANT");
    core_mutant = m ? (int)strtol(m, NULL, 10) : 0;
}
#else
static void mutant_from_env(void)
{
}
#endif
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
unsigned core_arenas = 1;
unsigned core_cpus = 1;

/* The arenas threads are spread over: HEAPLAB_HEAPS, or the CPUs plus one
 * (internal.h says why). A value that is not a count of arenas stops the
 * program with one line, rather than run it on a setting it did not ask for. */
_Static_assert(THREAD_ARENAS == 16, "the HEAPLAB_HEAPS message names the most arenas");
static unsigned arenas_from_env(unsigned cpus)
{
    const char *env = os_getenv("HEAPLAB_HEAPS");
    if (env == NULL || *env == '\0')
        return cpus < THREAD_ARENAS ? cpus + 1 : THREAD_ARENAS;
    char *end;
    long n = strtol(env, &end, 10);
    if (*end != '\0' || n < 1 || n > THREAD_ARENAS)
        core_fail("HEAPLAB_HEAPS must be a whole number from 1 to 16");
    return (unsigned)n;
}

/* HEAPLAB_PURGE_BATCH=0 gives free memory back with one madvise per range,
 * as on a kernel that refuses batches: for measuring what batches buy, and
 * for testing that path on any kernel. */
static void purge_batches_from_env(void)
{
    const char *env = os_getenv("HEAPLAB_PURGE_BATCH");
    if (env == NULL || *env == '\0' || strcmp(env, "1") == 0)
        return;
    if (strcmp(env, "0") != 0)
        core_fail("HEAPLAB_PURGE_BATCH must be 0 or 1");
    os_purge_batches_off();
}

/* HEAPLAB_SMALL_RANGE=0 reserves no range for the small segments: each is
 * mapped on its own and found through the registry, as when the kernel
 * refuses the reservation (for testing that path on any machine). */
static bool small_range_from_env(void)
{
    const char *env = os_getenv("HEAPLAB_SMALL_RANGE");
    if (env == NULL || *env == '\0' || strcmp(env, "1") == 0)
        return true;
    if (strcmp(env, "0") != 0)
        core_fail("HEAPLAB_SMALL_RANGE must be 0 or 1");
    return false;
}

void core_lock_all(void)
{
    for (unsigned h = 0; h < SMALL_HEAPS; h++)
        for (unsigned i = 0; i < CLASS_LOCKS; i++)
            core_mutex_lock(&core_class_locks[h][i].m);
    core_mutex_lock(&core_pool.lock);
    medium_lock_all();
    large_lock();
}

void core_unlock_all(void)
{
    large_unlock();
    medium_unlock_all();
    core_mutex_unlock(&core_pool.lock);
    for (unsigned h = SMALL_HEAPS; h-- > 0;)
        for (unsigned i = CLASS_LOCKS; i-- > 0;)
            core_mutex_unlock(&core_class_locks[h][i].m);
}

/* fork: no lock may be held by a thread that will not exist in the child.
 * init_lock comes first: a thread inside core_init_slow may go on to take
 * class locks (registering the handlers can allocate). */
static void fork_prepare(void)
{
    pthread_mutex_lock(&init_lock);
    core_lock_all();
    pthread_mutex_lock(&core_threads.lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&core_threads.lock);
    core_unlock_all();
    pthread_mutex_unlock(&init_lock);
}

static void fork_child(void)
{
    /* the forking thread holds every lock: it is the child's only thread */
    tcache_after_fork_child();
    central_recount_after_fork();
    decay_after_fork_child();
    pthread_mutex_unlock(&core_threads.lock);
    core_unlock_all();
    pthread_mutex_unlock(&init_lock);
}

void core_init_slow(void)
{
    pthread_mutex_lock(&init_lock);
    if (!atomic_load_explicit(&core_initialized, memory_order_relaxed)) {
        if (os_init() != 0)
            core_fail("the OS page size is not 4 KiB; heaplab cannot run here");
        size_class_init();
        mutant_from_env();
        core_cpus = os_cpu_count();
        core_arenas = arenas_from_env(core_cpus);
        purge_batches_from_env();
        const char *env = os_getenv("HEAPLAB_TCACHE");
        if (env && strcmp(env, "0") == 0)
            atomic_store_explicit(&core_tcache_on, 0, memory_order_relaxed);
        atomic_store_explicit(&core_clock_ms, os_now_ms(), memory_order_relaxed);
        tcache_init();
        if (small_range_from_env())
            segment_range_init();
        atomic_store_explicit(&core_initialized, 1, memory_order_release);
        /* last: it may allocate, which must find heaplab ready (that
         * allocation takes class locks, never init_lock). glibc fails it
         * only without memory; the program then runs without the handlers,
         * as it would have to on any allocator. */
        (void)os_on_fork(fork_prepare, fork_parent, fork_child);
    }
    pthread_mutex_unlock(&init_lock);
}

/* Initialise before main: the fork handlers must exist before the program
 * can start a thread, or a fork racing a thread's first allocation copies
 * a held lock into the child (which then hangs on its first allocation). */
__attribute__((constructor)) static void core_init_at_load(void)
{
    core_ensure_init();
}

size_t hl_trim(void)
{
    if (!atomic_load_explicit(&core_initialized, memory_order_acquire))
        return 0;
    hl_thread_flush();
    return decay_purge_all();
}
