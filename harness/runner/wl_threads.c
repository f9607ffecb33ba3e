/* wl_run_threads(): start n workload threads together and time them.
 *
 * Every thread first checks in and waits at a gate; the clock starts when
 * the gate opens, after all of them exist, so thread creation is not timed.
 * The gate is a mutex and condition variable rather than a spin, because on
 * a 2-core VM with more threads than cores a spinning waiter steals the CPU
 * from the threads it waits for. Thread bookkeeping lives on the caller's
 * stack: nothing is allocated through the measured allocator. */
#include "runner.h"

#include <pthread.h>
#include <string.h>

typedef struct gate {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int arrived;   /* threads waiting at the gate */
    int open;      /* 1: run; -1: starting failed, leave without running */
} gate;

typedef struct worker {
    gate *g;
    wl_ctx *ctx;
    int index;
    wl_thread_fn fn;
    void *arg;
} worker;

static void *worker_main(void *p)
{
    worker *w = p;
    gate *g = w->g;
    pthread_mutex_lock(&g->lock);
    g->arrived++;
    pthread_cond_broadcast(&g->changed);
    while (g->open == 0)
        pthread_cond_wait(&g->changed, &g->lock);
    int go = g->open > 0;
    pthread_mutex_unlock(&g->lock);
    if (go)
        w->fn(w->ctx, w->index, w->arg);
    return NULL;
}

static void open_gate(gate *g, int how)
{
    pthread_mutex_lock(&g->lock);
    g->open = how;
    pthread_cond_broadcast(&g->changed);
    pthread_mutex_unlock(&g->lock);
}

uint64_t wl_run_threads(wl_ctx *ctx, int n, int fresh, wl_thread_fn fn, void *arg)
{
    runner *r = ctx->runner;
    if (n < 1 || n > RUNNER_MAX_THREADS) {
        runner_fail(r, "wl_run_threads: %d threads asked for; the runner starts 1 to %d", n,
                    RUNNER_MAX_THREADS);
        return 0;
    }
    if (n == 1 && !fresh) {
        uint64_t t0 = wl_now_ns();
        fn(ctx, 0, arg);
        return wl_now_ns() - t0;
    }

    gate g = {.arrived = 0, .open = 0};
    pthread_mutex_init(&g.lock, NULL);
    pthread_cond_init(&g.changed, NULL);
    pthread_t ids[RUNNER_MAX_THREADS];
    worker workers[RUNNER_MAX_THREADS];
    int started = 0;
    int create_error = 0;
    for (; started < n; started++) {
        workers[started] = (worker){&g, ctx, started, fn, arg};
        create_error = pthread_create(&ids[started], NULL, worker_main, &workers[started]);
        if (create_error != 0)
            break;
    }

    uint64_t elapsed = 0;
    if (started < n) {
        /* release the ones that exist without running them, then report */
        open_gate(&g, -1);
        for (int i = 0; i < started; i++)
            pthread_join(ids[i], NULL);
        runner_fail(r, "cannot start thread %d of %d: %s", started + 1, n,
                    strerror(create_error));
    } else {
        pthread_mutex_lock(&g.lock);
        while (g.arrived < n)
            pthread_cond_wait(&g.changed, &g.lock);
        pthread_mutex_unlock(&g.lock);
        uint64_t t0 = wl_now_ns();
        open_gate(&g, 1);
        for (int i = 0; i < n; i++)
            pthread_join(ids[i], NULL);
        elapsed = wl_now_ns() - t0;
    }
    pthread_cond_destroy(&g.changed);
    pthread_mutex_destroy(&g.lock);
    return elapsed;
}
