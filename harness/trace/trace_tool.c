/* build/heaplab-trace: the trace file's own tool, used by `run.py record`.
 *
 *   heaplab-trace pack RAW_DIR OUT [--level N] -- CMD ARGS...
 *       packs the recorder's raw files into the trace OUT (trace_pack.h)
 *   heaplab-trace check FILE
 *       loads FILE as the runner would and prints what it holds, as JSON
 *
 * Exit status: 0 ok, 2 bad input (one line on stderr naming the problem). */
#include "json_writer.h"
#include "trace_format.h"
#include "trace_pack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_BAD_INPUT = 2, ERR_MAX = 4096, DEFAULT_LEVEL = 9 };

static int usage(void)
{
    fputs("usage: heaplab-trace pack RAW_DIR OUT [--level N] -- CMD ARGS...\n"
          "       heaplab-trace check FILE\n",
          stderr);
    return EXIT_BAD_INPUT;
}

static int bad(const char *err)
{
    fprintf(stderr, "heaplab-trace: %s\n", err);
    return EXIT_BAD_INPUT;
}

static int check(const char *path)
{
    char err[ERR_MAX];
    trace t;
    if (trace_open(path, &t, err, sizeof err) != 0)
        return bad(err);
    json_writer j;
    json_init(&j, stdout);
    json_object_begin(&j);
    json_kv_uint(&j, "ops", t.ops);
    json_kv_int(&j, "streams", t.streams);
    json_kv_uint(&j, "blocks", t.blocks);
    json_key(&j, "counts");
    json_object_begin(&j);
    for (int op = 1; op < TRACE_OP_LIMIT; op++)
        json_kv_uint(&j, trace_op_name((unsigned)op), t.counts[op]);
    json_object_end(&j);
    json_kv_uint(&j, "skipped_frees", t.skipped);
    json_kv_uint(&j, "cross_thread_frees", t.cross_thread);
    json_kv_uint(&j, "peak_live_bytes", t.peak_live);
    json_object_end(&j);
    putchar('\n');
    trace_close(&t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "check") == 0)
        return check(argv[2]);
    if (argc < 5 || strcmp(argv[1], "pack") != 0)
        return usage();
    int level = DEFAULT_LEVEL, i = 4;
    if (i + 1 < argc && strcmp(argv[i], "--level") == 0) {
        level = atoi(argv[i + 1]);
        i += 2;
    }
    if (i >= argc || strcmp(argv[i], "--") != 0)
        return usage();
    char err[ERR_MAX];
    if (trace_pack(argv[2], argv[3], argc - i - 1, argv + i + 1, level, err, sizeof err) != 0)
        return bad(err);
    return 0;
}
