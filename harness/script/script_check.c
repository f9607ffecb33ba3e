/* Resolution of $PARAMs and the static live count.
 *
 * Every thread runs the same operations on its own live set, so one integer
 * walk over the phases knows how many blocks each thread holds after every
 * operation. That walk rejects a free with nothing live before anything runs,
 * and tells the interpreter how large to map its live-block arrays.
 */
#include <stdio.h>

#include "script_internal.h"

static const char *const op_names[] = {
    [OP_ALLOC] = "alloc", [OP_FREE] = "free", [OP_REALLOC] = "realloc",
    [OP_PAIRS] = "pairs", [OP_CHURN] = "churn", [OP_HANDOFF] = "handoff",
    [OP_TRIM] = "trim", [OP_FLUSH] = "flush", [OP_SAMPLE] = "sample",
    [OP_REPEAT] = "repeat",
};

/* A repeat whose live count changes every round is walked round by round;
 * past this many steps the walk gives up rather than stall the load. */
static const long long MAX_CHECK_STEPS = 100000000;
/* Most blocks a script may keep live at once per thread: the interpreter
 * keeps a 16-byte entry for each (1 << 30 of them take 16 GiB), mapped
 * before the clock starts; past this the mapping would fail at run time,
 * far from the line that asked for it. */
static const long long MAX_LIVE_BLOCKS = 1LL << 30;

static void resolve_num(sc_num *n, const long long *pv)
{
    n->val = n->param < 0 ? n->lit : pv[n->param];
}

long long sc_op_count(const sc_op *op, long long live)
{
    enum { HUNDRED_PERCENT = 100 };
    if (!op->percent)
        return op->count.val;
    /* live * P / 100 without overflow for any count a machine can hold */
    return (long long)((__int128)live * op->count.val / HUNDRED_PERCENT);
}

static int fail(char *err, size_t errlen, const sc_script *s, const sc_op *op, const char *what,
                long long a, long long b)
{
    char msg[SC_ERR_MAX];
    snprintf(msg, sizeof msg, what, a, b);
    snprintf(err, errlen, "%s:%d: %s: %s", s->path, op->line, op_names[op->kind], msg);
    return -1;
}

/* Checks one resolved operation and applies it to the per-thread live count. */
static int step(const sc_script *s, sc_op *op, long long *live, char *err, size_t errlen)
{
    enum { MAX_PERCENT = 100 };
    char msg[SC_ERR_MAX];
    if (op->has_size && sc_dist_check(&op->size, msg, sizeof msg) < 0) {
        snprintf(err, errlen, "%s:%d: %s", s->path, op->line, msg);
        return -1;
    }
    if (op->percent && op->count.val > MAX_PERCENT)
        return fail(err, errlen, s, op, "%lld%% is over 100%%", op->count.val, 0);
    if (op->align.val && (op->align.val & (op->align.val - 1)))
        return fail(err, errlen, s, op, "align=%lld is not a power of two", op->align.val, 0);
    long long n = sc_op_count(op, *live);
    switch (op->kind) {
    case OP_ALLOC:
        *live += n;
        return 0;
    case OP_FREE:
    case OP_REALLOC:
        if (*live == 0)
            return fail(err, errlen, s, op, "nothing is live here (allocate first)", 0, 0);
        if (n > *live)
            return fail(err, errlen, s, op, "asks for %lld blocks but only %lld are live",
                        n, *live);
        if (op->kind == OP_FREE)
            *live -= n;
        return 0;
    case OP_CHURN:
        if (op->has_live && op->live.val > *live)
            *live = op->live.val;
        if (*live == 0)
            return fail(err, errlen, s, op,
                        "nothing is live to churn (allocate first, or give live=L)", 0, 0);
        return 0;
    case OP_HANDOFF:
        if (*live == 0)
            return fail(err, errlen, s, op, "nothing is live to hand off", 0, 0);
        *live = 0;
        return 0;
    case OP_PAIRS:
    case OP_REPEAT:
    case OP_TRIM:
    case OP_FLUSH:
    case OP_SAMPLE:
        return 0;
    }
    return 0;
}

typedef struct walk {
    const sc_script *s;
    long long live, most, steps;
    char *err;
    size_t errlen;
} walk;

/* Walks ops[0..n) once, repeats included. */
static int walk_ops(walk *wk, sc_op *ops, int n)
{
    for (int i = 0; i < n; i++) {
        sc_op *op = &ops[i];
        if (++wk->steps > MAX_CHECK_STEPS) {
            snprintf(wk->err, wk->errlen, "%s:%d: repeat too long to check (the live count "
                     "changes every round for over %lld steps)", wk->s->path, op->line,
                     MAX_CHECK_STEPS);
            return -1;
        }
        if (step(wk->s, op, &wk->live, wk->err, wk->errlen) < 0)
            return -1;
        if (wk->live > wk->most)
            wk->most = wk->live;
        if (wk->live > MAX_LIVE_BLOCKS) {
            snprintf(wk->err, wk->errlen, "%s:%d: %s: %lld blocks live at once, more than a script can "
                     "keep (at most %lld per thread)", wk->s->path, op->line, op_names[op->kind], wk->live,
                     MAX_LIVE_BLOCKS);
            return -1;
        }
        if (op->kind != OP_REPEAT)
            continue;
        for (long long r = 0; r < op->count.val; r++) {
            long long before = wk->live;
            if (walk_ops(wk, op + 1, op->body) < 0)
                return -1;
            /* The state is the live count alone: a round that leaves it
             * unchanged will do the same every time after. */
            if (wk->live == before)
                break;
        }
        i += op->body;
    }
    return 0;
}

int sc_check_counts(sc_script *s, const long long *pv, long long *max_live, char *err,
                    size_t errlen)
{
    for (int p = 0; p < s->nphases; p++) {
        for (int i = 0; i < s->phases[p].nops; i++) {
            sc_op *op = &s->phases[p].ops[i];
            resolve_num(&op->count, pv);
            resolve_num(&op->align, pv);
            resolve_num(&op->live, pv);
            resolve_num(&op->trim_every, pv);
            if (op->has_size)
                sc_dist_resolve(&op->size, pv);
        }
    }
    walk wk = {.s = s, .err = err, .errlen = errlen};
    for (int p = 0; p < s->nphases; p++)
        if (walk_ops(&wk, s->phases[p].ops, s->phases[p].nops) < 0)
            return -1;
    *max_live = wk.most;
    return 0;
}
