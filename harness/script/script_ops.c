/* The operations inside a phase: alloc, free, realloc, pairs, churn,
 * handoff, trim, flush, sample, repeat ... end. Grammar: docs/workloads.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "script_parser.h"

const char *const sc_op_words[] = {
    "alloc", "free", "realloc", "pairs", "churn", "handoff", "trim", "flush", "sample",
    "repeat", "end", NULL,
};

/* Option keys as bits; bit k is key_names[k]. */
enum {
    K_SIZE = 1 << 0, K_ALIGN = 1 << 1, K_TOUCH = 1 << 2, K_ORDER = 1 << 3,
    K_LIVE = 1 << 4, K_EVERY = 1 << 5, K_TRIM_EVERY = 1 << 6,
};
static const char *const key_names[] = {
    "size", "align", "touch", "order", "live", "every", "trim_every", NULL,
};

/* What each operation accepts: its count (none, a count, or a count or a
 * percentage), the keys it allows and the keys it needs. */
enum { COUNT_NONE, COUNT_N, COUNT_N_OR_PERCENT };
static const struct {
    int count;
    unsigned allowed, required;
} op_spec[] = {
    [OP_ALLOC] = {COUNT_N, K_SIZE | K_ALIGN | K_TOUCH, K_SIZE},
    [OP_FREE] = {COUNT_N_OR_PERCENT, K_ORDER, 0},
    [OP_REALLOC] = {COUNT_N_OR_PERCENT, K_SIZE | K_TOUCH, K_SIZE},
    [OP_PAIRS] = {COUNT_N, K_SIZE | K_ALIGN | K_TOUCH, K_SIZE},
    [OP_CHURN] = {COUNT_N, K_SIZE | K_ALIGN | K_TOUCH | K_ORDER | K_LIVE | K_TRIM_EVERY, K_SIZE},
    [OP_HANDOFF] = {COUNT_NONE, 0, 0},
    [OP_TRIM] = {COUNT_NONE, 0, 0},
    [OP_FLUSH] = {COUNT_NONE, 0, 0},
    [OP_SAMPLE] = {COUNT_NONE, K_EVERY, K_EVERY},
    [OP_REPEAT] = {COUNT_N, 0, 0},
};

static const char *const touch_names[] = {"none", "first", "pages", "all", NULL};
static const char *const order_names[] = {"random", "fifo", "lifo", "alternate", NULL};

static int enum_value(parser *ps, const char *key, const char *v, const char *const *names)
{
    int i = sc_word_in(v, names);
    if (i < 0) {
        char msg[SC_ERR_MAX];
        sc_unknown(msg, sizeof msg, key, v, names);
        return sc_perr(ps, "%s", msg);
    }
    return i;
}

static int parse_count(parser *ps, sc_op *op, const char *opname, char *text)
{
    char msg[SC_ERR_MAX];
    size_t len = strlen(text);
    if (len > 1 && text[len - 1] == '%') {
        if (op_spec[op->kind].count != COUNT_N_OR_PERCENT)
            return sc_perr(ps, "%s takes a count, not a percentage", opname);
        text[len - 1] = '\0';
        op->percent = 1;
    }
    if (sc_parse_num(text, ps->w->params, ps->s->nparams, &op->count, msg, sizeof msg) < 0)
        return sc_perr(ps, "%s: %s", opname, msg);
    return 0;
}

static int parse_key(parser *ps, sc_op *op, const char *opname, char *tok, unsigned *seen)
{
    char msg[SC_ERR_MAX];
    char *eq = strchr(tok, '=');
    *eq = '\0';
    const char *v = eq + 1;
    int k = sc_word_in(tok, key_names);
    if (k < 0) {
        sc_unknown(msg, sizeof msg, "option", tok, key_names);
        return sc_perr(ps, "%s: %s", opname, msg);
    }
    unsigned bit = 1u << k;
    if (!(op_spec[op->kind].allowed & bit))
        return sc_perr(ps, "%s does not take %s=", opname, tok);
    if (*seen & bit)
        return sc_perr(ps, "%s: %s= given twice", opname, tok);
    *seen |= bit;
    const wl_param_def *pd = ps->w->params;
    int np = ps->s->nparams;
    int r = 0;
    switch (bit) {
    case K_SIZE:
        op->has_size = 1;
        r = sc_parse_dist(v, pd, np, &op->size, msg, sizeof msg);
        break;
    case K_ALIGN:
        r = sc_parse_num(v, pd, np, &op->align, msg, sizeof msg);
        break;
    case K_LIVE:
        op->has_live = 1;
        r = sc_parse_num(v, pd, np, &op->live, msg, sizeof msg);
        break;
    case K_EVERY:
        r = sc_parse_num(v, pd, np, &op->count, msg, sizeof msg);
        break;
    case K_TRIM_EVERY:
        r = sc_parse_num(v, pd, np, &op->trim_every, msg, sizeof msg);
        break;
    case K_TOUCH:
        if ((r = enum_value(ps, "touch mode", v, touch_names)) < 0)
            return -1;
        op->touch = (sc_touch)r;
        return 0;
    case K_ORDER:
        if ((r = enum_value(ps, "free order", v, order_names)) < 0)
            return -1;
        op->order = (sc_order)r;
        return 0;
    }
    if (r < 0)
        return sc_perr(ps, "%s %s=: %s", opname, tok, msg);
    return 0;
}

int sc_add_op(parser *ps, int kind, sc_token *t, int n)
{
    const char *opname = sc_op_words[kind];
    sc_phase *ph = ps->phase;
    sc_op *grown = realloc(ph->ops, (size_t)(ph->nops + 1) * sizeof *grown);
    if (!grown)
        return sc_perr(ps, "out of memory");
    ph->ops = grown;
    sc_op *op = &grown[ph->nops++];
    memset(op, 0, sizeof *op);
    op->kind = (sc_op_kind)kind;
    op->line = ps->line;
    op->touch = TOUCH_FIRST;
    op->order = ORDER_RANDOM;
    op->count.param = op->align.param = op->live.param = op->trim_every.param = -1;
    unsigned seen = 0;
    int have_count = 0;
    for (int i = 1; i < n; i++) {
        char *eq = strchr(t[i].text, '=');
        char *paren = strchr(t[i].text, '(');
        if (eq && (!paren || eq < paren)) {
            if (parse_key(ps, op, opname, t[i].text, &seen) < 0)
                return -1;
            continue;
        }
        if (op_spec[kind].count == COUNT_NONE || have_count)
            return sc_perr(ps, "%s: unexpected '%s'", opname, t[i].text);
        if (parse_count(ps, op, opname, t[i].text) < 0)
            return -1;
        have_count = 1;
    }
    if (op_spec[kind].count != COUNT_NONE && !have_count)
        return sc_perr(ps, "%s needs a count%s", opname,
                       op_spec[kind].count == COUNT_N_OR_PERCENT ? " or a percentage" : "");
    unsigned missing = op_spec[kind].required & ~seen;
    for (int k = 0; key_names[k]; k++)
        if (missing & (1u << k))
            return sc_perr(ps, "%s needs %s=", opname, key_names[k]);
    if (kind == OP_HANDOFF)
        ps->s->uses_handoff = 1;
    if (kind == OP_CHURN && op->order == ORDER_ALTERNATE)
        return sc_perr(ps, "churn frees one block per step: order=random, fifo or lifo");
    if (kind == OP_REPEAT) {
        if (ps->nopen == SC_MAX_NESTING)
            return sc_perr(ps, "repeat blocks nested more than %d deep", SC_MAX_NESTING);
        ps->open_repeat[ps->nopen++] = ph->nops - 1;
    }
    return 0;
}

/* `end` closes the innermost repeat: its body is everything added since. */
int sc_close_repeat(parser *ps, int n)
{
    if (n > 1)
        return sc_perr(ps, "'end' takes no arguments");
    if (ps->nopen == 0)
        return sc_perr(ps, "'end' without a 'repeat'");
    int at = ps->open_repeat[--ps->nopen];
    sc_op *rep = &ps->phase->ops[at];
    rep->body = ps->phase->nops - 1 - at;
    if (rep->body == 0)
        return sc_perr(ps, "empty repeat block (line %d)", rep->line);
    return 0;
}
