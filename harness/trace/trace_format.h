/* The trace file (format "heaplab.trace", version 1; docs/trace-format.md):
 *
 *   offset 0   8 bytes   magic "HLTRACE\n"
 *          8   u32 LE    version (TRACE_VERSION)
 *         12   u32 LE    H, bytes of the JSON header that follows
 *         16   H bytes   header: command, machine, counts (UTF-8 JSON)
 *     16 + H   u64 LE    B, bytes of the body once decompressed
 *     24 + H   u64 LE    Z, bytes of the compressed body
 *     32 + H   Z bytes   the body: one zstd frame with a content checksum
 *                        and the file ends there.
 *
 * The body is LEB128 varints: the stream count T, the block count N and
 * the schedule length R; R runs (thread, length) giving the recorded order across threads;
 * then T streams, each its event count and events (trace_pack.c,
 * encode_event, says how each operation is written). */
#ifndef HEAPLAB_TRACE_FORMAT_H
#define HEAPLAB_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "trace_raw.h"

#define TRACE_MAGIC "HLTRACE\n"
enum {
    TRACE_MAGIC_BYTES = 8,
    TRACE_VERSION = 1,
    TRACE_PREFIX_BYTES = 16,  /* magic, version, H */
    TRACE_LENGTHS_BYTES = 16, /* B, Z */
    TRACE_MAX_HEADER = 1 << 20,
    TRACE_MAX_STREAMS = 1024, /* the runner's thread limit */
};

/* Event byte: the operation in the low 3 bits; for TRACE_ALIGNED the call
 * (trace_aligned_call) in the next 3 bits. */
enum { TRACE_OP_BITS = 3, TRACE_OP_MASK = 7 };

/* A decoded event, as the replay reads it (16 bytes). `word` holds the
 * size in its low 48 bits, the operation in bits 48-54, TRACE_EV_WAIT in
 * bit 55 (the block named by `old` was allocated on another thread: wait
 * until it exists) and log2 of the alignment in bits 56-63. For calloc,
 * `old` is the element count. Block ids are dense, from 1, in recorded
 * order; 0 = none. */
typedef struct trace_ev {
    uint64_t word;
    uint32_t id;
    uint32_t old;
} trace_ev;
_Static_assert(sizeof(trace_ev) == 16, "the replay streams 16-byte events");

#define TRACE_EV_SIZE_MASK ((1ull << 48) - 1)
#define TRACE_EV_WAIT (1ull << 55)
static inline uint64_t trace_ev_size(const trace_ev *e) { return e->word & TRACE_EV_SIZE_MASK; }
static inline unsigned trace_ev_op(const trace_ev *e) { return (unsigned)(e->word >> 48) & 0x7f; }
static inline unsigned trace_ev_align_log2(const trace_ev *e) { return (unsigned)(e->word >> 56); }

/* What an operation does with blocks, and its name in headers, counts and
 * metrics ("malloc", ..., "usable_size"). */
static inline int trace_op_allocates(unsigned op)
{
    return op == TRACE_MALLOC || op == TRACE_CALLOC || op == TRACE_ALIGNED || op == TRACE_REALLOC;
}

static inline int trace_op_names_block(unsigned op)
{
    return op == TRACE_REALLOC || op == TRACE_FREE || op == TRACE_FREE_SIZED ||
           op == TRACE_USABLE_SIZE;
}

static inline const char *trace_op_name(unsigned op)
{
    switch (op) {
    case TRACE_MALLOC: return "malloc";
    case TRACE_CALLOC: return "calloc";
    case TRACE_REALLOC: return "realloc";
    case TRACE_FREE: return "free";
    case TRACE_FREE_SIZED: return "free_sized";
    case TRACE_ALIGNED: return "aligned";
    case TRACE_USABLE_SIZE: return "usable_size";
    default: return "unknown";
    }
}

/* The allocator calls the replay makes for e (trace_replay.c,
 * replay_event): an allocation the program saw succeed (it has an id); a
 * realloc that succeeded, or that freed its block (size 0, no id); a free
 * of a block the recording saw allocated. A usable_size query is not an
 * allocator operation, and an event the replay skips makes no call. */
static inline int trace_ev_calls(const trace_ev *e)
{
    switch (trace_ev_op(e)) {
    case TRACE_MALLOC:
    case TRACE_CALLOC:
    case TRACE_ALIGNED:
        return e->id != 0;
    case TRACE_REALLOC:
        return e->id != 0 || (e->old != 0 && trace_ev_size(e) == 0);
    case TRACE_FREE:
    case TRACE_FREE_SIZED:
        return e->old != 0;
    default:
        return 0;
    }
}

/* One run of the schedule: `length` events of stream `thread`. */
typedef struct trace_run {
    uint32_t thread;
    uint32_t length;
} trace_run;

typedef struct trace_slot {
    _Atomic(void *) p; /* stored by the allocating thread, read by waiters */
    uint64_t size;
} trace_slot;

/* A loaded trace. Every array lives in one mapping (never the measured
 * allocator's memory), released with trace_close(). */
typedef struct trace {
    char *path;
    char *header_json;      /* as stored */
    int streams;
    uint64_t ops;           /* events in all streams */
    uint64_t blocks;        /* highest block id */
    uint64_t counts[TRACE_OP_LIMIT];
    uint64_t skipped;       /* frees of blocks the recording never saw allocated */
    uint64_t cross_thread;  /* frees (and reallocs) of another thread's block */
    uint64_t peak_live;     /* most bytes requested and live at once, in recorded order */
    uint64_t calls;         /* allocator calls a replay makes (trace_ev_calls) */
    trace_ev **stream;      /* stream[t][0 .. stream_len[t]) */
    uint64_t *stream_len;
    trace_run *schedule;
    uint64_t schedule_len;
    /* for the replay, one per block id (index 0 unused): where the block
     * is and what it asked for; zero until the replay runs */
    struct trace_slot *slots;
    void *mapping;
    size_t mapping_bytes;
} trace;

/* Loads and checks a trace. Returns 0, or -1 with one line in err naming
 * the file and what is wrong with it (with the byte offset for a
 * truncated or corrupt file). */
int trace_open(const char *path, trace *t, char *err, size_t errlen);
void trace_close(trace *t);

/* LEB128. trace_get_varint returns 0, or -1 at the end of the buffer or on
 * a varint longer than 10 bytes. */
static inline size_t trace_put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

static inline int trace_get_varint(const uint8_t *buf, size_t len, size_t *at, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (*at >= len)
            return -1;
        uint8_t b = buf[(*at)++];
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return -1;
}

static inline uint64_t trace_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t trace_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

#endif
