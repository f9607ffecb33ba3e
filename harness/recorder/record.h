/* The recording library (libheaplab-record.so), preloaded into a program
 * by `run.py record`: every allocation call goes on to the real allocator
 * and is logged into a per-thread buffer, written to a raw file
 * (trace/trace_raw.h) without allocating. Parts:
 *   record.c      the interposed entry points, start-up (dlsym), fork
 *   record_ids.c  address -> block id, so a free names its allocation
 *   record_out.c  per-thread buffers and the raw file */
#ifndef HEAPLAB_RECORD_H
#define HEAPLAB_RECORD_H

#include <pthread.h>
#include <stdint.h>

#include "trace_raw.h"

/* Block ids. rec_ids_add gives p the next id (0 when the map cannot grow);
 * rec_ids_take returns p's id, or 0 for a block never seen, and forgets it
 * when `remove`; rec_ids_restore puts back an id taken by a realloc that
 * failed. Safe from any thread. */
void rec_ids_init(void);
uint64_t rec_ids_add(const void *p);
uint64_t rec_ids_take(const void *p, int remove);
void rec_ids_restore(const void *p, uint64_t id);
void rec_ids_lock_all(void);   /* around fork */
void rec_ids_unlock_all(void);

/* Output. rec_out_init takes the raw folder (NULL: record nothing). */
int rec_out_init(const char *dir);
void rec_out_event(const trace_raw_event *e);
void rec_out_flush_all(void);  /* process exit */
void rec_out_fork_prepare(void);
void rec_out_fork_parent(void);
void rec_out_fork_child(void);

#endif
