/* The run document, schema "heaplab.run/1" (docs/schema.md), printed once
 * at the end of a run on stdout. */
#include "env_info.h"
#include "json_writer.h"
#include "params.h"
#include "runner.h"

#include <stdio.h>

#define RUN_SCHEMA "heaplab.run/1"

/* A byte count that may be unknown (-1). */
static void kv_bytes(json_writer *j, const char *key, long long bytes)
{
    if (bytes < 0)
        json_kv_null(j, key);
    else
        json_kv_int(j, key, bytes);
}

static void write_workload(json_writer *j, const runner *r)
{
    const workload *w = r->w;
    json_key(j, "workload");
    json_object_begin(j);
    json_kv_string(j, "name", w->name);
    json_kv_string(j, "group", w->group);
    json_kv_string(j, "kind", r->kind);
    json_kv_string(j, "source", w->source);
    json_kv_string(j, "describe", w->describe);
    json_key(j, "params");
    json_object_begin(j);
    for (int i = 0; i < r->param_count; i++)
        json_kv_int(j, w->params[i].name, r->param_values[i]);
    json_object_end(j);
    /* named values by their names ("touch": "first"), for a reader without
     * the catalog */
    json_key(j, "param_names");
    json_object_begin(j);
    for (int i = 0; i < r->param_count; i++) {
        const char *name = params_value_name(&w->params[i], r->param_values[i]);
        if (name)
            json_kv_string(j, w->params[i].name, name);
    }
    json_object_end(j);
    json_kv_int(j, "threads", r->ctx.threads);
    json_kv_uint(j, "seed", (unsigned long long)r->ctx.seed);
    json_object_end(j);
}

static void write_allocator(json_writer *j, const alloc_table *a)
{
    json_key(j, "allocator");
    json_object_begin(j);
    json_kv_string(j, "name", a->name);
    /* so:PATH's PATH as given (the name may be a short NAME); null otherwise */
    json_kv_string(j, "path", a->path);
    json_kv_string(j, "version", a->version);
    json_kv_string(j, "library", a->library);
    json_key(j, "hooks");
    json_object_begin(j);
    json_kv_bool(j, "free_sized", a->free_sized != NULL);
    json_kv_bool(j, "stats", a->stats != NULL);
    json_kv_bool(j, "trim", a->trim != NULL);
    json_kv_bool(j, "thread_flush", a->thread_flush != NULL);
    json_object_end(j);
    if (a->stats_version)
        json_kv_int(j, "stats_version", a->stats_version);
    else
        json_kv_null(j, "stats_version");
    json_object_end(j);
}

static void write_metrics(json_writer *j, const runner_books *b)
{
    json_key(j, "metrics");
    json_object_begin(j);
    for (int i = 0; i < b->metric_count; i++) {
        const runner_metric *m = &b->metrics[i];
        json_key(j, m->name);
        json_object_begin(j);
        json_kv_double(j, "value", m->value);
        json_kv_string(j, "unit", m->unit);
        json_kv_string(j, "better", m->better);
        json_object_end(j);
    }
    json_object_end(j);
}

static void write_phases(json_writer *j, const runner *r)
{
    const runner_books *b = r->books;
    json_key(j, "phases");
    json_array_begin(j);
    for (int i = 0; i < b->phase_count; i++) {
        const runner_phase *p = &b->phases[i];
        json_object_begin(j);
        json_kv_string(j, "name", p->name);
        json_kv_uint(j, "elapsed_ns", (unsigned long long)p->elapsed_ns);
        json_kv_int(j, "ops", p->ops);
        kv_bytes(j, "rss_bytes", p->rss_bytes);
        /* may be negative: the allocator gave back more than the start held */
        if (p->rss_bytes < 0 || r->rss_start_bytes < 0)
            json_kv_null(j, "ws_above_start_bytes");
        else
            json_kv_int(j, "ws_above_start_bytes", p->rss_bytes - r->rss_start_bytes);
        json_kv_uint(j, "live_bytes", (unsigned long long)p->live_bytes);
        json_key(j, "alloc_stats");
        if (p->stats_count <= 0) {
            json_null(j);
        } else {
            json_object_begin(j);
            for (int k = 0; k < p->stats_count; k++)
                json_kv_double(j, p->stats[k].key, p->stats[k].value);
            json_object_end(j);
        }
        json_object_end(j);
    }
    json_array_end(j);
}

static void write_samples(json_writer *j, const runner_books *b)
{
    json_key(j, "samples");
    json_array_begin(j);
    for (int i = 0; i < b->sample_count; i++) {
        const runner_sample *s = &b->samples[i];
        json_object_begin(j);
        json_kv_uint(j, "t_ns", (unsigned long long)s->t_ns);
        json_kv_int(j, "ops", s->ops);
        kv_bytes(j, "rss_bytes", s->rss_bytes);
        json_kv_uint(j, "live_bytes", (unsigned long long)s->live_bytes);
        json_object_end(j);
    }
    json_array_end(j);
}

/* Blocks freed, and how many on another thread than their allocator's:
 * null when the workload does not count them. */
static void write_frees(json_writer *j, const runner_books *b)
{
    json_key(j, "frees");
    if (!b->frees_counted) {
        json_null(j);
        return;
    }
    json_object_begin(j);
    json_kv_int(j, "total", b->frees_total);
    json_kv_int(j, "cross_thread", b->frees_cross_thread);
    json_object_end(j);
}

/* Allocator calls the workload's run() made (wl_operations): null when the
 * workload does not count them. */
static void write_operations(json_writer *j, const runner_books *b)
{
    if (b->operations_counted)
        json_kv_int(j, "operations", b->operations);
    else
        json_kv_null(j, "operations");
}

/* Faults and CPU times cover the workload's run() only, like wall_ns, so
 * start-up and library loading are charged to no allocator. */
static void write_process(json_writer *j, const runner *r)
{
    json_key(j, "process");
    json_object_begin(j);
    json_kv_uint(j, "wall_ns", (unsigned long long)r->wall_ns);
    kv_bytes(j, "rss_start_bytes", r->rss_start_bytes);
    kv_bytes(j, "peak_rss_bytes", r->peak_rss_bytes);
    json_kv_int(j, "minor_faults", r->usage.minor_faults);
    json_kv_int(j, "major_faults", r->usage.major_faults);
    json_kv_int(j, "user_ns", r->usage.user_ns);
    json_kv_int(j, "sys_ns", r->usage.sys_ns);
    json_object_end(j);
}

void report_print(runner *r)
{
    json_writer j;
    json_init(&j, stdout);
    json_object_begin(&j);
    json_kv_string(&j, "schema", RUN_SCHEMA);
    json_kv_string(&j, "status", r->failed ? "error" : "ok");
    json_kv_string(&j, "error", r->failed ? r->error : NULL);
    write_workload(&j, r);
    write_allocator(&j, r->a);
    json_kv_string(&j, "primary", r->w->metric);
    write_metrics(&j, r->books);
    write_phases(&j, r);
    write_samples(&j, r->books);
    write_frees(&j, r->books);
    write_operations(&j, r->books);
    write_process(&j, r);
    env_info_write(&j);
    json_object_end(&j);
    fputc('\n', stdout);
    fflush(stdout);
}
