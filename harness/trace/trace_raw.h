/* The raw file the recording library writes while a program runs, one per
 * process: chunks of fixed-size records, appended with write(2) as each
 * thread's buffer fills, at thread exit and at process exit. The packer
 * (trace_pack.c) turns a raw file into a trace (docs/trace-format.md).
 *
 * A chunk is written with one write(2), so chunks of different threads
 * never interleave inside each other; a chunk cut short by a crash is
 * recognised by its length and dropped. */
#ifndef HEAPLAB_TRACE_RAW_H
#define HEAPLAB_TRACE_RAW_H

#include <stdint.h>

#define TRACE_RAW_MAGIC 0x43524c48u /* "HLRC" little-endian */

/* The operations, as recorded and as stored in a trace. */
typedef enum trace_op {
    TRACE_MALLOC = 1,
    TRACE_CALLOC = 2,       /* aux = element count, size = element size */
    TRACE_REALLOC = 3,      /* old = block given, id = block returned */
    TRACE_FREE = 4,
    TRACE_FREE_SIZED = 5,   /* free_sized, free_aligned_sized: size given */
    TRACE_ALIGNED = 6,      /* align_log2 set; aux = which call (trace_aligned_call) */
    TRACE_USABLE_SIZE = 7,  /* malloc_usable_size(old) */
    TRACE_OP_LIMIT = 8
} trace_op;

typedef enum trace_aligned_call {
    TRACE_CALL_ALIGNED_ALLOC = 0,
    TRACE_CALL_POSIX_MEMALIGN = 1,
    TRACE_CALL_MEMALIGN = 2,
    TRACE_CALL_VALLOC = 3,
    TRACE_CALL_PVALLOC = 4
} trace_aligned_call;

/* One call. Ids number blocks in allocation order from 1 across the whole
 * process; 0 means "none": a NULL result, a NULL argument, or a block the
 * recorder never saw allocated (allocated before it started). */
typedef struct trace_raw_event {
    uint64_t t_us;      /* microseconds since the recorder started */
    uint64_t size;      /* bytes asked for (calloc: per element) */
    uint64_t id;        /* block returned */
    uint64_t old;       /* block given (free, realloc, usable size) */
    uint32_t aux;       /* calloc: element count (saturated); aligned: call */
    uint8_t op;         /* trace_op */
    uint8_t align_log2; /* aligned family: log2 of the alignment */
    uint16_t pad;
} trace_raw_event;
_Static_assert(sizeof(trace_raw_event) == 40, "raw event layout is part of the raw format");

typedef struct trace_raw_chunk {
    uint32_t magic;     /* TRACE_RAW_MAGIC */
    uint32_t thread;    /* recorder's thread number, 0 = first thread seen */
    uint32_t count;     /* events that follow */
    uint32_t seq;       /* chunk number within the thread, from 0 */
} trace_raw_chunk;
_Static_assert(sizeof(trace_raw_chunk) == 16, "raw chunk layout is part of the raw format");

/* Environment variable naming the folder raw files go to; the recorder
 * does nothing when it is unset. Files are named PID.raw (PID.N.raw after
 * an exec that kept the pid). */
#define TRACE_RAW_DIR_ENV "HEAPLAB_TRACE_DIR"

#endif
