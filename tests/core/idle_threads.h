/* heaplab core tests: threads that set up a cache and a heap, then wait, so
 * that the core counts them as live while the test's own thread works. */
#ifndef HEAPLAB_IDLE_THREADS_H
#define HEAPLAB_IDLE_THREADS_H

#include <pthread.h>

#include "heaplab.h"
#include "testutil.h"

#define IDLE_THREADS_MAX 8

static pthread_barrier_t idle_set_up, idle_release;
static pthread_t idle_ids[IDLE_THREADS_MAX];
static int idle_count;
/* what each idle thread does before it waits (NULL: one block allocated
 * and freed, which sets up its cache and heap) */
static void (*idle_setup)(void);

static void *idle_thread_main(void *arg)
{
    (void)arg;
    if (idle_setup)
        idle_setup();
    else
        hl_free(hl_malloc(64));
    pthread_barrier_wait(&idle_set_up);
    pthread_barrier_wait(&idle_release);
    return NULL;
}

/* starts n (at most IDLE_THREADS_MAX) idle threads, each running `setup`
 * (see idle_setup) before it waits; returns once each has */
static inline void idle_threads_start_with(int n, void (*setup)(void))
{
    idle_setup = setup;
    idle_count = n;
    pthread_barrier_init(&idle_set_up, NULL, (unsigned)n + 1);
    pthread_barrier_init(&idle_release, NULL, (unsigned)n + 1);
    for (int i = 0; i < n; i++)
        REQUIRE("idle thread started", pthread_create(&idle_ids[i], NULL, idle_thread_main, NULL) == 0);
    pthread_barrier_wait(&idle_set_up);
}

/* starts n idle threads, each with its cache set up */
static inline void idle_threads_start(int n)
{
    idle_threads_start_with(n, NULL);
}

/* lets the idle threads exit and joins them */
static inline void idle_threads_stop(void)
{
    pthread_barrier_wait(&idle_release);
    for (int i = 0; i < idle_count; i++)
        pthread_join(idle_ids[i], NULL);
    pthread_barrier_destroy(&idle_set_up);
    pthread_barrier_destroy(&idle_release);
}

#endif
