/* heaplab core test: a fork child starts with a consistent heap.
 *
 * 8 threads churn small blocks (now and then a medium or large one), pass a
 * share of them to each other through an exchange array (so blocks are
 * freed by a thread other than the one that allocated them) and sometimes
 * flush their caches: at any instant, blocks are moving between thread
 * caches, the central stores and the span bitmaps. The main thread forks
 * FORKS children meanwhile. Each child, whose only thread is the forking
 * one, must find every invariant holding (hl_check() == 0: the blocks that
 * were in flight at the fork are counted or reclaimed), allocate and free on
 * every path, and then check clean again. Every process arms alarm(): a
 * deadlock fails the test instead of hanging it.
 *
 * The blocks the other threads held (in their caches, or in their hands)
 * are lost to the child, and the stats count them as thread-cached (the
 * `tcache` field): each child's stats must balance with those orphans not
 * wrapped below zero (tcache at most mapped), and after it flushes its own
 * cache, `tcache` (the orphans alone) must stay the same through the
 * child's own work: counted once, never reused, never dropped. Before the
 * threads start, one exact case: a thread that freed blocks into its cache
 * waits, idle, while the main thread forks; the child's `tcache` must be
 * exactly the bytes that thread's cache held in the parent. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heaplab.h"
#include "testutil.h"

#define THREADS 8
#define FORKS 200
#define SLOTS 256    /* blocks each thread holds */
#define EXCHANGE 512 /* blocks waiting for another thread */
/* hang detectors, not performance limits: generous for sanitizer builds */
#define CHILD_ALARM_S 10
#define PROCESS_ALARM_S 110
/* a child's exit status: what failed */
enum child_status {
    CHILD_OK = 0,
    CHILD_OK_NO_ORPHANS = 1,
    CHILD_CHECK_AT_START = 2,
    CHILD_NULL = 3,
    CHILD_CONTENT = 4,
    CHILD_CHECK_AFTER = 5,
    CHILD_STATS_AT_START = 6,
    CHILD_ORPHANS_CHANGED = 7,
};
/* the exact case: blocks the idle thread frees into its cache */
#define IDLE_BLOCKS 100
#define IDLE_BLOCK_SIZE 64

static _Atomic int stop;
/* set by the parent while a child runs: the threads wait between two
 * operations, so the child (which forked in the middle of one) does not
 * share two cores with eight busy threads */
static _Atomic int child_running;
static _Atomic(void *) exchange[EXCHANGE];

/* mostly small blocks; 1 in 128 medium, 1 in 4096 large */
static size_t churn_size(uint64_t r)
{
    if (r % 4096 == 0)
        return (size_t)2 << 20;
    if (r % 128 == 1)
        return 40000 + (size_t)(r >> 20) % 100000;
    return 1 + (size_t)(r >> 20) % (r % 8 == 0 ? 8192 : 512);
}

static void *churn(void *arg)
{
    uint64_t rng = (uintptr_t)arg * 0x9E3779B97F4A7C15ULL + 1;
    void *slots[SLOTS] = {0};
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        while (atomic_load_explicit(&child_running, memory_order_relaxed))
            usleep(100);
        uint64_t r = tu_rand(&rng);
        unsigned i = (unsigned)(r % SLOTS);
        hl_free(slots[i]);
        slots[i] = hl_malloc(churn_size(r));
        if (r % 4 == 0) /* pass it on; take whatever another thread left */
            slots[i] = atomic_exchange(&exchange[(r >> 12) % EXCHANGE], slots[i]);
        if (r % 1024 == 2) /* the cache's blocks go back to the central stores */
            hl_thread_flush();
    }
    for (int i = 0; i < SLOTS; i++)
        hl_free(slots[i]);
    return NULL;
}

/* balanced, and the orphans (all of tcache once the child flushed its own
 * cache) not wrapped below zero */
static int orphans_accounted(const hl_stats_t *s)
{
    return hl_stats_balanced(s) && s->tcache <= s->mapped;
}

static enum child_status child_work(void)
{
    alarm(CHILD_ALARM_S);
    if (hl_check() != 0)
        return CHILD_CHECK_AT_START;
    hl_thread_flush();
    hl_stats_t at_start;
    hl_stats(&at_start);
    if (!orphans_accounted(&at_start))
        return CHILD_STATS_AT_START;
    void *p[64];
    size_t sizes[64];
    for (int i = 0; i < 64; i++) {
        size_t size = i % 16 == 0 ? (size_t)2 << 20 : i % 4 == 0 ? 100000 : (size_t)i * 37 + 1;
        p[i] = hl_malloc(size);
        if (!p[i])
            return CHILD_NULL;
        sizes[i] = size;
        /* the first and last bytes: enough to reach every page's mapping
         * without faulting in megabytes while the parent runs */
        memset(p[i], i, size < 256 ? size : 256);
        ((unsigned char *)p[i])[size - 1] = (unsigned char)i;
    }
    for (int i = 0; i < 64; i++) {
        const unsigned char *b = p[i];
        if (b[0] != (unsigned char)i || b[sizes[i] - 1] != (unsigned char)i)
            return CHILD_CONTENT;
        hl_free(p[i]);
    }
    hl_thread_flush();
    if (hl_check() != 0)
        return CHILD_CHECK_AFTER;
    hl_stats_t after;
    hl_stats(&after);
    if (!orphans_accounted(&after) || after.tcache != at_start.tcache)
        return CHILD_ORPHANS_CHANGED;
    return at_start.tcache > 0 ? CHILD_OK : CHILD_OK_NO_ORPHANS;
}

/* ---- the exact case: one idle thread's cache at the fork ----------------- */

static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static int idle_cached, idle_release;

/* frees IDLE_BLOCKS blocks into its cache, then waits, holding them, until
 * told to flush and exit */
static void *idle_holder(void *arg)
{
    (void)arg;
    void *p[IDLE_BLOCKS];
    for (int i = 0; i < IDLE_BLOCKS; i++)
        p[i] = hl_malloc(IDLE_BLOCK_SIZE);
    for (int i = 0; i < IDLE_BLOCKS; i++)
        hl_free(p[i]);
    pthread_mutex_lock(&idle_lock);
    idle_cached = 1;
    pthread_cond_broadcast(&idle_cond);
    while (!idle_release)
        pthread_cond_wait(&idle_cond, &idle_lock);
    pthread_mutex_unlock(&idle_lock);
    hl_thread_flush();
    return NULL;
}

/* the child of the exact case: exit status 0 when its stats count the idle
 * thread's cache (`held` bytes) as orphans, exactly, before and after its
 * own blocks of the same size come and go */
enum idle_status { IDLE_OK = 0, IDLE_CHECK = 2, IDLE_UNBALANCED = 3, IDLE_NOT_COUNTED = 4, IDLE_CHANGED = 5 };
static enum idle_status idle_child(size_t held, size_t live)
{
    alarm(CHILD_ALARM_S);
    if (hl_check() != 0)
        return IDLE_CHECK;
    hl_thread_flush();
    hl_stats_t s;
    hl_stats(&s);
    if (!hl_stats_balanced(&s))
        return IDLE_UNBALANCED;
    if (s.tcache != held || s.live != live)
        return IDLE_NOT_COUNTED;
    void *p[IDLE_BLOCKS];
    for (int i = 0; i < IDLE_BLOCKS; i++)
        p[i] = hl_malloc(IDLE_BLOCK_SIZE);
    for (int i = 0; i < IDLE_BLOCKS; i++)
        hl_free(p[i]);
    hl_thread_flush();
    hl_stats(&s);
    if (!hl_stats_balanced(&s) || s.tcache != held || s.live != live || hl_check() != 0)
        return IDLE_CHANGED;
    return IDLE_OK;
}

static void fork_with_idle_cache(void)
{
    pthread_t t;
    pthread_create(&t, NULL, idle_holder, NULL);
    pthread_mutex_lock(&idle_lock);
    while (!idle_cached)
        pthread_cond_wait(&idle_cond, &idle_lock);
    pthread_mutex_unlock(&idle_lock);
    /* the main thread's own cache empty: tcache is the idle thread's */
    hl_thread_flush();
    hl_stats_t parent;
    hl_stats(&parent);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(idle_child(parent.tcache, parent.live));
    int status = -1;
    waitpid(pid, &status, 0);
    pthread_mutex_lock(&idle_lock);
    idle_release = 1;
    pthread_cond_broadcast(&idle_cond);
    pthread_mutex_unlock(&idle_lock);
    pthread_join(t, NULL);
    printf("     the idle thread held %zu bytes in its cache at the fork\n", parent.tcache);
    CHECK("before the fork, the idle thread's cache holds blocks (tcache > 0)", parent.tcache > 0);
    CHECK("fork child: the idle thread's cached blocks are counted in tcache, exactly, and the stats balance",
          WIFEXITED(status) && WEXITSTATUS(status) == IDLE_OK);
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == IDLE_OK))
        printf("     child status %d (exit 2 hl_check, 3 unbalanced, 4 tcache or live not as in the parent, "
               "5 changed by the child's own blocks)\n", status);
}

int main(void)
{
    alarm(PROCESS_ALARM_S);
    fork_with_idle_cache();
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, churn, (void *)(i + 1));
    int ok = 0, with_orphans = 0, bad_at_start = 0, bad_stats = 0, other = 0;
    for (int f = 0; f < FORKS; f++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
            _exit(child_work());
        atomic_store(&child_running, 1);
        int status = -1;
        waitpid(pid, &status, 0);
        atomic_store(&child_running, 0);
        if (WIFEXITED(status) && (WEXITSTATUS(status) == CHILD_OK || WEXITSTATUS(status) == CHILD_OK_NO_ORPHANS)) {
            ok++;
            with_orphans += WEXITSTATUS(status) == CHILD_OK;
        } else if (WIFEXITED(status) &&
                   (WEXITSTATUS(status) == CHILD_STATS_AT_START || WEXITSTATUS(status) == CHILD_ORPHANS_CHANGED)) {
            printf("fork child %d: %s\n", f,
                   WEXITSTATUS(status) == CHILD_STATS_AT_START
                       ? "stats unbalanced or orphans below zero at the start"
                       : "orphans (tcache after a flush) changed by the child's own work, or stats unbalanced");
            bad_stats++;
        } else if (WIFEXITED(status) && WEXITSTATUS(status) == CHILD_CHECK_AT_START) {
            printf("fork child %d: hl_check failed at the start (its lines are on stderr)\n", f);
            bad_at_start++;
        } else {
            if (WIFSIGNALED(status))
                printf("fork child %d: killed by signal %d\n", f, WTERMSIG(status));
            else
                printf("fork child %d: exit status %d (3 NULL, 4 content, 5 hl_check after its work)\n", f,
                       WEXITSTATUS(status));
            other++;
        }
        usleep(200);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < EXCHANGE; i++)
        hl_free(atomic_exchange(&exchange[i], NULL));
    printf("%d of %d children clean, %d of them with other threads' blocks to count as orphans\n", ok, FORKS,
           with_orphans);
    CHECK("every child of 8 allocating threads starts with hl_check() == 0 (200 forks)", bad_at_start == 0);
    CHECK("every child allocates and frees on every path and checks clean after", other == 0);
    CHECK("every child's stats balance with the orphans counted in tcache (not below zero), "
          "the same after the child's own work",
          bad_stats == 0);
    CHECK("children had other threads' blocks to count (orphans in at least one child)", with_orphans > 0);
    CHECK("parent heap consistent after the forks", hl_check() == 0);
    hl_thread_flush();
    hl_stats_t s;
    hl_stats(&s);
    CHECK("parent: every block freed, stats balanced", s.live == 0 && hl_stats_balanced(&s));
    return tu_finish();
}
