/* --list / --list-json: see listing.h. Each allocator is really opened
 * (dlopen, symbol checks, version) but never asked to allocate. */
#include "listing.h"

#include "alloc.h"
#include "catalog.h"
#include "json_writer.h"
#include "params.h"

#include <stdio.h>

#define LIST_SCHEMA "heaplab.list/1"
enum { LIST_ERROR_MAX = 1024 };

typedef struct probe {
    const alloc_family *family;
    int available;
    char reason[LIST_ERROR_MAX];
    alloc_table table;
} probe;

static void probe_all(probe *probes, char **argv)
{
    for (int i = 0; i < alloc_family_count; i++) {
        probes[i].family = &alloc_families[i];
        probes[i].available = alloc_table_open(alloc_families[i].name, &probes[i].table,
                                               probes[i].reason, sizeof probes[i].reason,
                                               argv) == 0;
    }
}

static void json_workload(json_writer *j, const workload *w)
{
    json_object_begin(j);
    json_kv_string(j, "name", w->name);
    json_kv_string(j, "group", w->group);
    json_kv_string(j, "kind", catalog_kind(w));
    json_kv_string(j, "source", w->source);
    json_kv_string(j, "describe", w->describe);
    json_kv_string(j, "metric", w->metric);
    json_kv_string(j, "unit", w->unit);
    json_kv_string(j, "better", w->better);
    json_kv_bool(j, "threaded", w->threaded);
    json_kv_int(j, "default_threads", w->default_threads > 0 ? w->default_threads : 1);
    json_key(j, "params");
    json_array_begin(j);
    for (int i = 0; i < params_count(w); i++) {
        const wl_param_def *p = &w->params[i];
        json_object_begin(j);
        json_kv_string(j, "name", p->name);
        json_kv_int(j, "default", p->def);
        json_kv_int(j, "quick", params_quick_value(p));
        json_kv_int(j, "min", p->min);
        json_kv_int(j, "max", p->max);
        json_kv_string(j, "help", p->help);
        if (p->names) {
            /* the name of each value from min up, for --param NAME=WORD */
            json_key(j, "values");
            json_array_begin(j);
            for (int k = 0; p->names[k]; k++)
                json_string(j, p->names[k]);
            json_array_end(j);
        }
        json_object_end(j);
    }
    json_array_end(j);
    json_object_end(j);
}

static void print_json(const probe *probes, const catalog *c)
{
    json_writer j;
    json_init(&j, stdout);
    json_object_begin(&j);
    json_kv_string(&j, "schema", LIST_SCHEMA);
    json_key(&j, "allocators");
    json_array_begin(&j);
    for (int i = 0; i < alloc_family_count; i++) {
        json_object_begin(&j);
        json_kv_string(&j, "name", probes[i].family->name);
        json_kv_bool(&j, "available", probes[i].available);
        json_kv_string(&j, "reason", probes[i].available ? NULL : probes[i].reason);
        json_kv_string(&j, "version", probes[i].available ? probes[i].table.version : NULL);
        json_kv_bool(&j, "default", probes[i].family->runs_by_default);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_key(&j, "workloads");
    json_array_begin(&j);
    for (int i = 0; i < wl_builtin_count; i++)
        json_workload(&j, wl_builtins[i]);
    for (int i = 0; i < c->script_count; i++)
        json_workload(&j, &c->scripts[i]);
    json_array_end(&j);
    json_key(&j, "broken_scripts");
    json_array_begin(&j);
    for (int i = 0; i < c->broken_count; i++) {
        json_object_begin(&j);
        json_kv_string(&j, "source", c->broken[i].source);
        json_kv_string(&j, "error", c->broken[i].error);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_object_end(&j);
    fputc('\n', stdout);
}

static void print_workload_line(const workload *w)
{
    printf("  %-28s %-12s %s\n", w->name, w->group ? w->group : "", w->describe ? w->describe : "");
}

static void print_text(const probe *probes, const catalog *c)
{
    puts("allocators:");
    for (int i = 0; i < alloc_family_count; i++) {
        const char *name = probes[i].family->name;
        if (probes[i].available)
            printf("  %-28s %s (%s)%s\n", name, probes[i].table.version,
                   probes[i].table.library,
                   probes[i].family->runs_by_default ? "" : ", run only when named");
        else
            printf("  %-28s unavailable: %s\n", name, probes[i].reason);
    }
    printf("  %-28s any allocator library you have\n", ALLOC_SO_PATTERN);
    puts("workloads:");
    for (int i = 0; i < wl_builtin_count; i++)
        print_workload_line(wl_builtins[i]);
    for (int i = 0; i < c->script_count; i++)
        print_workload_line(&c->scripts[i]);
    if (c->broken_count) {
        puts("broken scripts:");
        for (int i = 0; i < c->broken_count; i++)
            printf("  %s\n", c->broken[i].error);
    }
}

int listing_print(int as_json, const char *workloads_dir, int dir_required, char **argv)
{
    /* allocators first: opening jemalloc may re-execute the process, and
     * nothing must have been printed by then */
    static probe probes[ALLOC_FAMILIES_MAX];
    probe_all(probes, argv);

    catalog c;
    char err[LIST_ERROR_MAX];
    if (catalog_scan(&c, workloads_dir, dir_required, err, sizeof err) != 0) {
        fprintf(stderr, "heaplab-run: %s\n", err);
        return 2;
    }
    if (as_json)
        print_json(probes, &c);
    else
        print_text(probes, &c);
    catalog_release(&c, NULL);
    fflush(stdout);
    return 0;
}
