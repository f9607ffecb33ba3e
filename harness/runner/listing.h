/* --list and --list-json: the allocators (available or why not) and the
 * workloads (built-in, scripts, broken scripts). */
#ifndef HEAPLAB_LISTING_H
#define HEAPLAB_LISTING_H

/* Prints the listing on stdout. `as_json` selects "heaplab.list/1".
 * argv is passed on to allocator loading, which may re-execute the runner.
 * Returns the exit status. */
int listing_print(int as_json, const char *workloads_dir, int dir_required, char **argv);

#endif
