/* The recording half of the workload API (workload.h): parameters,
 * metrics, phases, samples and failures, written into the runner's
 * preallocated books (runner.h). */
#include "runner.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static runner *runner_of(wl_ctx *ctx)
{
    return (runner *)ctx->runner;
}

long long wl_param(wl_ctx *ctx, const char *name)
{
    runner *r = runner_of(ctx);
    for (int i = 0; i < r->param_count; i++)
        if (strcmp(r->w->params[i].name, name) == 0)
            return r->param_values[i];
    runner_abort(r, "workload '%s' asked for parameter '%s', which it does not declare",
                 r->w->name, name);
}

/* Copies a name into a fixed field; 0 when it does not fit. */
static int copy_bounded(char *dst, size_t cap, const char *src)
{
    size_t len = strlen(src);
    if (len >= cap)
        return 0;
    memcpy(dst, src, len + 1);
    return 1;
}

void wl_metric(wl_ctx *ctx, const char *name, double value, const char *unit,
               const char *better)
{
    runner *r = runner_of(ctx);
    int primary = strcmp(name, r->w->metric) == 0;
    /* the primary metric may leave unit and direction to the declaration */
    if (!unit)
        unit = primary ? r->w->unit : "";
    if (!better && primary)
        better = r->w->better;
    if (!better || (strcmp(better, "lower") != 0 && strcmp(better, "higher") != 0)) {
        runner_fail(r, "metric '%s': better must be \"lower\" or \"higher\", not %s%s%s", name,
                    better ? "'" : "", better ? better : "NULL", better ? "'" : "");
        return;
    }
    pthread_mutex_lock(&r->lock);
    runner_books *b = r->books;
    int i = 0;
    /* recording a metric again replaces its value */
    while (i < b->metric_count && strcmp(b->metrics[i].name, name) != 0)
        i++;
    const char *problem = NULL;
    if (i == RUNNER_MAX_METRICS)
        problem = "too many metrics";
    else if (!copy_bounded(b->metrics[i].name, sizeof b->metrics[i].name, name))
        problem = "name too long";
    else if (!copy_bounded(b->metrics[i].unit, sizeof b->metrics[i].unit, unit))
        problem = "unit too long";
    else {
        strcpy(b->metrics[i].better, better);
        b->metrics[i].value = value;
        if (i == b->metric_count)
            b->metric_count++;
    }
    pthread_mutex_unlock(&r->lock);
    if (problem)
        runner_fail(r, "metric '%s': %s (the runner keeps %d metrics, names under %d bytes, "
                       "units under %d bytes)",
                    name, problem, RUNNER_MAX_METRICS, RUNNER_NAME_MAX, RUNNER_UNIT_MAX);
}

void wl_phase(wl_ctx *ctx, const char *name, long long ops, size_t live_bytes)
{
    /* the phase ends now; what follows is the runner's measuring */
    uint64_t end_ns = wl_now_ns();
    runner *r = runner_of(ctx);
    pthread_mutex_lock(&r->lock);
    runner_books *b = r->books;
    const char *problem = NULL;
    if (b->phase_count == RUNNER_MAX_PHASES) {
        problem = "too many phases";
    } else {
        runner_phase *p = &b->phases[b->phase_count];
        if (!copy_bounded(p->name, sizeof p->name, name)) {
            problem = "name too long";
        } else {
            /* sampling inside the phase is the harness's time, not its */
            uint64_t untimed = atomic_load(&r->untimed_ns);
            p->elapsed_ns = end_ns - r->last_phase_ns - (untimed - r->untimed_at_last_phase_ns);
            r->untimed_at_last_phase_ns = untimed;
            p->ops = ops;
            p->live_bytes = live_bytes;
            p->rss_bytes = measure_rss_bytes();
            p->stats_count = r->a->stats ? r->a->stats(p->stats, ALLOC_STATS_MAX) : -1;
            b->phase_count++;
        }
    }
    /* the next phase starts after the measuring, so reading RSS and the
     * allocator's statistics is charged to no phase */
    r->last_phase_ns = wl_now_ns();
    pthread_mutex_unlock(&r->lock);
    if (problem)
        runner_fail(r, "phase '%s': %s (the runner keeps %d phases, names under %d bytes)", name,
                    problem, RUNNER_MAX_PHASES, RUNNER_NAME_MAX);
}

/* noinline and named: instruction counts leave this function out
 * (callgrind's --toggle-collect=wl_sample), as timings leave out its time */
__attribute__((noinline)) void wl_sample(wl_ctx *ctx, long long ops, size_t live_bytes)
{
    runner *r = runner_of(ctx);
    uint64_t now = wl_now_ns();
    pthread_mutex_lock(&r->lock);
    runner_books *b = r->books;
    int full = b->sample_count == RUNNER_MAX_SAMPLES;
    int report = full && !b->samples_overflowed;
    if (full) {
        b->samples_overflowed = 1;
    } else {
        runner_sample *s = &b->samples[b->sample_count++];
        s->t_ns = now - r->start_ns;
        s->ops = ops;
        s->live_bytes = live_bytes;
        s->rss_bytes = measure_rss_statm_bytes();
    }
    pthread_mutex_unlock(&r->lock);
    atomic_fetch_add(&r->untimed_ns, wl_now_ns() - now);
    if (report)
        runner_fail(r, "too many samples: the runner keeps %d", RUNNER_MAX_SAMPLES);
}

uint64_t wl_untimed_ns(wl_ctx *ctx)
{
    return atomic_load(&runner_of(ctx)->untimed_ns);
}

void wl_frees(wl_ctx *ctx, long long total, long long cross_thread)
{
    runner *r = runner_of(ctx);
    if (total < 0 || cross_thread < 0 || cross_thread > total) {
        runner_fail(r, "wl_frees: %lld cross-thread frees of %lld is not a count", cross_thread,
                    total);
        return;
    }
    pthread_mutex_lock(&r->lock);
    r->books->frees_counted = 1;
    r->books->frees_total = total;
    r->books->frees_cross_thread = cross_thread;
    pthread_mutex_unlock(&r->lock);
}

void wl_operations(wl_ctx *ctx, long long count)
{
    runner *r = runner_of(ctx);
    if (count < 0) {
        runner_fail(r, "wl_operations: %lld allocator calls is not a count", count);
        return;
    }
    pthread_mutex_lock(&r->lock);
    r->books->operations_counted = 1;
    r->books->operations = count;
    pthread_mutex_unlock(&r->lock);
}

void wl_fail(wl_ctx *ctx, const char *fmt, ...)
{
    char line[RUNNER_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    runner_fail(runner_of(ctx), "%s", line);
}
