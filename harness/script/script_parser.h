/* The parser's state and helpers, shared by the files that read a script:
 * script_parse.c (lines, whole-script checks, script_load), script_header.c
 * (the directives before the first phase) and script_ops.c (operations). */
#ifndef HEAPLAB_SCRIPT_PARSER_H
#define HEAPLAB_SCRIPT_PARSER_H

#include "script_internal.h"

typedef struct parser {
    sc_script *s;
    workload *w;
    int line;
    char *err;
    size_t errlen;
    sc_phase *phase;        /* the phase operations go to, NULL before the first */
    int open_repeat[SC_MAX_NESTING];    /* indices (in phase->ops) of unclosed repeats */
    int nopen;
    int seen_workload, seen_describe, seen_threads, seen_seed, seen_metric;
} parser;

/* Writes "PATH:LINE: message" into the error buffer; returns -1. */
int sc_perr(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The index of w in a NULL-terminated list, or -1. */
int sc_word_in(const char *w, const char *const *list);
/* A name of letters, digits and '_' (and '-' '.' when allow_dash), starting
 * with a letter or '_'. */
int sc_valid_name(const char *n, int allow_dash);
/* strdup, or NULL after writing "out of memory". */
char *sc_dup(parser *ps, const char *text);

/* ---- script_header.c ---- */

/* The header directives; sc_header_names lists their words in this order. */
typedef enum sc_header {
    HEADER_WORKLOAD, HEADER_DESCRIBE, HEADER_THREADS, HEADER_SEED, HEADER_PARAM,
    HEADER_METRIC, HEADER_PROGRAM, HEADER_SETUP, HEADER_TRACE, HEADER_PHASE,
} sc_header;
extern const char *const sc_header_names[];
int sc_do_header(parser *ps, sc_header which, sc_token *t, int n);
/* A new phase's name: valid, and not that of an earlier phase (whose line
 * is earlier_line; 0 when there is none). Returns 0, or -1 with the error. */
int sc_check_phase_name(parser *ps, const char *name, int earlier_line);
/* Checks that the phase being closed is complete (no open repeat, not empty). */
int sc_end_phase(parser *ps);
/* Name, unit and sense of each sc_metric. */
typedef struct sc_metric_info {
    const char *name, *unit, *better;
} sc_metric_info;
extern const sc_metric_info sc_metrics[];

/* ---- script_trace.c ---- */

/* `trace FILE [touch=MODE] [phases=P] [samples=S]`: loads the trace. */
int sc_do_trace(parser *ps, sc_token *t, int n);
/* The error for a `param` line in a trace script. */
int sc_trace_no_params(parser *ps);
/* `phase NAME [until=N|P%]` in a trace script. */
int sc_trace_phase(parser *ps, sc_token *t, int n);
/* Whole-script checks of a trace script; declares the replay's parameters. */
int sc_finish_trace(parser *ps);

/* ---- script_ops.c ---- */

/* Operation words in sc_op_kind order, then "end" (WORD_END). */
extern const char *const sc_op_words[];
enum { WORD_END = OP_REPEAT + 1 };
int sc_add_op(parser *ps, int kind, sc_token *t, int n);
/* `end`: closes the innermost repeat. */
int sc_close_repeat(parser *ps, int n);

#endif
