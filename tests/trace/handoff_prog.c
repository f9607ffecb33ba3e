/* A small program to record: two threads that pass blocks to each other,
 * reallocs, the aligned family, calloc, usable size, and a fork whose child
 * allocates too. Prints the calls it made, as JSON, so the test can check
 * the trace against it. */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { ROUNDS = 2000, SLOTS = 64 };

static void *mailbox[SLOTS];
static int filled[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

/* the producer allocates; the consumer frees what it receives */
static void *producer(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        void *p = malloc((size_t)(16 + i % 200));
        if (!p)
            abort();
        memset(p, 1, 16);
        pthread_mutex_lock(&lock);
        while (filled[i % SLOTS])
            pthread_cond_wait(&changed, &lock);
        mailbox[i % SLOTS] = p;
        filled[i % SLOTS] = 1;
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        pthread_mutex_lock(&lock);
        while (!filled[i % SLOTS])
            pthread_cond_wait(&changed, &lock);
        void *p = mailbox[i % SLOTS];
        filled[i % SLOTS] = 0;
        pthread_cond_broadcast(&changed);
        pthread_mutex_unlock(&lock);
        free(p);
    }
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, producer, NULL);
    pthread_create(&b, NULL, consumer, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);

    char *s = NULL;
    for (int i = 1; i <= 100; i++)
        s = realloc(s, (size_t)i * 48);
    free(s);
    void *al = aligned_alloc(256, 1024);
    void *pm = NULL;
    if (posix_memalign(&pm, 64, 100) != 0)
        return 1;
    void *me = memalign(4096, 10);
    void *c = calloc(10, 30);
    size_t u = malloc_usable_size(c);
    /* the blocks are used, so the compiler keeps every call */
    memset(al, 2, 1024);
    memset(pm, 3, 100);
    memset(me, 4, 10);
    printf("{\"bytes\": %d, ", ((char *)al)[5] + ((char *)pm)[7] + ((char *)me)[9] + ((char *)c)[1]);
    free(al);
    free(pm);
    free(me);
    free(c);

    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        for (int i = 0; i < 10; i++)
            free(malloc(32));
        exit(0); /* exit, not _exit: the child flushes a raw file of its own */
    }
    int status;
    waitpid(child, &status, 0);
    printf("\"cross_thread_frees\": %d, \"realloc\": 100, \"aligned\": 3, \"calloc\": 1, "
           "\"usable_size\": 1, \"child_status\": %d, \"usable\": %zu}\n",
           ROUNDS, status, u);
    return 0;
}
