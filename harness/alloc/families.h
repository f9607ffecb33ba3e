/* Inside harness/alloc/: each family's open (and prepare) function behind
 * the family table (families.c, alloc.h), the dlopen helpers they share
 * (dl.c) and re-executing the runner (reexec.c). Private to this folder.
 *
 * Each family fills an alloc_table or returns -1 with a one-line reason in
 * err. Only one allocator is opened per process (one process per measured
 * cell), so a family may keep the resolved functions of its library in
 * file-scope statics that its small adapter functions call. */
#ifndef HEAPLAB_ALLOC_FAMILIES_H
#define HEAPLAB_ALLOC_FAMILIES_H

#include <stddef.h>

#include "alloc_table.h"

int alloc_open_system(alloc_table *out, char *err, size_t errlen, char **argv);
/* heaplab.c, the one file that sees the core; "heaplab-nocache" has the
 * thread caches off before the workload */
int alloc_open_heaplab(alloc_table *out, char *err, size_t errlen, char **argv);
int alloc_open_heaplab_nocache(alloc_table *out, char *err, size_t errlen, char **argv);
int alloc_open_mimalloc(alloc_table *out, char *err, size_t errlen, char **argv);
/* Re-executes the process with mimalloc preloaded unless it is loaded
 * already (reexec.c says why). 0 when nothing is to be done; returns only
 * on failure otherwise. */
int alloc_prepare_mimalloc(char *err, size_t errlen, char **argv);
int alloc_open_jemalloc(alloc_table *out, char *err, size_t errlen, char **argv);
int alloc_open_tcmalloc(alloc_table *out, char *err, size_t errlen, char **argv);
/* "floor": one block per thread, for measuring the harness's own cost. */
int alloc_open_floor(alloc_table *out, char *err, size_t errlen, char **argv);
/* spec: the whole "[NAME=]so:PATH[:PREFIX]" (alloc.h). */
int alloc_open_so(const char *spec, alloc_table *out, char *err, size_t errlen, char **argv);
/* 1 when spec has the shape "so:..." or "NAME=so:..." with a usable NAME,
 * -1 when it has that shape but NAME cannot be used, 0 otherwise (so.c). */
int alloc_is_so_spec(const char *spec);

/* ---- dlopen helpers (dl.c) ---- */

/* dlopen(path, RTLD_NOW | RTLD_LOCAL): the library's symbols stay out of the
 * global scope, so glibc, the runner and every other library keep using
 * glibc's malloc; only calls made through the table reach the library.
 * A library that needs more static TLS than glibc kept spare (Debian's
 * jemalloc) makes the process re-execute itself with argv and a larger
 * surplus (reexec.c); that happens at most once.
 * On failure writes "LABEL: not installed (apt install PKG)" when the file
 * does not exist and PKG is given, else "LABEL: dlopen failed: ...". */
void *alloc_dl_open(const char *label, const char *path, const char *package,
                    char *err, size_t errlen, char **argv);

/* The address of `name` as defined by the library behind `handle` itself.
 * dlsym(handle, ...) also searches the library's dependencies, so asking a
 * library for "malloc" that does not define it would quietly return glibc's;
 * this refuses that. Returns NULL when the library does not define it. */
void *alloc_dl_own_symbol(void *handle, const char *name);

/* Like alloc_dl_own_symbol, but a missing symbol is an error:
 * "LABEL: PATH does not define 'mi_malloc'". */
void *alloc_dl_need(void *handle, const char *label, const char *name, char *err,
                    size_t errlen);

/* Resolves every symbol of a list with alloc_dl_need, stopping at the first
 * one the library does not define. Returns 0, or -1 with the error. */
typedef struct alloc_dl_symbol {
    const char *name;
    void **slot;
} alloc_dl_symbol;
int alloc_dl_need_all(void *handle, const char *label, const alloc_dl_symbol *list,
                      size_t count, char *err, size_t errlen);

/* The names one library gives the six entries every table has. */
typedef struct alloc_dl_names {
    const char *malloc, *free, *calloc, *realloc, *aligned_alloc, *usable_size;
} alloc_dl_names;

/* Opens the library (alloc_dl_open), resolves the six mandatory entries by
 * `names` into `out`, and sets out->library and out->preload to its path.
 * The aligned entry is taken to have aligned_alloc's (align, size) shape; a
 * library whose entry has another shape wraps it and replaces
 * out->aligned_alloc afterwards (its raw address is in *aligned_sym).
 * Returns the handle, or NULL with a one-line reason in err. */
void *alloc_dl_open_table(const char *label, const char *soname, const char *package,
                          const alloc_dl_names *names, alloc_table *out, void **aligned_sym,
                          char *err, size_t errlen, char **argv);

/* The loaded file's path (from the link map), or "unknown". The string lives
 * as long as the library stays loaded (it is never closed). */
const char *alloc_dl_path(void *handle);

/* ---- re-executing the runner (reexec.c) ---- */

/* Re-executes the runner (the path it was started with) with the same argv
 * and GLIBC_TUNABLES extended by glibc.rtld.optional_static_tls, once
 * (guarded by an environment mark). Returns only on failure, with a
 * one-line reason in err. */
void static_tls_reexec(char **argv, char *err, size_t errlen);

/* Re-executes the runner with the same argv and `path` first in LD_PRELOAD,
 * once (guarded by an environment mark). Returns only on failure, with a
 * one-line reason in err. */
void preload_reexec(const char *path, char **argv, char *err, size_t errlen);

#endif
