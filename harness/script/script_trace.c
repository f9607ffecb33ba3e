/* Trace scripts: a `.wl` that names a recorded trace (`trace FILE`) and
 * says how to replay it: the replay's parameters on the `trace` line, and
 * optionally phases that end where the user marks them,
 *
 *   trace  pydict.hltrace  touch=all  samples=50
 *   phase  build  until=60%
 *   phase  drop
 *
 * The trace is loaded and checked in full when the script is read, so a
 * bad trace, like a bad line, stops everything with "PATH:LINE: ...". The
 * replay itself is harness/trace/trace_replay.c. Grammar: docs/workloads.md.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script_parser.h"
#include "trace_workload.h"

enum { PERCENT_ALL = 100 };

/* The options of the `trace` line, which become the replay's parameters. */
enum { OPT_TOUCH, OPT_PHASES, OPT_SAMPLES, OPT_TURNS };
static const char *const trace_options[] = {
    [OPT_TOUCH] = "touch", [OPT_PHASES] = "phases", [OPT_SAMPLES] = "samples",
    [OPT_TURNS] = "turns", [OPT_TURNS + 1] = NULL,
};

/* A phase of a trace script: it ends at `until` (a count of calls in the
 * recorded order, or a percentage of them), or, for the last one, at the
 * end of the trace (has_until 0). */
typedef struct trace_part {
    char *name;
    int line;
    int has_until;
    int percent;
    long long until;
} trace_part;

struct sc_trace {
    struct trace *t;
    int line;
    long long touch, phases, samples, turns;   /* the parameters' defaults */
    trace_part *phase;
    int nphases;
    /* resolved when the script is finished: what the replay is given */
    const char **names;
    uint64_t *ends;
};

/* The trace's path: as written when absolute, else beside the script. */
static char *beside_script(parser *ps, const char *file)
{
    const char *slash = strrchr(ps->s->path, '/');
    size_t dir = file[0] == '/' || !slash ? 0 : (size_t)(slash - ps->s->path) + 1;
    char *path = malloc(dir + strlen(file) + 1);
    if (!path) {
        sc_perr(ps, "out of memory");
        return NULL;
    }
    memcpy(path, ps->s->path, dir);
    strcpy(path + dir, file);
    return path;
}

static int option(parser *ps, sc_trace *tr, char *text)
{
    char msg[SC_ERR_MAX];
    char *eq = strchr(text, '=');
    if (!eq)
        return sc_perr(ps, "trace: expected KEY=VALUE, got '%s' (keys: touch, phases, samples, "
                       "turns)", text);
    *eq = '\0';
    const char *value = eq + 1;
    int k = sc_word_in(text, trace_options);
    if (k < 0) {
        sc_unknown(msg, sizeof msg, "trace option", text, trace_options);
        return sc_perr(ps, "%s", msg);
    }
    if (k == OPT_TOUCH) {
        int v = sc_word_in(value, wl_touch_names);
        if (v < 0) {
            sc_unknown(msg, sizeof msg, "touch mode", value, wl_touch_names);
            return sc_perr(ps, "trace touch=: %s", msg);
        }
        tr->touch = v;
        return 0;
    }
    long long v, lo = k == OPT_PHASES,
                 hi = k == OPT_PHASES ? TRACE_MAX_PHASES : k == OPT_TURNS ? 1 : TRACE_MAX_SAMPLES;
    if (sc_parse_size(value, &v, msg, sizeof msg) < 0)
        return sc_perr(ps, "trace %s=: %s", text, msg);
    if (v < lo || v > hi)
        return sc_perr(ps, "trace %s=%lld is out of range [%lld, %lld]", text, v, lo, hi);
    *(k == OPT_PHASES ? &tr->phases : k == OPT_TURNS ? &tr->turns : &tr->samples) = v;
    return 0;
}

int sc_trace_no_params(parser *ps)
{
    return sc_perr(ps, "a trace script takes its parameters on the 'trace' line (touch=, "
                       "phases=, samples=), not 'param' lines");
}

int sc_do_trace(parser *ps, sc_token *t, int n)
{
    sc_script *s = ps->s;
    if (s->trace)
        return sc_perr(ps, "second 'trace' line (first at line %d)", s->trace->line);
    if (s->is_program)
        return sc_perr(ps, "a script has a 'trace' or a 'program' line, not both (program at "
                       "line %d)", s->program.line);
    if (n < 2)
        return sc_perr(ps, "'trace' needs a file, e.g. trace results/traces/python3.hltrace");
    if (s->nparams)
        return sc_trace_no_params(ps);
    sc_trace *tr = calloc(1, sizeof *tr);
    if (!tr)
        return sc_perr(ps, "out of memory");
    s->trace = tr;
    tr->line = ps->line;
    tr->touch = WL_TOUCH_PAGES;
    tr->phases = TRACE_DEFAULT_PHASES;
    tr->samples = TRACE_DEFAULT_SAMPLES;
    for (int i = 2; i < n; i++)
        if (option(ps, tr, t[i].text) < 0)
            return -1;
    char *path = beside_script(ps, t[1].text);
    if (!path)
        return -1;
    char msg[SC_ERR_MAX];
    tr->t = trace_workload_load(path, msg, sizeof msg);
    free(path);
    if (!tr->t)
        return sc_perr(ps, "%s", msg);
    return 0;
}

/* `phase NAME [until=AT]` after a `trace` line. */
int sc_trace_phase(parser *ps, sc_token *t, int n)
{
    sc_trace *tr = ps->s->trace;
    char msg[SC_ERR_MAX];
    if (n < 2 || n > 3)
        return sc_perr(ps, "a trace script's phase is 'phase NAME [until=N|P%%]'");
    int earlier = 0;
    for (int i = 0; i < tr->nphases && !earlier; i++)
        if (strcmp(tr->phase[i].name, t[1].text) == 0)
            earlier = tr->phase[i].line;
    if (sc_check_phase_name(ps, t[1].text, earlier) < 0)
        return -1;
    if (tr->nphases && !tr->phase[tr->nphases - 1].has_until)
        return sc_perr(ps, "phase '%s' (line %d) has no until=, so it ended the trace",
                       tr->phase[tr->nphases - 1].name, tr->phase[tr->nphases - 1].line);
    trace_part ph = {.line = ps->line};
    if (n == 3) {
        char *value = t[2].text;
        if (strncmp(value, "until=", 6) != 0)
            return sc_perr(ps, "phase %s: expected until=N or until=P%%, got '%s'", t[1].text,
                           value);
        value += 6;
        size_t len = strlen(value);
        if (len > 1 && value[len - 1] == '%') {
            value[len - 1] = '\0';
            ph.percent = 1;
        }
        if (sc_parse_size(value, &ph.until, msg, sizeof msg) < 0)
            return sc_perr(ps, "phase %s until=: %s", t[1].text, msg);
        if (ph.percent && (ph.until < 1 || ph.until > PERCENT_ALL))
            return sc_perr(ps, "phase %s: until=%lld%% is not in [1%%, 100%%]", t[1].text,
                           ph.until);
        ph.has_until = 1;
    }
    trace_part *grown = realloc(tr->phase, (size_t)(tr->nphases + 1) * sizeof *grown);
    if (!grown)
        return sc_perr(ps, "out of memory");
    tr->phase = grown;
    if (!(ph.name = sc_dup(ps, t[1].text)))
        return -1;
    tr->phase[tr->nphases++] = ph;
    return 0;
}

/* Where each phase ends in the recorded order: increasing, the last at
 * the trace's end. */
static int resolve_phases(parser *ps, sc_trace *tr)
{
    uint64_t ops = trace_workload_ops(tr->t);
    tr->names = calloc((size_t)tr->nphases, sizeof *tr->names);
    tr->ends = calloc((size_t)tr->nphases, sizeof *tr->ends);
    if (!tr->names || !tr->ends)
        return sc_perr(ps, "out of memory");
    uint64_t before = 0;
    for (int i = 0; i < tr->nphases; i++) {
        const trace_part *ph = &tr->phase[i];
        ps->line = ph->line;
        uint64_t end = !ph->has_until ? ops
                       : ph->percent  ? ops * (uint64_t)ph->until / PERCENT_ALL
                                      : (uint64_t)ph->until;
        if (end > ops)
            return sc_perr(ps, "phase %s: until=%lld is beyond the trace's %llu calls", ph->name,
                           ph->until, (unsigned long long)ops);
        if (end <= before)
            return sc_perr(ps, "phase %s ends at call %llu, not after the previous phase's end "
                           "(%llu): it would be empty", ph->name, (unsigned long long)end,
                           (unsigned long long)before);
        if (i == tr->nphases - 1 && end != ops)
            return sc_perr(ps, "the last phase, %s, ends at call %llu of %llu: drop its until= "
                           "(it ends the trace) or add a phase after it", ph->name,
                           (unsigned long long)end, (unsigned long long)ops);
        tr->names[i] = ph->name;
        tr->ends[i] = end;
        before = end;
    }
    return 0;
}

int sc_finish_trace(parser *ps)
{
    sc_script *s = ps->s;
    sc_trace *tr = s->trace;
    if ((ps->line = ps->seen_threads))
        return sc_perr(ps, "'threads' does not apply to a trace script (the trace's threads "
                       "are replayed)");
    if ((ps->line = ps->seen_metric))
        return sc_perr(ps, "a trace script's metric is ns_per_op; drop the 'metric' line");
    ps->line = tr->line;
    if (s->nsetup)
        return sc_perr(ps, "'setup' needs a 'program' line (setup prepares inputs for a program)");
    if (tr->nphases && tr->phases != TRACE_DEFAULT_PHASES)
        return sc_perr(ps, "trace phases=%lld and named phases (line %d): use one or the other",
                       tr->phases, tr->phase[0].line);
    if (tr->nphases && resolve_phases(ps, tr) < 0)
        return -1;
    /* the replay's parameters, with the trace line's values as defaults */
    wl_param_def *p = ps->w->params;
    int n = 0;
    p[n++] = (wl_param_def)WL_TOUCH_PARAM(WL_TOUCH_PAGES);
    p[0].def = tr->touch;
    p[n++] = (wl_param_def)TRACE_SAMPLES_PARAM(tr->samples);
    p[n++] = (wl_param_def)TRACE_TURNS_PARAM;
    p[n - 1].def = tr->turns;
    if (!tr->nphases)
        p[n++] = (wl_param_def)TRACE_PHASES_PARAM(tr->phases);
    s->nparams = n;
    return 0;
}

int sc_run_trace(wl_ctx *ctx)
{
    const sc_trace *tr = ((const sc_script *)ctx->w->data)->trace;
    if (tr->nphases)
        return trace_workload_replay(ctx, tr->t, tr->nphases, tr->ends, tr->names);
    return trace_workload_replay(ctx, tr->t, (int)wl_param(ctx, "phases"), NULL, NULL);
}

int sc_trace_line(const sc_trace *tr) { return tr->line; }

void sc_trace_free(sc_trace *tr)
{
    if (!tr)
        return;
    trace_workload_close(tr->t);
    for (int i = 0; i < tr->nphases; i++)
        free(tr->phase[i].name);
    free(tr->phase);
    free(tr->names);
    free(tr->ends);
    free(tr);
}
