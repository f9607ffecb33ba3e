/* heaplab-gbench: the allocator microbenchmarks of bench_*.c, run by Google
 * Benchmark, on one allocator per process:
 *
 *     heaplab-gbench [--alloc NAME] [--benchmark_filter=...] [...]
 *
 * One allocator per process, because allocators are process-wide state:
 * the adapters keep their library's functions in file-scope statics,
 * "heaplab" and "heaplab-nocache" flip one switch of the same core (opening
 * the second turns the first one's thread caches off), jemalloc may make the
 * process re-execute itself, and whatever one allocator keeps mapped would
 * shape the next one's figures. `run.py gbench` runs one process per
 * allocator and puts their reports side by side. */
#include "alloc.h"
#include "benches.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGRAM "heaplab-gbench"
#define ALLOC_FLAG "--alloc"
#define DEFAULT_ALLOC "system"

enum { ERROR_MAX = 1024 };
/* Exit status for a command line that cannot be run, as heaplab-run uses. */
enum { EXIT_USAGE = 2 };

static void print_help(void)
{
    printf("usage: %s [%s NAME] [Google Benchmark flags]\n"
           "  %s NAME  the allocator to measure, one per process (default %s):\n"
           "              ",
           PROGRAM, ALLOC_FLAG, ALLOC_FLAG, DEFAULT_ALLOC);
    for (int i = 0; i < alloc_family_count; i++)
        printf("%s, ", alloc_families[i].name);
    printf("%s\n"
           "  An allocator that cannot be loaded still lists its benchmarks, each\n"
           "  failing with the reason (e.g. which Debian package to install).\n\n",
           ALLOC_SO_PATTERN);
}

/* Takes "--alloc NAME" / "--alloc=NAME" out of argv into *rest (argc kept in
 * *rest_argc, NULL-terminated), leaving every other argument for Google
 * Benchmark. Returns the name (DEFAULT_ALLOC without the flag) or NULL after
 * printing what is wrong. */
static const char *take_alloc_flag(int argc, char **argv, int *rest_argc, char **rest)
{
    const char *name = DEFAULT_ALLOC;
    const size_t flag_len = strlen(ALLOC_FLAG);
    int n = 0;
    rest[n++] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, ALLOC_FLAG) == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s: %s needs an allocator name\n", PROGRAM, ALLOC_FLAG);
                return NULL;
            }
            name = argv[++i];
        } else if (strncmp(arg, ALLOC_FLAG "=", flag_len + 1) == 0) {
            name = arg + flag_len + 1;
        } else {
            rest[n++] = argv[i];
        }
    }
    rest[n] = NULL;
    *rest_argc = n;
    if (!name[0]) {
        fprintf(stderr, "%s: %s needs an allocator name\n", PROGRAM, ALLOC_FLAG);
        return NULL;
    }
    return name;
}

static void add_allocator_context(const gbench_alloc *a)
{
    gb_add_context("heaplab_allocator", a->name);
    if (a->table) {
        gb_add_context("heaplab_allocator_version", a->table->version);
        gb_add_context("heaplab_allocator_library", a->table->library);
    } else {
        gb_add_context("heaplab_allocator_error", a->error);
    }
}

int main(int argc, char **argv)
{
    /* argv itself stays untouched: opening jemalloc may re-execute the
     * process with it, and Google Benchmark reorders the array it gets */
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    if (!rest) {
        fprintf(stderr, "%s: out of memory\n", PROGRAM);
        return EXIT_FAILURE;
    }
    int rest_argc = 0;
    const char *name = take_alloc_flag(argc, argv, &rest_argc, rest);
    if (!name) {
        free(rest);
        return EXIT_USAGE;
    }

    /* first thing after the command line, so a re-execution repeats nothing */
    static alloc_table table;
    static char error[ERROR_MAX];
    gbench_alloc a = {name, NULL, ""};
    if (alloc_table_prepare(name, error, sizeof error, argv) == 0 &&
        alloc_table_open(name, &table, error, sizeof error, argv) == 0) {
        a.table = &table;
    } else if (!alloc_names_an_allocator(name)) {
        fprintf(stderr, "%s: %s\n", PROGRAM, error);
        free(rest);
        return EXIT_USAGE;
    } else {
        a.error = error; /* every benchmark will report it */
    }

    gb_initialize(&rest_argc, rest, print_help);
    if (gb_report_unrecognized(rest_argc, rest)) {
        free(rest);
        return EXIT_USAGE;
    }
    add_allocator_context(&a);

    gbench_register_pair(&a);
    gbench_register_batch(&a);
    gbench_register_realloc(&a);
    gbench_register_aligned(&a);
    gbench_register_calloc(&a);

    gb_run_specified();
    gb_shutdown();
    free(rest);
    return EXIT_SUCCESS;
}
