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
 * deadlock fails the test instead of hanging it. */
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
enum child_status { CHILD_OK = 0, CHILD_CHECK_AT_START = 2, CHILD_NULL = 3, CHILD_CONTENT = 4, CHILD_CHECK_AFTER = 5 };

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

static enum child_status child_work(void)
{
    alarm(CHILD_ALARM_S);
    if (hl_check() != 0)
        return CHILD_CHECK_AT_START;
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
    return hl_check() == 0 ? CHILD_OK : CHILD_CHECK_AFTER;
}

int main(void)
{
    alarm(PROCESS_ALARM_S);
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, churn, (void *)(i + 1));
    int ok = 0, bad_at_start = 0, other = 0;
    for (int f = 0; f < FORKS; f++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
            _exit(child_work());
        atomic_store(&child_running, 1);
        int status = -1;
        waitpid(pid, &status, 0);
        atomic_store(&child_running, 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) == CHILD_OK) {
            ok++;
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
    printf("%d of %d children clean\n", ok, FORKS);
    CHECK("every child of 8 allocating threads starts with hl_check() == 0 (200 forks)", bad_at_start == 0);
    CHECK("every child allocates and frees on every path and checks clean after", other == 0);
    CHECK("parent heap consistent after the forks", hl_check() == 0);
    hl_thread_flush();
    hl_stats_t s;
    hl_stats(&s);
    CHECK("parent: every block freed, stats balanced", s.live == 0 && hl_stats_balanced(&s));
    return tu_finish();
}
