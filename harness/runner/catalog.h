/* Where workloads come from: the built-in table (workloads/builtin.c) and
 * the scripts (*.wl) of a workloads folder, parsed with script_load(). */
#ifndef HEAPLAB_CATALOG_H
#define HEAPLAB_CATALOG_H

#include <stddef.h>

#include "workload.h"

/* A script that did not parse, or whose name is already taken. */
typedef struct catalog_broken {
    char *source;
    char *error; /* "PATH:LINE: what is wrong" */
} catalog_broken;

/* Everything in one folder, sorted by file name. Memory comes from glibc's
 * malloc and is used before any workload runs. */
typedef struct catalog {
    workload *scripts;
    int script_count;
    catalog_broken *broken;
    int broken_count;
} catalog;

/* The folder used when --workloads-dir is not given. */
const char *catalog_default_dir(void);

/* Loads every *.wl in dir. A missing folder is an error only when
 * `required` (the user named it). Returns 0, or -1 with a reason. */
int catalog_scan(catalog *c, const char *dir, int required, char *err, size_t errlen);

/* script_free()s every script but `keep` (may be NULL) and frees the lists. */
void catalog_release(catalog *c, const workload *keep);

/* "builtin", "script" or "program". */
const char *catalog_kind(const workload *w);

/* The built-in workload of that name, or NULL. */
const workload *catalog_builtin(const char *name);

/* Resolves --workload: a .wl path, a built-in, or a script of the folder.
 * On success copies the workload into *out. Returns 0, or -1 with a one-line
 * reason (the script's own PATH:LINE error, or "unknown workload ..."). */
int catalog_select(const char *name, const char *dir, int dir_required, workload *out,
                   char *err, size_t errlen);

#endif
