/* script_load: reads a workload script completely, checks it, and describes
 * it as a `workload` the runner can list and run. Grammar: docs/workloads.md.
 *
 * The whole script is checked before anything runs: a bad script stops with
 * one line, "PATH:LINE: what is wrong".
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script_parser.h"

/* Every word a line may start with, for "did you mean". */
static const char *const all_words[] = {
    "workload", "describe", "threads", "seed", "param", "metric", "program", "setup", "trace",
    "phase",
    "alloc", "free", "realloc", "pairs", "churn", "handoff", "trim", "flush", "sample",
    "repeat", "end", NULL,
};

int sc_perr(parser *ps, const char *fmt, ...)
{
    char msg[SC_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(ps->err, ps->errlen, "%s:%d: %s", ps->s->path, ps->line, msg);
    return -1;
}

int sc_word_in(const char *w, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(w, list[i]) == 0)
            return i;
    return -1;
}

int sc_valid_name(const char *n, int allow_dash)
{
    if (!isalpha((unsigned char)n[0]) && n[0] != '_')
        return 0;
    for (const char *p = n; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && !(allow_dash && (*p == '-' || *p == '.')))
            return 0;
    return 1;
}

char *sc_dup(parser *ps, const char *text)
{
    char *d = strdup(text);
    if (!d)
        sc_perr(ps, "out of memory");
    return d;
}

static int parse_line(parser *ps, char *line)
{
    sc_token t[SC_MAX_TOKENS];
    char msg[SC_ERR_MAX];
    int n = sc_tokenize(line, t, SC_MAX_TOKENS, msg, sizeof msg);
    if (n < 0)
        return sc_perr(ps, "%s", msg);
    if (n == 0)
        return 0;
    const char *w = t[0].text;
    if (t[0].quoted)
        return sc_perr(ps, "a line starts with a quoted string; expected a directive");
    int op = sc_word_in(w, sc_op_words);
    if (op >= 0 && ps->s->trace)
        return sc_perr(ps, "'%s': a trace script replays the trace's calls; it has no "
                       "operations", w);
    if (op >= 0) {
        if (!ps->phase)
            return sc_perr(ps, "operation '%s' outside a phase (start one with 'phase NAME')", w);
        if (op == WORD_END)
            return sc_close_repeat(ps, n);
        return sc_add_op(ps, op, t, n);
    }
    int h = sc_word_in(w, sc_header_names);
    if (h < 0) {
        sc_unknown(msg, sizeof msg, ps->phase ? "operation" : "directive", w, all_words);
        return sc_perr(ps, "%s", msg);
    }
    if (h == HEADER_PHASE && ps->s->trace)
        return sc_trace_phase(ps, t, n);
    if (ps->phase && h != HEADER_PHASE)
        return sc_perr(ps, "'%s' must come before the first phase (line %d)", w,
                       ps->s->phases[0].line);
    return sc_do_header(ps, (sc_header)h, t, n);
}

static int read_lines(parser *ps, FILE *f)
{
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    while ((len = getline(&buf, &cap, f)) >= 0) {
        ps->line++;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
            buf[--len] = '\0';
        if (strlen(buf) != (size_t)len) {
            rc = sc_perr(ps, "NUL byte in the line (not a text file?)");
            break;
        }
        if ((rc = parse_line(ps, buf)) < 0)
            break;
    }
    free(buf);
    return rc;
}

/* Whole-script checks once every line is read. */
static int finish(parser *ps)
{
    sc_script *s = ps->s;
    if (sc_end_phase(ps) < 0)
        return -1;
    if (!s->name) {
        ps->line = 1;
        return sc_perr(ps, "missing 'workload NAME' line");
    }
    if (s->trace)
        return sc_finish_trace(ps);
    if (s->is_program) {
        ps->line = s->program.line;
        if (s->nphases)
            return sc_perr(ps, "a program script has no phases (phase '%s' at line %d)",
                           s->phases[0].name, s->phases[0].line);
        if (ps->seen_threads)
            return sc_perr(ps, "'threads' does not apply to a program script");
        if (ps->seen_metric)
            return sc_perr(ps, "a program script's metric is wall_ns; drop the 'metric' line");
        return 0;
    }
    if (s->nsetup) {
        ps->line = s->setup[0].line;
        return sc_perr(ps, "'setup' needs a 'program' line (setup prepares inputs for a program)");
    }
    if (s->nphases == 0) {
        ps->line = ps->line > 0 ? ps->line : 1;
        return sc_perr(ps, "no phases: add 'phase NAME' and operations, or a 'program' line");
    }
    /* The live counts must work with the published sizes and the quick ones. */
    long long pv[WL_MAX_PARAMS], max_live;
    for (int i = 0; i < s->nparams; i++)
        pv[i] = ps->w->params[i].def;
    if (sc_check_counts(s, pv, &max_live, ps->err, ps->errlen) < 0)
        return -1;
    int has_quick = 0;
    for (int i = 0; i < s->nparams; i++) {
        if (ps->w->params[i].quick) {
            pv[i] = ps->w->params[i].quick;
            has_quick = 1;
        }
    }
    if (has_quick && sc_check_counts(s, pv, &max_live, ps->err, ps->errlen) < 0) {
        size_t used = strlen(ps->err);
        snprintf(ps->err + used, ps->errlen - used, " (with the quick sizes)");
        return -1;
    }
    return 0;
}

static int script_run(wl_ctx *ctx)
{
    const sc_script *s = ctx->w->data;
    if (s->trace)
        return sc_run_trace(ctx);
    return s->is_program ? sc_run_program(ctx) : sc_run_heap(ctx);
}

static void describe_workload(const sc_script *s, workload *w)
{
    w->name = s->name;
    w->group = s->is_program ? "program" : "script";
    w->describe = s->describe ? s->describe
                  : s->trace  ? "replay of a recorded program's allocation calls"
                              : "workload script";
    if (s->is_program) {
        w->metric = "wall_ns";
        w->unit = "ns";
        w->better = "lower";
    } else {
        w->metric = sc_metrics[s->metric].name;
        w->unit = sc_metrics[s->metric].unit;
        w->better = sc_metrics[s->metric].better;
    }
    w->default_threads = s->threads;
    /* --threads applies to every heap script (docs/workloads.md: it overrides
     * `threads`), with or without a `threads` line */
    w->threaded = !s->is_program && !s->trace;
    w->params[s->nparams].name = NULL;
    w->run = script_run;
    w->source = s->path;
    w->data = (void *)s;
}

int script_load(const char *path, workload *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    sc_script *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    s->threads = 1;
    s->metric = METRIC_NS_PER_OP;
    parser ps = {.s = s, .w = out, .err = err, .errlen = errlen};
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        sc_script_free(s);
        return -1;
    }
    int rc = read_lines(&ps, f);
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "%s:%d: read error: %s", path, ps.line, strerror(errno));
        rc = -1;
    }
    fclose(f);
    if (rc == 0)
        rc = finish(&ps);
    if (rc < 0) {
        sc_script_free(s);
        memset(out, 0, sizeof *out);
        return -1;
    }
    describe_workload(s, out);
    return 0;
}

static void free_cmd(sc_cmd *c)
{
    for (int i = 0; i < c->argc; i++)
        free(c->argv[i]);
    free(c->argv);
}

void sc_script_free(sc_script *s)
{
    if (!s)
        return;
    for (int p = 0; p < s->nphases; p++) {
        for (int i = 0; i < s->phases[p].nops; i++)
            if (s->phases[p].ops[i].has_size)
                sc_dist_free(&s->phases[p].ops[i].size);
        free(s->phases[p].ops);
        free(s->phases[p].name);
    }
    free(s->phases);
    for (int i = 0; i < s->nparams; i++) {
        free(s->param_name[i]);
        free(s->param_help[i]);
    }
    free_cmd(&s->program);
    for (int i = 0; i < s->nsetup; i++)
        free_cmd(&s->setup[i]);
    free(s->setup);
    sc_trace_free(s->trace);
    free(s->name);
    free(s->describe);
    free(s->path);
    free(s);
}

void script_free(workload *w)
{
    if (!w || !w->data)
        return;
    sc_script_free(w->data);
    memset(w, 0, sizeof *w);
}
