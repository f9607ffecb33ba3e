/* The runner's entry point (heaplab_run_main, see run_main.h): one
 * workload, once, on one allocator; one JSON document on stdout
 * (docs/schema.md).
 *
 * Order matters: the allocator is opened first because opening jemalloc
 * may re-execute the process; then the workload is found and its
 * parameters checked; only then does anything get measured. */
#include "alloc.h"
#include "catalog.h"
#include "cli.h"
#include "listing.h"
#include "params.h"
#include "run_main.h"
#include "runner.h"

#include <stdio.h>
#include <stdlib.h>

enum { EXIT_OK = 0, EXIT_WORKLOAD_FAILED = 1, EXIT_BAD_INPUT = 2 };
enum { MAIN_ERROR_MAX = 4096 };

static int bad_input(const char *message)
{
    fprintf(stderr, "heaplab-run: %s\n", message);
    return EXIT_BAD_INPUT;
}

int heaplab_run_main(int argc, char **argv)
{
    char err[MAIN_ERROR_MAX];
    cli_options opt;
    if (cli_parse(argc, argv, &opt, err, sizeof err) != 0)
        return bad_input(err);
    if (opt.mode == CLI_HELP) {
        cli_usage(stdout);
        return EXIT_OK;
    }
    const char *dir = opt.workloads_dir ? opt.workloads_dir : catalog_default_dir();
    int dir_required = opt.workloads_dir != NULL;
    if (opt.mode == CLI_LIST || opt.mode == CLI_LIST_JSON)
        return listing_print(opt.mode == CLI_LIST_JSON, dir, dir_required, argv);

    static alloc_table table;
    if (alloc_table_prepare(opt.alloc, err, sizeof err, argv) != 0 ||
        alloc_table_open(opt.alloc, &table, err, sizeof err, argv) != 0)
        return bad_input(err);

    static workload w;
    if (catalog_select(opt.workload, dir, dir_required, &w, err, sizeof err) != 0)
        return bad_input(err);
    long long values[WL_MAX_PARAMS];
    if (params_resolve(&w, opt.quick, opt.params, opt.param_count, values, err, sizeof err) !=
        0)
        return bad_input(err);
    int threads = opt.threads ? opt.threads : (w.default_threads > 0 ? w.default_threads : 1);

    static runner r;
    if (runner_init(&r, &table, &w, catalog_kind(&w), threads, opt.seed, values,
                    params_count(&w), err, sizeof err) != 0) {
        fprintf(stderr, "heaplab-run: %s\n", err);
        return EXIT_WORKLOAD_FAILED;
    }
    int rc = runner_run(&r);
    report_print(&r);
    return rc == 0 ? EXIT_OK : EXIT_WORKLOAD_FAILED;
}
