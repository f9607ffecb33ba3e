/* heaplab core test: fork while other threads allocate. The child (whose
 * only thread is the forking one) must be able to allocate on every path,
 * free, check the heap and exit normally. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heaplab.h"
#include "testutil.h"

#define BUSY_THREADS 4
#define FORKS 20

static _Atomic int stop;

static void *churn(void *arg)
{
    uint64_t rng = (uintptr_t)arg * 77 + 1;
    void *slots[128] = {0};
    while (!atomic_load(&stop)) {
        uint64_t r = tu_rand(&rng);
        unsigned i = (unsigned)(r % 128);
        hl_free(slots[i]);
        size_t size = r % 64 == 0 ? 200000 : r % 4096;
        slots[i] = hl_malloc(size);
    }
    for (int i = 0; i < 128; i++)
        hl_free(slots[i]);
    return NULL;
}

static int child_work(void)
{
    void *p[64];
    for (int i = 0; i < 64; i++) {
        size_t size = i % 16 == 0 ? (size_t)2 << 20 : i % 4 == 0 ? 100000 : (size_t)i * 37;
        p[i] = hl_malloc(size);
        if (!p[i])
            return 2;
        memset(p[i], i, size);
    }
    for (int i = 0; i < 64; i++) {
        const unsigned char *b = p[i];
        if (b[0] != (unsigned char)i)
            return 3;
        hl_free(p[i]);
    }
    /* (no hl_check here: a block another thread was moving between its
     * cache and the program at the instant of fork is lost to the child,
     * which is consistent but not "quiescent") */
    return 0;
}

int main(void)
{
    pthread_t t[BUSY_THREADS];
    for (uintptr_t i = 0; i < BUSY_THREADS; i++)
        pthread_create(&t[i], NULL, churn, (void *)(i + 1));
    int ok = 0;
    for (int f = 0; f < FORKS; f++) {
        pid_t pid = fork();
        if (pid == 0)
            _exit(child_work());
        int status = -1;
        waitpid(pid, &status, 0);
        ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
        usleep(2000);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < BUSY_THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK("children of a process with allocating threads allocate, free and exit", ok == FORKS);
    CHECK("parent heap consistent after the forks", hl_check() == 0);
    return tu_finish();
}
