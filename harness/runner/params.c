/* Workload parameters: see params.h. */
#include "params.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int params_count(const workload *w)
{
    int n = 0;
    while (n < WL_MAX_PARAMS && w->params[n].name)
        n++;
    return n;
}

long long params_quick_value(const wl_param_def *p)
{
    return p->quick ? p->quick : p->def;
}

static void list_names(const workload *w, int count, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < count && used < cap; i++) {
        int n = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", w->params[i].name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

long long params_named_value(const wl_param_def *p, const char *text)
{
    if (!p->names)
        return -1;
    for (long long v = p->min; v <= p->max && p->names[v - p->min]; v++)
        if (strcmp(p->names[v - p->min], text) == 0)
            return v;
    return -1;
}

const char *params_value_name(const wl_param_def *p, long long value)
{
    if (!p->names || value < p->min || value > p->max)
        return NULL;
    for (long long v = p->min; p->names[v - p->min]; v++)
        if (v == value)
            return p->names[v - p->min];
    return NULL;
}

static void list_value_names(const wl_param_def *p, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; p->names[i] && used < cap; i++) {
        int n = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", p->names[i]);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

static int assign(const workload *w, int count, const char *text, long long *values,
                  char *err, size_t errlen)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text) {
        snprintf(err, errlen, "--param '%s': expected KEY=VALUE", text);
        return -1;
    }
    size_t key_len = (size_t)(eq - text);
    int i = 0;
    while (i < count && !(strlen(w->params[i].name) == key_len &&
                          strncmp(w->params[i].name, text, key_len) == 0))
        i++;
    if (i == count) {
        char names[512];
        list_names(w, count, names, sizeof names);
        snprintf(err, errlen, "unknown parameter '%.*s' for workload '%s' (parameters: %s)",
                 (int)key_len, text, w->name, count ? names : "none");
        return -1;
    }
    const wl_param_def *p = &w->params[i];
    const char *value = eq + 1;
    long long named = params_named_value(p, value);
    if (named >= 0) {
        values[i] = named;
        return 0;
    }
    char *end;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (p->names && (errno == ERANGE || end == value || *end || v < p->min || v > p->max)) {
        char names[256];
        list_value_names(p, names, sizeof names);
        snprintf(err, errlen, "parameter '%s' = '%s' is not one of %s", p->name, value, names);
        return -1;
    }
    if (errno == ERANGE || end == value || *end || v < p->min || v > p->max) {
        snprintf(err, errlen, "parameter '%s' = '%s' is not an integer in [%lld, %lld]%s%s%s",
                 p->name, value, p->min, p->max, p->help ? " (" : "", p->help ? p->help : "",
                 p->help ? ")" : "");
        return -1;
    }
    values[i] = v;
    return 0;
}

/* The index of the parameter called prefix + name (e.g. "max_" + "size"),
 * or -1. */
static int find_prefixed(const workload *w, int count, const char *prefix, const char *name)
{
    size_t plen = strlen(prefix);
    for (int i = 0; i < count; i++) {
        const char *n = w->params[i].name;
        if (strncmp(n, prefix, plen) == 0 && strcmp(n + plen, name) == 0)
            return i;
    }
    return -1;
}

/* A pair named min_X and max_X is a range: min_X above max_X is refused
 * here, before the workload runs, naming both. */
static int check_ranges(const workload *w, int count, const long long *values, char *err,
                        size_t errlen)
{
    static const char MIN_PREFIX[] = "min_";
    for (int lo = 0; lo < count; lo++) {
        const char *name = w->params[lo].name;
        if (strncmp(name, MIN_PREFIX, sizeof MIN_PREFIX - 1) != 0)
            continue;
        int hi = find_prefixed(w, count, "max_", name + sizeof MIN_PREFIX - 1);
        if (hi >= 0 && values[lo] > values[hi]) {
            snprintf(err, errlen, "parameter %s=%lld is above %s=%lld", name, values[lo],
                     w->params[hi].name, values[hi]);
            return -1;
        }
    }
    return 0;
}

int params_resolve(const workload *w, int quick, const char *const *assignments,
                   int assignment_count, long long *values, char *err, size_t errlen)
{
    int count = params_count(w);
    for (int i = 0; i < count; i++)
        values[i] = quick ? params_quick_value(&w->params[i]) : w->params[i].def;
    for (int i = 0; i < assignment_count; i++)
        if (assign(w, count, assignments[i], values, err, errlen) != 0)
            return -1;
    return check_ranges(w, count, values, err, errlen);
}
