/* The runner's command line (docs/schema.md): parsed, not yet checked
 * against allocators and workloads. */
#ifndef HEAPLAB_CLI_H
#define HEAPLAB_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { CLI_MAX_PARAMS = 64 };

typedef enum cli_mode { CLI_RUN, CLI_LIST, CLI_LIST_JSON, CLI_HELP } cli_mode;

typedef struct cli_options {
    cli_mode mode;
    const char *alloc;
    const char *workload;
    int threads;                  /* 0 = the workload's default */
    const char *params[CLI_MAX_PARAMS]; /* "KEY=VALUE", in order given */
    int param_count;
    uint64_t seed;
    int quick;
    const char *workloads_dir;    /* NULL = the source tree's workloads/ */
} cli_options;

/* Returns 0, or -1 with a one-line reason in err. */
int cli_parse(int argc, char **argv, cli_options *out, char *err, size_t errlen);

void cli_usage(FILE *out);

#endif
