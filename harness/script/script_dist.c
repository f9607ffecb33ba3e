/* Size distributions: fixed, uniform, loguniform, pow2, choice, mix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script_internal.h"

static const char *const dist_names[] = {
    "fixed", "uniform", "loguniform", "pow2", "choice", "mix", NULL,
};

/* How many arguments each kind takes; 0 = a list of one or more. */
static const int dist_arity[] = {1, 2, 2, 2, 0, 0};

/* Splits "a,b(c,d),e" at top-level commas, in place. Returns the count or -1. */
static int split_args(char *s, char **out, int max, char *err, size_t errlen)
{
    int n = 0, depth = 0;
    char *start = s;
    for (char *p = s;; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        if ((*p == ',' && depth == 0) || *p == '\0') {
            int last = *p == '\0';
            if (n == max) {
                snprintf(err, errlen, "too many items in a distribution (at most %d)", max);
                return -1;
            }
            *p = '\0';
            /* Spaces around items are allowed: "uniform(16, 2K)". */
            while (*start == ' ' || *start == '\t')
                start++;
            char *e = p;
            while (e > start && (e[-1] == ' ' || e[-1] == '\t'))
                *--e = '\0';
            out[n++] = start;
            start = p + 1;
            if (last)
                return n;
        }
    }
}

static int parse_mix_part(char *text, const wl_param_def *params, int nparams, double *weight,
                          sc_dist *part, char *err, size_t errlen)
{
    char *colon = strchr(text, ':');
    char *paren = strchr(text, '(');
    if (!colon || (paren && paren < colon)) {
        snprintf(err, errlen, "mix part '%s' needs a weight: W:DIST, e.g. 3:fixed(64)", text);
        return -1;
    }
    *colon = '\0';
    char *end;
    double w = strtod(text, &end);
    if (end == text || *end || !(w > 0)) {
        snprintf(err, errlen, "bad mix weight '%s' (expected a positive number)", text);
        return -1;
    }
    *weight = w;
    return sc_parse_dist(colon + 1, params, nparams, part, err, errlen);
}

int sc_parse_dist(const char *s, const wl_param_def *params, int nparams, sc_dist *out,
                  char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char buf[SC_ERR_MAX];
    if (strlen(s) >= sizeof buf) {
        snprintf(err, errlen, "size distribution too long");
        return -1;
    }
    strcpy(buf, s);
    char *open = strchr(buf, '(');
    size_t len = strlen(buf);
    if (!open || buf[len - 1] != ')') {
        /* A bare word: an unknown or misspelt distribution, or a number
         * written without fixed(). */
        if (!open && (buf[0] == '$' || (buf[0] >= '0' && buf[0] <= '9'))) {
            snprintf(err, errlen, "size '%s' needs a distribution, e.g. fixed(%s)", s, s);
            return -1;
        }
        if (open) {
            snprintf(err, errlen, "size distribution '%s' is missing its closing ')'", s);
            return -1;
        }
        sc_unknown(err, errlen, "size distribution", buf, dist_names);
        return -1;
    }
    *open = '\0';
    buf[len - 1] = '\0';
    int kind = -1;
    for (int i = 0; dist_names[i]; i++)
        if (strcmp(buf, dist_names[i]) == 0)
            kind = i;
    if (kind < 0) {
        sc_unknown(err, errlen, "size distribution", buf, dist_names);
        return -1;
    }
    out->kind = (sc_dist_kind)kind;
    char *items[SC_MAX_LIST];
    int n = split_args(open + 1, items, SC_MAX_LIST, err, errlen);
    if (n < 0)
        return -1;
    if (n == 1 && items[0][0] == '\0')
        n = 0;
    int arity = dist_arity[kind];
    if ((arity && n != arity) || (!arity && n == 0)) {
        if (arity)
            snprintf(err, errlen, "%s() takes %d argument%s, not %d", dist_names[kind], arity,
                     arity == 1 ? "" : "s", n);
        else
            snprintf(err, errlen, "%s() needs at least one item", dist_names[kind]);
        return -1;
    }
    out->n = n;
    if (kind == SD_MIX) {
        out->parts = calloc((size_t)n, sizeof *out->parts);
        out->cumulative = calloc((size_t)n, sizeof *out->cumulative);
        if (!out->parts || !out->cumulative) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        double total = 0;
        for (int i = 0; i < n; i++) {
            double w;
            if (parse_mix_part(items[i], params, nparams, &w, &out->parts[i], err, errlen) < 0)
                return -1;
            total += w;
            out->cumulative[i] = total;
        }
        return 0;
    }
    out->args = calloc((size_t)n, sizeof *out->args);
    if (!out->args) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (sc_parse_num(items[i], params, nparams, &out->args[i], err, errlen) < 0)
            return -1;
    return 0;
}

void sc_dist_free(sc_dist *d)
{
    if (d->parts)
        for (int i = 0; i < d->n; i++)
            sc_dist_free(&d->parts[i]);
    free(d->parts);
    free(d->cumulative);
    free(d->args);
    memset(d, 0, sizeof *d);
}

void sc_dist_resolve(sc_dist *d, const long long *pv)
{
    if (d->kind == SD_MIX) {
        for (int i = 0; i < d->n; i++)
            sc_dist_resolve(&d->parts[i], pv);
        return;
    }
    for (int i = 0; i < d->n; i++)
        d->args[i].val = d->args[i].param < 0 ? d->args[i].lit : pv[d->args[i].param];
}

/* floor(log2(v)) for v >= 1 */
static int floor_log2(unsigned long long v)
{
    return 63 - __builtin_clzll(v);
}

/* The exponents of the powers of two in [lo, hi]; lo >= 1. */
static void pow2_exponents(long long lo, long long hi, int *elo, int *ehi)
{
    *elo = floor_log2((unsigned long long)lo);
    if ((1ULL << *elo) < (unsigned long long)lo)
        (*elo)++;
    *ehi = floor_log2((unsigned long long)hi);
}

int sc_dist_check(const sc_dist *d, char *err, size_t errlen)
{
    const char *name = dist_names[d->kind];
    if (d->kind == SD_MIX) {
        for (int i = 0; i < d->n; i++)
            if (sc_dist_check(&d->parts[i], err, errlen) < 0)
                return -1;
        return 0;
    }
    for (int i = 0; i < d->n; i++) {
        if (d->args[i].val < 1) {
            snprintf(err, errlen, "%s(): size %lld is below 1 byte", name, d->args[i].val);
            return -1;
        }
    }
    if (d->n == 2 && d->kind != SD_CHOICE) {
        long long lo = d->args[0].val, hi = d->args[1].val;
        if (lo > hi) {
            snprintf(err, errlen, "%s(): lower bound %lld is above upper bound %lld", name, lo, hi);
            return -1;
        }
        int elo, ehi;
        pow2_exponents(lo, hi, &elo, &ehi);
        if (d->kind == SD_POW2 && elo > ehi) {
            snprintf(err, errlen, "pow2(%lld,%lld) contains no power of two", lo, hi);
            return -1;
        }
    }
    return 0;
}

long long sc_dist_max(const sc_dist *d)
{
    long long m = 0;
    if (d->kind == SD_MIX) {
        for (int i = 0; i < d->n; i++) {
            long long pm = sc_dist_max(&d->parts[i]);
            if (pm > m)
                m = pm;
        }
        return m;
    }
    for (int i = 0; i < d->n; i++)
        if (d->args[i].val > m)
            m = d->args[i].val;
    return m;
}

/* A double in [0, 1) from the top 53 bits of the generator. */
static double unit_interval(wl_rng *r)
{
    enum { MANTISSA_BITS = 53 };
    return (double)(wl_rng_next(r) >> (64 - MANTISSA_BITS)) / (double)(1ULL << MANTISSA_BITS);
}

size_t sc_dist_draw(const sc_dist *d, wl_rng *r)
{
    switch (d->kind) {
    case SD_FIXED:
        return (size_t)d->args[0].val;
    case SD_UNIFORM:
        return (size_t)wl_rng_range(r, (uint64_t)d->args[0].val, (uint64_t)d->args[1].val);
    case SD_LOGUNIFORM:
        return (size_t)wl_rng_logrange(r, (uint64_t)d->args[0].val, (uint64_t)d->args[1].val);
    case SD_POW2: {
        int elo, ehi;
        pow2_exponents(d->args[0].val, d->args[1].val, &elo, &ehi);
        return (size_t)1 << wl_rng_range(r, (uint64_t)elo, (uint64_t)ehi);
    }
    case SD_CHOICE:
        return (size_t)d->args[wl_rng_range(r, 0, (uint64_t)d->n - 1)].val;
    case SD_MIX: {
        double u = unit_interval(r) * d->cumulative[d->n - 1];
        int i = 0;
        while (i < d->n - 1 && u >= d->cumulative[i])
            i++;
        return sc_dist_draw(&d->parts[i], r);
    }
    }
    return 1;
}
