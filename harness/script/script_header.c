/* The header directives of a script: workload, describe, threads, seed,
 * param, metric, program, setup, trace (script_trace.c), phase. Grammar: docs/workloads.md. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script_parser.h"

const char *const sc_header_names[] = {
    [HEADER_WORKLOAD] = "workload", [HEADER_DESCRIBE] = "describe",
    [HEADER_THREADS] = "threads", [HEADER_SEED] = "seed", [HEADER_PARAM] = "param",
    [HEADER_METRIC] = "metric", [HEADER_PROGRAM] = "program", [HEADER_SETUP] = "setup",
    [HEADER_TRACE] = "trace", [HEADER_PHASE] = "phase", [HEADER_PHASE + 1] = NULL,
};

/* A literal integer for a header directive (no $PARAMs there). */
static int literal(parser *ps, const char *what, const char *text, long long lo, long long hi,
                   long long *out)
{
    char msg[SC_ERR_MAX];
    if (sc_parse_size(text, out, msg, sizeof msg) < 0)
        return sc_perr(ps, "%s: %s", what, msg);
    if (*out < lo || *out > hi)
        return sc_perr(ps, "%s %lld is out of range [%lld, %lld]", what, *out, lo, hi);
    return 0;
}

static int once(parser *ps, int *seen, const char *what)
{
    if (*seen)
        return sc_perr(ps, "second '%s' line (first at line %d)", what, *seen);
    *seen = ps->line;
    return 0;
}

static int need_args(parser *ps, const char *what, int have, int want)
{
    if (have == want)
        return 0;
    return sc_perr(ps, "'%s' takes %d argument%s, got %d", what, want, want == 1 ? "" : "s", have);
}

static int do_workload(parser *ps, sc_token *t, int n)
{
    if (once(ps, &ps->seen_workload, "workload") < 0 || need_args(ps, "workload", n - 1, 1) < 0)
        return -1;
    if (!sc_valid_name(t[1].text, 1))
        return sc_perr(ps, "bad workload name '%s' (letters, digits, '_', '-', '.'; "
                       "starts with a letter)",
                       t[1].text);
    ps->s->name = sc_dup(ps, t[1].text);
    return ps->s->name ? 0 : -1;
}

static int do_describe(parser *ps, sc_token *t, int n)
{
    if (once(ps, &ps->seen_describe, "describe") < 0)
        return -1;
    if (n < 2)
        return sc_perr(ps, "'describe' needs a text");
    /* Several bare words are joined with single spaces. */
    size_t len = 0;
    for (int i = 1; i < n; i++)
        len += strlen(t[i].text) + 1;
    char *d = malloc(len);
    if (!d)
        return sc_perr(ps, "out of memory");
    d[0] = '\0';
    for (int i = 1; i < n; i++) {
        if (i > 1)
            strcat(d, " ");
        strcat(d, t[i].text);
    }
    ps->s->describe = d;
    return 0;
}

static int do_threads(parser *ps, sc_token *t, int n)
{
    long long v;
    if (once(ps, &ps->seen_threads, "threads") < 0 || need_args(ps, "threads", n - 1, 1) < 0 ||
        literal(ps, "threads", t[1].text, 1, SC_MAX_THREADS, &v) < 0)
        return -1;
    ps->s->threads = (int)v;
    return 0;
}

static int do_seed(parser *ps, sc_token *t, int n)
{
    long long v;
    if (once(ps, &ps->seen_seed, "seed") < 0 || need_args(ps, "seed", n - 1, 1) < 0 ||
        literal(ps, "seed", t[1].text, 0, LLONG_MAX, &v) < 0)
        return -1;
    ps->s->seed = v;
    return 0;
}

enum { PARAM_QUICK, PARAM_MIN, PARAM_MAX, PARAM_HELP };
static const char *const param_keys[] = {
    [PARAM_QUICK] = "quick", [PARAM_MIN] = "min", [PARAM_MAX] = "max", [PARAM_HELP] = "help",
    [PARAM_HELP + 1] = NULL,
};

static int do_param(parser *ps, sc_token *t, int n)
{
    sc_script *s = ps->s;
    if (s->trace)
        return sc_trace_no_params(ps);
    if (n < 2)
        return sc_perr(ps, "'param' needs NAME=DEFAULT");
    if (s->nparams == WL_MAX_PARAMS - 1)
        return sc_perr(ps, "too many parameters (at most %d)", WL_MAX_PARAMS - 1);
    char *eq = strchr(t[1].text, '=');
    if (!eq)
        return sc_perr(ps, "'param %s' needs a default: param %s=VALUE", t[1].text, t[1].text);
    *eq = '\0';
    const char *name = t[1].text;
    if (!sc_valid_name(name, 0))
        return sc_perr(ps, "bad parameter name '%s' (letters, digits and '_'; "
                       "starts with a letter)", name);
    for (int i = 0; i < s->nparams; i++)
        if (strcmp(ps->w->params[i].name, name) == 0)
            return sc_perr(ps, "parameter '%s' is declared twice", name);
    wl_param_def def = {.name = NULL, .min = 0, .max = LLONG_MAX};
    char msg[SC_ERR_MAX];
    if (sc_parse_size(eq + 1, &def.def, msg, sizeof msg) < 0)
        return sc_perr(ps, "param %s: %s", name, msg);
    const char *help = NULL;
    for (int i = 2; i < n; i++) {
        char *keq = strchr(t[i].text, '=');
        if (!keq)
            return sc_perr(ps, "param %s: expected KEY=VALUE, got '%s'", name, t[i].text);
        *keq = '\0';
        int k = sc_word_in(t[i].text, param_keys);
        if (k < 0) {
            sc_unknown(msg, sizeof msg, "param option", t[i].text, param_keys);
            return sc_perr(ps, "%s", msg);
        }
        if (k == PARAM_HELP) {
            help = keq + 1;
            continue;
        }
        long long *dst = k == PARAM_QUICK ? &def.quick : k == PARAM_MIN ? &def.min : &def.max;
        if (sc_parse_size(keq + 1, dst, msg, sizeof msg) < 0)
            return sc_perr(ps, "param %s %s: %s", name, param_keys[k], msg);
    }
    if (def.min > def.max)
        return sc_perr(ps, "param %s: min %lld is above max %lld", name, def.min, def.max);
    if (def.def < def.min || def.def > def.max)
        return sc_perr(ps, "param %s: default %lld is outside [%lld, %lld]", name, def.def,
                       def.min, def.max);
    if (def.quick && (def.quick < def.min || def.quick > def.max))
        return sc_perr(ps, "param %s: quick %lld is outside [%lld, %lld]", name, def.quick,
                       def.min, def.max);
    s->param_name[s->nparams] = sc_dup(ps, name);
    if (!s->param_name[s->nparams])
        return -1;
    if (help && !(s->param_help[s->nparams] = sc_dup(ps, help)))
        return -1;
    def.name = s->param_name[s->nparams];
    def.help = s->param_help[s->nparams] ? s->param_help[s->nparams] : "script parameter";
    ps->w->params[s->nparams++] = def;
    return 0;
}

/* The primary metrics a heap script computes, with their unit and sense. */
const sc_metric_info sc_metrics[] = {
    [METRIC_NS_PER_OP] = {"ns_per_op", "ns", "lower"},
    [METRIC_MOPS_PER_S] = {"mops_per_s", "Mops/s", "higher"},
};
static const char *const metric_names[] = {"ns_per_op", "mops_per_s", NULL};

static int do_metric(parser *ps, sc_token *t, int n)
{
    if (once(ps, &ps->seen_metric, "metric") < 0 || need_args(ps, "metric", n - 1, 3) < 0)
        return -1;
    int m = sc_word_in(t[1].text, metric_names);
    if (m < 0) {
        char msg[SC_ERR_MAX];
        sc_unknown(msg, sizeof msg, "metric", t[1].text, metric_names);
        return sc_perr(ps, "%s", msg);
    }
    if (strcmp(t[2].text, sc_metrics[m].unit) != 0)
        return sc_perr(ps, "metric %s is measured in '%s', not '%s'", sc_metrics[m].name,
                       sc_metrics[m].unit, t[2].text);
    if (strcmp(t[3].text, sc_metrics[m].better) != 0)
        return sc_perr(ps, "for metric %s, %s is better (not '%s')", sc_metrics[m].name,
                       sc_metrics[m].better, t[3].text);
    ps->s->metric = (sc_metric)m;
    return 0;
}

/* Checks that every $NAME in a command word is a declared parameter; `$$`
 * is a literal '$', and '$' not followed by a letter stays as it is. */
static int check_cmd_word(parser *ps, const sc_token *t)
{
    if (t->quoted == '\'')
        return 0;
    for (const char *p = t->text; (p = strchr(p, '$')) != NULL;) {
        if (p[1] == '$') {
            p += 2;
            continue;
        }
        const char *e = p + 1;
        if (!isalpha((unsigned char)*e) && *e != '_') {
            p++;
            continue;
        }
        while (isalnum((unsigned char)*e) || *e == '_')
            e++;
        int found = 0;
        for (int i = 0; i < ps->s->nparams; i++)
            if (strlen(ps->w->params[i].name) == (size_t)(e - p - 1) &&
                strncmp(ps->w->params[i].name, p + 1, (size_t)(e - p - 1)) == 0)
                found = 1;
        if (!found)
            return sc_perr(ps, "undefined parameter %.*s (declare it with a 'param' line first)",
                           (int)(e - p), p);
        p = e;
    }
    return 0;
}

/* Stores a command with its words; single-quoted words are marked by a
 * leading '\'' byte so expansion can skip them (see script_program.c). */
static int read_cmd(parser *ps, sc_cmd *c, sc_token *t, int n)
{
    c->line = ps->line;
    c->argc = n - 1;
    c->argv = calloc((size_t)n, sizeof *c->argv);
    if (!c->argv)
        return sc_perr(ps, "out of memory");
    for (int i = 1; i < n; i++) {
        if (check_cmd_word(ps, &t[i]) < 0)
            return -1;
        size_t len = strlen(t[i].text);
        char *w = malloc(len + 2);
        if (!w)
            return sc_perr(ps, "out of memory");
        w[0] = t[i].quoted == '\'' ? '\'' : ' ';
        memcpy(w + 1, t[i].text, len + 1);
        c->argv[i - 1] = w;
    }
    return 0;
}

static int do_program(parser *ps, sc_token *t, int n)
{
    if (ps->s->is_program)
        return sc_perr(ps, "second 'program' line (first at line %d)", ps->s->program.line);
    if (ps->s->trace)
        return sc_perr(ps, "a script has a 'trace' or a 'program' line, not both (trace at "
                       "line %d)", sc_trace_line(ps->s->trace));
    if (n < 2)
        return sc_perr(ps, "'program' needs a command, e.g. program /usr/bin/python3 -c ...");
    ps->s->is_program = 1;
    return read_cmd(ps, &ps->s->program, t, n);
}

static int do_setup(parser *ps, sc_token *t, int n)
{
    if (n < 2)
        return sc_perr(ps, "'setup' needs a command");
    sc_cmd *grown = realloc(ps->s->setup, (size_t)(ps->s->nsetup + 1) * sizeof *grown);
    if (!grown)
        return sc_perr(ps, "out of memory");
    ps->s->setup = grown;
    memset(&grown[ps->s->nsetup], 0, sizeof grown[0]);
    return read_cmd(ps, &grown[ps->s->nsetup++], t, n);
}

int sc_end_phase(parser *ps)
{
    if (ps->nopen > 0) {
        ps->line = ps->phase->ops[ps->open_repeat[ps->nopen - 1]].line;
        return sc_perr(ps, "repeat has no 'end'");
    }
    if (ps->phase && ps->phase->nops == 0) {
        ps->line = ps->phase->line;
        return sc_perr(ps, "phase '%s' has no operations", ps->phase->name);
    }
    return 0;
}

int sc_check_phase_name(parser *ps, const char *name, int earlier_line)
{
    if (!sc_valid_name(name, 1))
        return sc_perr(ps, "bad phase name '%s' (letters, digits, '_', '-', '.')", name);
    if (earlier_line)
        return sc_perr(ps, "duplicate phase '%s' (first at line %d)", name, earlier_line);
    return 0;
}

static int do_phase(parser *ps, sc_token *t, int n)
{
    sc_script *s = ps->s;
    if (need_args(ps, "phase", n - 1, 1) < 0 || sc_end_phase(ps) < 0)
        return -1;
    int earlier = 0;
    for (int i = 0; i < s->nphases && !earlier; i++)
        if (strcmp(s->phases[i].name, t[1].text) == 0)
            earlier = s->phases[i].line;
    if (sc_check_phase_name(ps, t[1].text, earlier) < 0)
        return -1;
    sc_phase *grown = realloc(s->phases, (size_t)(s->nphases + 1) * sizeof *grown);
    if (!grown)
        return sc_perr(ps, "out of memory");
    s->phases = grown;
    ps->phase = &grown[s->nphases];
    memset(ps->phase, 0, sizeof *ps->phase);
    ps->phase->line = ps->line;
    s->nphases++;
    ps->phase->name = sc_dup(ps, t[1].text);
    return ps->phase->name ? 0 : -1;
}

int sc_do_header(parser *ps, sc_header which, sc_token *t, int n)
{
    switch (which) {
    case HEADER_WORKLOAD: return do_workload(ps, t, n);
    case HEADER_DESCRIBE: return do_describe(ps, t, n);
    case HEADER_THREADS: return do_threads(ps, t, n);
    case HEADER_SEED: return do_seed(ps, t, n);
    case HEADER_PARAM: return do_param(ps, t, n);
    case HEADER_METRIC: return do_metric(ps, t, n);
    case HEADER_PROGRAM: return do_program(ps, t, n);
    case HEADER_SETUP: return do_setup(ps, t, n);
    case HEADER_TRACE: return sc_do_trace(ps, t, n);
    case HEADER_PHASE: return do_phase(ps, t, n);
    }
    return sc_perr(ps, "internal error: unknown directive %d", (int)which);
}
