/* The parsed form of a workload script, shared by the files of harness/script/.
 *
 * script_parse.c, script_header.c and script_ops.c build it (script_load),
 * script_check.c validates the live counts it implies, script_run.c
 * interprets heap scripts, script_program.c runs program scripts. Everything
 * here is allocated with the system allocator at load time, never while a
 * workload runs.
 */
#ifndef HEAPLAB_SCRIPT_INTERNAL_H
#define HEAPLAB_SCRIPT_INTERNAL_H

#include <stddef.h>

#include "script.h"

enum {
    SC_MAX_THREADS = 1024,     /* a `threads` line above this is a typo, not a plan */
    SC_MAX_TOKENS = 128,       /* tokens on one line */
    SC_MAX_LIST = 64,          /* items in choice(...) or parts in mix(...) */
    SC_ERR_MAX = 512,          /* one error line */
    SC_MAX_NESTING = 8,        /* repeat blocks inside repeat blocks */
};

/* A number in a script: a literal, or a $PARAM resolved when the run starts.
 * `val` holds the value in effect (the literal, or the parameter's value
 * after script_resolve); it is what the interpreter reads. */
typedef struct sc_num {
    long long lit;
    int param;      /* index into the workload's params, or -1 for a literal */
    long long val;
} sc_num;

typedef enum sc_dist_kind {
    SD_FIXED,       /* fixed(N) */
    SD_UNIFORM,     /* uniform(A,B) */
    SD_LOGUNIFORM,  /* loguniform(A,B) */
    SD_POW2,        /* pow2(A,B): powers of two in [A,B] */
    SD_CHOICE,      /* choice(A,B,...) */
    SD_MIX,         /* mix(W:DIST, ...) */
} sc_dist_kind;

typedef struct sc_dist {
    sc_dist_kind kind;
    int n;                  /* args (1 for fixed, 2 for ranges, n for choice) or parts (mix) */
    sc_num *args;
    double *cumulative;     /* mix: running sum of weights, last = total */
    struct sc_dist *parts;  /* mix: the n weighted distributions */
} sc_dist;

typedef enum sc_op_kind {
    OP_ALLOC, OP_FREE, OP_REALLOC, OP_PAIRS, OP_CHURN,
    OP_HANDOFF, OP_TRIM, OP_FLUSH, OP_SAMPLE,
    OP_REPEAT,      /* runs the next `body` operations `count` times */
} sc_op_kind;

/* Which live block a free takes. ORDER_ALTERNATE (free only) takes every
 * other block, oldest first, so freed and live blocks interleave. */
typedef enum sc_order { ORDER_RANDOM, ORDER_FIFO, ORDER_LIFO, ORDER_ALTERNATE } sc_order;

/* How much of a fresh block the interpreter writes. */
typedef enum sc_touch {
    TOUCH_NONE,     /* nothing */
    TOUCH_FIRST,    /* the first byte (the default: proves the block is usable) */
    TOUCH_PAGES,    /* one byte per page, first and last (wl_touch, all = 0) */
    TOUCH_ALL,      /* every byte (wl_touch, all = 1) */
} sc_touch;

typedef struct sc_op {
    sc_op_kind kind;
    int line;
    sc_num count;           /* N, or P when `percent` is set; every=N for sample */
    int percent;
    int has_size;
    sc_dist size;
    sc_num align;           /* 0: no alignment requested */
    sc_touch touch;
    sc_order order;
    int has_live;
    sc_num live;            /* churn live=L */
    sc_num trim_every;      /* churn trim_every=K (0: never) */
    int body;               /* repeat: how many following operations it repeats */
} sc_op;

typedef struct sc_phase {
    char *name;
    int line;
    sc_op *ops;
    int nops;
} sc_phase;

/* A command line of a program script (`program` or `setup`), still with
 * $PARAM and {tmp} unexpanded. */
typedef struct sc_cmd {
    int line;
    int argc;
    char **argv;
} sc_cmd;

/* A trace script's trace and phases (script_trace.c). */
typedef struct sc_trace sc_trace;

/* The primary metrics a heap script can report. */
typedef enum sc_metric { METRIC_NS_PER_OP, METRIC_MOPS_PER_S } sc_metric;

typedef struct sc_script {
    char *path;
    char *name;
    char *describe;
    int threads;
    long long seed;
    sc_metric metric;
    int nparams;
    char *param_name[WL_MAX_PARAMS];    /* owned copies behind workload.params */
    char *param_help[WL_MAX_PARAMS];
    sc_phase *phases;
    int nphases;
    int is_program;
    sc_cmd program;
    sc_cmd *setup;
    int nsetup;
    int uses_handoff;
    sc_trace *trace;        /* a trace script (`trace FILE`), else NULL */
} sc_script;

/* ---- script_lex.c: tokens, numbers, suggestions ---- */

typedef struct sc_token {
    char *text;     /* unquoted text, NUL-terminated (points into the line buffer) */
    int quoted;     /* 0 bare, '"' or '\'' */
} sc_token;

/* Splits `line` in place into tokens; a `#` outside quotes at the start of a
 * token ends the line. Bare words keep spaces inside parentheses, so
 * `mix(3:fixed(16), 1:uniform(1,2))` is one token. Returns the count, or -1
 * with a message in err. */
int sc_tokenize(char *line, sc_token *tok, int max, char *err, size_t errlen);

/* Parses a non-negative integer with an optional K/M/G suffix (KiB, MiB,
 * GiB) and `_` digit separators. Returns 0 or -1 (with a message). */
int sc_parse_size(const char *s, long long *out, char *err, size_t errlen);

/* The candidate closest to `word` by edit distance, or NULL when none is
 * close enough to be a plausible typo. `cands` is NULL-terminated. */
const char *sc_suggest(const char *word, const char *const *cands);

/* Writes "unknown KIND 'word'" plus " (did you mean 'x'?)" when one is close. */
void sc_unknown(char *err, size_t errlen, const char *kind, const char *word,
                const char *const *cands);

/* ---- script_num.c: numbers and $PARAMs ---- */

/* Parses a literal size or $NAME (NAME declared in params[0..nparams)). */
int sc_parse_num(const char *s, const wl_param_def *params, int nparams, sc_num *out,
                 char *err, size_t errlen);

/* ---- script_dist.c: size distributions ---- */

int sc_parse_dist(const char *s, const wl_param_def *params, int nparams, sc_dist *out,
                  char *err, size_t errlen);
void sc_dist_free(sc_dist *d);
/* Checks resolved bounds (min <= max, sizes >= 1, a power of two in range). */
int sc_dist_check(const sc_dist *d, char *err, size_t errlen);
/* Sets every `val` from the literals and the parameter values. */
void sc_dist_resolve(sc_dist *d, const long long *pv);
/* The largest size the distribution can draw (resolved). */
long long sc_dist_max(const sc_dist *d);
struct wl_rng;
size_t sc_dist_draw(const sc_dist *d, struct wl_rng *r);

/* ---- script_check.c: resolution and the static live count ---- */

/* Resolves every number with the parameter values `pv` (one per param),
 * then walks the phases counting live blocks per thread. On success returns
 * 0 and sets *max_live (the most blocks one thread holds at once). On
 * failure writes "PATH:LINE: what is wrong" and returns -1. */
int sc_check_counts(sc_script *s, const long long *pv, long long *max_live,
                    char *err, size_t errlen);

/* How many blocks a count or percentage op acts on, given `live` blocks. */
long long sc_op_count(const sc_op *op, long long live);

/* ---- script_run.c / script_program.c ---- */

int sc_run_heap(wl_ctx *ctx);
int sc_run_program(wl_ctx *ctx);

/* ---- script_trace.c ---- */

int sc_run_trace(wl_ctx *ctx);
void sc_trace_free(sc_trace *tr);
/* The line of the script's `trace` directive. */
int sc_trace_line(const sc_trace *tr);

/* ---- script_parse.c ---- */

void sc_script_free(sc_script *s);

#endif
