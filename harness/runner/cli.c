/* Command-line parsing: see cli.h. Options take their value as the next
 * word or after '=' ("--alloc mimalloc", "--alloc=mimalloc"). */
#include "cli.h"
#include "alloc.h"
#include "runner.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where the help text's descriptions start, and the width it keeps to. */
enum { USAGE_INDENT = 22, USAGE_WIDTH = 80 };

/* The families' names after "--alloc NAME", wrapped under the description
 * column, so the help never lists a name the runner does not know. */
static void usage_families(FILE *out)
{
    int col = USAGE_INDENT;
    for (int i = 0; i < alloc_family_count; i++) {
        char item[64];
        int len = snprintf(item, sizeof item, "%s%s,", alloc_families[i].name,
                           alloc_families[i].runs_by_default ? "" : " (a baseline)");
        if (col > USAGE_INDENT && col + 1 + len > USAGE_WIDTH) {
            fprintf(out, "\n%*s", USAGE_INDENT, "");
            col = USAGE_INDENT;
        }
        col += fprintf(out, "%s%s", col > USAGE_INDENT ? " " : "", item);
    }
    fprintf(out, "\n%*sor " ALLOC_SO_PATTERN ": a library, called NAME\n", USAGE_INDENT, "");
    fprintf(out, "%*sin the document when NAME= is given\n", USAGE_INDENT, "");
}

void cli_usage(FILE *out)
{
    fputs("usage: heaplab-run --alloc NAME --workload NAME [--threads N] [--param KEY=VALUE]...\n"
          "                   [--seed S] [--quick] [--workloads-dir DIR]\n"
          "       heaplab-run --list | --list-json | --help\n"
          "\n"
          "Runs one workload once on one allocator and prints one JSON document\n"
          "(schema heaplab.run/1) on stdout.\n"
          "\n"
          "  --alloc NAME        ",
          out);
    usage_families(out);
    fputs("  --workload NAME     a built-in workload, a script's name, or a .wl path\n"
          "  --threads N         threads for threaded workloads (default: the workload's)\n"
          "  --param KEY=VALUE   set a workload parameter (repeatable)\n"
          "  --seed S            random seed (default 1)\n"
          "  --quick             use each parameter's quick size\n"
          "  --workloads-dir DIR where workload scripts are found\n"
          "  --list, --list-json allocators and workloads, for people or for run.py\n"
          "\n"
          "Exit status: 0 ok, 1 the workload failed (document printed), 2 bad input.\n",
          out);
}

/* "--name" or "--name=value": returns the value (from '=' or the next word),
 * or NULL when arg is not this option. */
static const char *option_value(const char *arg, const char *name, int argc, char **argv,
                                int *i, int *missing)
{
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0)
        return NULL;
    if (arg[len] == '=')
        return arg + len + 1;
    if (arg[len] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

static int parse_threads(const char *s, int *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > RUNNER_MAX_THREADS) {
        snprintf(err, errlen, "--threads: '%s' is not a thread count in [1, %d]", s,
                 RUNNER_MAX_THREADS);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_seed(const char *s, uint64_t *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-') {
        snprintf(err, errlen, "--seed: '%s' is not an unsigned 64-bit integer", s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse(int argc, char **argv, cli_options *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->mode = CLI_RUN;
    out->seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *v;
        int missing = 0;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            out->mode = CLI_HELP;
            return 0;
        } else if (strcmp(arg, "--list") == 0) {
            out->mode = CLI_LIST;
        } else if (strcmp(arg, "--list-json") == 0) {
            out->mode = CLI_LIST_JSON;
        } else if (strcmp(arg, "--quick") == 0) {
            out->quick = 1;
        } else if ((v = option_value(arg, "--alloc", argc, argv, &i, &missing))) {
            out->alloc = v;
        } else if ((v = option_value(arg, "--workloads-dir", argc, argv, &i, &missing))) {
            out->workloads_dir = v;
        } else if ((v = option_value(arg, "--workload", argc, argv, &i, &missing))) {
            out->workload = v;
        } else if ((v = option_value(arg, "--threads", argc, argv, &i, &missing))) {
            if (parse_threads(v, &out->threads, err, errlen) != 0)
                return -1;
        } else if ((v = option_value(arg, "--seed", argc, argv, &i, &missing))) {
            if (parse_seed(v, &out->seed, err, errlen) != 0)
                return -1;
        } else if ((v = option_value(arg, "--param", argc, argv, &i, &missing))) {
            if (out->param_count == CLI_MAX_PARAMS) {
                snprintf(err, errlen, "--param: more than %d given", CLI_MAX_PARAMS);
                return -1;
            }
            out->params[out->param_count++] = v;
        } else if (missing) {
            snprintf(err, errlen, "%s: needs a value", arg);
            return -1;
        } else {
            snprintf(err, errlen, "unknown option '%s' (try --help)", arg);
            return -1;
        }
    }
    if (out->mode == CLI_RUN && (!out->alloc || !out->workload)) {
        snprintf(err, errlen, "%s", !out->alloc && !out->workload
                                        ? "--alloc and --workload are required (try --help)"
                                    : !out->alloc ? "--alloc is required (try --help)"
                                                  : "--workload is required (try --help)");
        return -1;
    }
    return 0;
}
