/* Workload lookup: see catalog.h. */
#include "catalog.h"
#include "script.h"
#include "trace_workload.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef HEAPLAB_SOURCE_DIR
#error "HEAPLAB_SOURCE_DIR must be defined by the build"
#endif

#define SCRIPT_SUFFIX ".wl"
enum { SCRIPT_ERROR_MAX = 1024, PATH_TEXT_MAX = 4096 };

const char *catalog_default_dir(void)
{
    return HEAPLAB_SOURCE_DIR "/workloads";
}

const char *catalog_kind(const workload *w)
{
    if (!w->source)
        return "builtin";
    if (w->group && strcmp(w->group, "trace") == 0)
        return "trace";
    return w->group && strcmp(w->group, "program") == 0 ? "program" : "script";
}

const workload *catalog_builtin(const char *name)
{
    for (int i = 0; i < wl_builtin_count; i++)
        if (strcmp(wl_builtins[i]->name, name) == 0)
            return wl_builtins[i];
    return NULL;
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *dup_or_die(const char *s)
{
    char *d = strdup(s);
    if (!d) {
        fputs("heaplab-run: out of memory while listing workload scripts\n", stderr);
        exit(EXIT_FAILURE);
    }
    return d;
}

static void *grow(void *p, int count, size_t elem)
{
    void *q = realloc(p, (size_t)(count + 1) * elem);
    if (!q) {
        fputs("heaplab-run: out of memory while listing workload scripts\n", stderr);
        exit(EXIT_FAILURE);
    }
    return q;
}

static void add_broken(catalog *c, const char *source, const char *error)
{
    c->broken = grow(c->broken, c->broken_count, sizeof *c->broken);
    c->broken[c->broken_count].source = dup_or_die(source);
    c->broken[c->broken_count].error = dup_or_die(error);
    c->broken_count++;
}

/* Why a script's name cannot be used, or NULL when it can. */
static const char *name_taken(const catalog *c, const char *name)
{
    if (catalog_builtin(name))
        return "a built-in workload";
    for (int i = 0; i < c->script_count; i++)
        if (strcmp(c->scripts[i].name, name) == 0)
            return c->scripts[i].source;
    return NULL;
}

static void load_one(catalog *c, const char *path)
{
    workload w;
    char error[SCRIPT_ERROR_MAX];
    memset(&w, 0, sizeof w);
    if (script_load(path, &w, error, sizeof error) != 0) {
        add_broken(c, path, error);
        return;
    }
    const char *owner = name_taken(c, w.name);
    if (owner) {
        char taken[2 * PATH_TEXT_MAX + SCRIPT_ERROR_MAX];
        snprintf(taken, sizeof taken, "%s: workload name '%s' is already used by %s", path,
                 w.name, owner);
        script_free(&w);
        add_broken(c, path, taken);
        return;
    }
    c->scripts = grow(c->scripts, c->script_count, sizeof *c->scripts);
    c->scripts[c->script_count++] = w;
}

int catalog_scan(catalog *c, const char *dir, int required, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    DIR *d = opendir(dir);
    if (!d) {
        if (!required)
            return 0;
        snprintf(err, errlen, "cannot open workloads folder '%s': %s", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    int count = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || !has_suffix(e->d_name, SCRIPT_SUFFIX))
            continue;
        names = grow(names, count, sizeof *names);
        names[count++] = dup_or_die(e->d_name);
    }
    closedir(d);
    if (count)
        qsort(names, (size_t)count, sizeof *names, compare_names);
    for (int i = 0; i < count; i++) {
        char path[PATH_TEXT_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        load_one(c, path);
        free(names[i]);
    }
    free(names);
    return 0;
}

void catalog_release(catalog *c, const workload *keep)
{
    for (int i = 0; i < c->script_count; i++)
        if (&c->scripts[i] != keep)
            script_free(&c->scripts[i]);
    for (int i = 0; i < c->broken_count; i++) {
        free(c->broken[i].source);
        free(c->broken[i].error);
    }
    free(c->scripts);
    free(c->broken);
    memset(c, 0, sizeof *c);
}

/* The file name of path without folder and .wl: what a user would type. */
static int stem_is(const char *path, const char *name)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base) - strlen(SCRIPT_SUFFIX);
    return strlen(name) == len && strncmp(base, name, len) == 0;
}

static void unknown_workload(const char *name, const catalog *c, char *err, size_t errlen)
{
    size_t used = 0;
    int n = snprintf(err, errlen, "unknown workload '%s' (available: ", name);
    used = n > 0 ? (size_t)n : 0;
    int listed = 0;
    for (int i = 0; i < wl_builtin_count + c->script_count && used < errlen; i++) {
        const char *w = i < wl_builtin_count ? wl_builtins[i]->name
                                             : c->scripts[i - wl_builtin_count].name;
        n = snprintf(err + used, errlen - used, "%s%s", listed++ ? ", " : "", w);
        used += n > 0 ? (size_t)n : 0;
    }
    if (used < errlen)
        snprintf(err + used, errlen - used, "%s)", listed ? "" : "none");
}

int catalog_select(const char *name, const char *dir, int dir_required, workload *out,
                   char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (strncmp(name, TRACE_WORKLOAD_PREFIX, strlen(TRACE_WORKLOAD_PREFIX)) == 0)
        return trace_workload_open(name + strlen(TRACE_WORKLOAD_PREFIX), out, err, errlen);
    /* a path: load just that file */
    if (strchr(name, '/') || has_suffix(name, SCRIPT_SUFFIX))
        return script_load(name, out, err, errlen) == 0 ? 0 : -1;

    const workload *b = catalog_builtin(name);
    if (b) {
        *out = *b;
        return 0;
    }

    catalog c;
    if (catalog_scan(&c, dir, dir_required, err, errlen) != 0)
        return -1;
    for (int i = 0; i < c.script_count; i++) {
        if (strcmp(c.scripts[i].name, name) == 0) {
            *out = c.scripts[i];
            catalog_release(&c, &c.scripts[i]);
            return 0;
        }
    }
    int found_broken = 0;
    for (int i = 0; i < c.broken_count && !found_broken; i++) {
        if (stem_is(c.broken[i].source, name)) {
            snprintf(err, errlen, "%s", c.broken[i].error);
            found_broken = 1;
        }
    }
    if (!found_broken)
        unknown_workload(name, &c, err, errlen);
    catalog_release(&c, NULL);
    return -1;
}
