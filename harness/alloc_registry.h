/* The allocators the runner knows by name, for --list and error messages.
 * Opening one is alloc_table_open() (alloc_table.h). */
#ifndef HEAPLAB_ALLOC_REGISTRY_H
#define HEAPLAB_ALLOC_REGISTRY_H

/* Named allocators in display order: "system", "heaplab", "heaplab-nocache",
 * "mimalloc", "jemalloc", "tcmalloc", "floor" (so:PATH[:PREFIX] is a
 * pattern, not a name). */
enum { ALLOC_KNOWN_MAX = 16 }; /* room callers may reserve for them */
extern const char *const alloc_known_names[];
extern const int alloc_known_count;

/* 1 when a run that names no allocator includes `name`; 0 for baselines
 * ("floor") that only make sense for some workloads and are run when named. */
int alloc_runs_by_default(const char *name);

/* The pattern shown after the names in messages. */
#define ALLOC_SO_PATTERN "so:PATH[:PREFIX]"

#endif
