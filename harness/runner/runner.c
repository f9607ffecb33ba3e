/* One measured run of one workload on one allocator: see runner.h. */
#include "runner.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

/* The name /proc/PID/smaps shows for the bookkeeping mapping, so its pages
 * are never mistaken for the allocator's. */
#define BOOKS_MAPPING_NAME "heaplab-runner-books"

static void name_mapping(void *p, size_t len)
{
#ifdef PR_SET_VMA
    /* best effort: kernels without CONFIG_ANON_VMA_NAME refuse, harmlessly */
    (void)prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, len,
                (unsigned long)BOOKS_MAPPING_NAME);
#else
    (void)p;
    (void)len;
#endif
}

int runner_init(runner *r, const alloc_table *a, const workload *w, const char *kind,
                int threads, uint64_t seed, const long long *param_values, int param_count,
                char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->a = a;
    r->w = w;
    r->kind = kind;
    r->ctx.a = a;
    r->ctx.w = w;
    r->ctx.threads = threads;
    r->ctx.seed = seed;
    r->ctx.runner = r;
    r->param_count = param_count;
    memcpy(r->param_values, param_values, sizeof r->param_values[0] * (size_t)param_count);
    pthread_mutex_init(&r->lock, NULL);
    r->rss_start_bytes = -1;
    r->peak_rss_bytes = -1;

    void *books = mmap(NULL, sizeof *r->books, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (books == MAP_FAILED) {
        snprintf(err, errlen, "cannot map %zu bytes for the runner's bookkeeping: %s",
                 sizeof *r->books, strerror(errno));
        return -1;
    }
    name_mapping(books, sizeof *r->books);
    /* touch every page now, so recording later faults nothing in */
    memset(books, 0, sizeof *r->books);
    r->books = books;
    return 0;
}

static int has_metric(const runner_books *b, const char *name)
{
    for (int i = 0; i < b->metric_count; i++)
        if (strcmp(b->metrics[i].name, name) == 0)
            return 1;
    return 0;
}

/* Process-wide figures at the end of the run. */
static void finish_measurements(runner *r, uint64_t end_ns)
{
    measure_usage now;
    measure_usage_now(&now);
    r->usage = measure_usage_diff(&now, &r->usage_start);
    r->wall_ns = end_ns - r->start_ns;
    r->peak_rss_bytes = measure_peak_rss_bytes();
}

/* The workload's run under a name of its own that is never inlined:
 * instruction counts (valgrind --zero-before/--dump-after=run_workload, see
 * harness/py/heaplab/instructions.py) cover exactly this call. */
__attribute__((noinline)) int run_workload(runner *r)
{
    return r->w->run(&r->ctx);
}

int runner_run(runner *r)
{
    /* nothing of ours may sit in a stdio buffer while the workload runs */
    fflush(stdout);
    fflush(stderr);
    measure_usage_now(&r->usage_start);
    r->rss_start_bytes = measure_rss_bytes();
    r->start_ns = wl_now_ns();
    r->last_phase_ns = r->start_ns;
    atomic_store(&r->untimed_ns, 0);
    r->untimed_at_last_phase_ns = 0;

    int rc = run_workload(r);

    finish_measurements(r, wl_now_ns());
    if (rc != 0 && !r->failed)
        runner_fail(r, "workload '%s' failed (run returned %d) without saying why", r->w->name,
                    rc);
    if (!r->failed && !has_metric(r->books, r->w->metric))
        runner_fail(r, "workload '%s' did not record its primary metric '%s'", r->w->name,
                    r->w->metric);
    return r->failed ? -1 : 0;
}

static void record_failure(runner *r, const char *fmt, va_list ap)
{
    char line[RUNNER_ERROR_MAX];
    vsnprintf(line, sizeof line, fmt, ap);
    pthread_mutex_lock(&r->lock);
    if (!r->failed) {
        r->failed = 1;
        memcpy(r->error, line, sizeof r->error);
    }
    pthread_mutex_unlock(&r->lock);
    /* write(2), not stdio: no buffer to allocate in the middle of a run */
    char out[RUNNER_ERROR_MAX + 32];
    int n = snprintf(out, sizeof out, "heaplab-run: %s\n", line);
    if (n > 0)
        (void)!write(STDERR_FILENO, out, (size_t)n < sizeof out ? (size_t)n : sizeof out - 1);
}

void runner_fail(runner *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record_failure(r, fmt, ap);
    va_end(ap);
}

_Noreturn void runner_abort(runner *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record_failure(r, fmt, ap);
    va_end(ap);
    /* other workload threads may still run: hold the lock so none records
     * anything while the document is printed, then leave without running
     * exit handlers under their feet */
    pthread_mutex_lock(&r->lock);
    finish_measurements(r, wl_now_ns());
    report_print(r);
    fflush(stdout);
    _exit(EXIT_FAILURE);
}
