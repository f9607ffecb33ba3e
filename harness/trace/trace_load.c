/* Loading a trace: see trace_format.h. Every check names the file and,
 * for a truncated or corrupt one, the byte offset where it goes wrong.
 * The decoded trace lives in one anonymous mapping, touched here, so the
 * replay faults nothing of its own in and the measured allocator never
 * holds any of it. */
#include "trace_format.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zstd.h>

static int fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
    int n = snprintf(err, errlen, "%s: ", path);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < errlen)
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static uint64_t get_le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static int slurp(const char *path, unsigned char **data, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(err, errlen, path, "cannot open trace: %s", strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return fail(err, errlen, path, "cannot read trace: not a regular file");
    }
    long size = ftell(f);
    rewind(f);
    if (size < 0) {
        fclose(f);
        return fail(err, errlen, path, "cannot read trace: not a regular file");
    }
    *data = malloc((size_t)size + 1);
    if (!*data || fread(*data, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(*data);
        return fail(err, errlen, path, "cannot read trace: %s", strerror(errno));
    }
    fclose(f);
    *len = (size_t)size;
    return 0;
}

static size_t round_up(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* Decodes one stream's events; `at` is the offset in the body. */
static int decode_stream(const uint8_t *b, size_t len, size_t *at, trace_ev *ev, uint64_t n,
                         uint64_t blocks, const char *path, char *err, size_t errlen)
{
    uint64_t last = 0;
    for (uint64_t i = 0; i < n; i++) {
        size_t start = *at;
        if (*at >= len)
            return fail(err, errlen, path, "corrupt trace: body ends at offset %zu inside a stream",
                        start);
        uint8_t head = b[(*at)++];
        unsigned op = head & TRACE_OP_MASK;
        if (op == 0 || (op != TRACE_ALIGNED && head >> TRACE_OP_BITS))
            return fail(err, errlen, path, "corrupt trace: bad event byte 0x%02x at body offset %zu",
                        head, start);
        uint64_t align = 0, old = 0, count = 0, size = 0, id = 0, dt;
        int bad = 0;
        if (op == TRACE_ALIGNED || op == TRACE_FREE_SIZED) {
            if (*at >= len)
                bad = 1;
            else
                align = b[(*at)++];
        }
        int named = trace_op_names_block(op), allocating = trace_op_allocates(op);
        if (!bad && named) {
            bad = trace_get_varint(b, len, at, &old) != 0;
            if (!bad && old)
                old = (uint64_t)((int64_t)last - trace_unzigzag(old - 1));
        }
        if (!bad && op == TRACE_CALLOC)
            bad = trace_get_varint(b, len, at, &count) != 0;
        if (!bad && op != TRACE_FREE)
            bad = trace_get_varint(b, len, at, &size) != 0;
        if (!bad && allocating) {
            bad = trace_get_varint(b, len, at, &id) != 0;
            if (id)
                last = id = last + id;
        }
        if (!bad)
            bad = trace_get_varint(b, len, at, &dt) != 0;
        if (bad || old > blocks || id > blocks || align > 63 || size > TRACE_EV_SIZE_MASK ||
            count > UINT32_MAX)
            return fail(err, errlen, path, "corrupt trace: bad event at body offset %zu", start);
        ev[i].word = size | (uint64_t)(op & TRACE_OP_MASK) << 48 | align << 56;
        ev[i].id = (uint32_t)id;
        ev[i].old = (uint32_t)(op == TRACE_CALLOC ? count : old);
    }
    return 0;
}

/* Walks the schedule: checks that every block is allocated once, before
 * any mention of it, and freed at most once; marks the events that must
 * wait for another thread; counts. */
static int walk_schedule(trace *t, const char *path, char *err, size_t errlen)
{
    uint16_t *owner = calloc(t->blocks + 1, sizeof *owner);
    uint8_t *state = calloc(t->blocks + 1, 1); /* 0 unseen, 1 live, 2 freed */
    uint64_t *pos = calloc((size_t)t->streams, sizeof *pos);
    uint64_t *bytes = calloc(t->blocks + 1, sizeof *bytes);
    uint64_t live = 0;
    if (!owner || !state || !pos || !bytes) {
        free(bytes);
        free(owner);
        free(state);
        free(pos);
        return fail(err, errlen, path, "out of memory while checking the trace");
    }
    int rc = 0;
    for (uint64_t r = 0; r < t->schedule_len && rc == 0; r++) {
        uint32_t th = t->schedule[r].thread;
        for (uint32_t k = 0; k < t->schedule[r].length && rc == 0; k++) {
            trace_ev *e = &t->stream[th][pos[th]++];
            unsigned op = trace_ev_op(e);
            t->counts[op]++;
            t->calls += (uint64_t)trace_ev_calls(e);
            int named = trace_op_names_block(op);
            if (named && e->old) {
                if (state[e->old] != 1) {
                    rc = fail(err, errlen, path,
                              "corrupt trace: block %u is named before it is allocated or after "
                              "it is freed (stream %u, event %llu)",
                              e->old, th, (unsigned long long)pos[th] - 1);
                    break;
                }
                if (owner[e->old] != th) {
                    e->word |= TRACE_EV_WAIT;
                    t->cross_thread += op != TRACE_USABLE_SIZE;
                }
                if (op != TRACE_USABLE_SIZE && (op != TRACE_REALLOC || e->id || !trace_ev_size(e))) {
                    state[e->old] = 2;
                    live -= bytes[e->old];
                }
            } else if (named && op != TRACE_USABLE_SIZE && !(op == TRACE_REALLOC && !e->old)) {
                t->skipped++;
            }
            if (e->id) {
                if (state[e->id] != 0) {
                    rc = fail(err, errlen, path, "corrupt trace: block %u allocated twice", e->id);
                    break;
                }
                state[e->id] = 1;
                owner[e->id] = (uint16_t)th;
                bytes[e->id] = trace_ev_size(e) * (op == TRACE_CALLOC ? e->old : 1);
                live += bytes[e->id];
                if (live > t->peak_live)
                    t->peak_live = live;
            }
        }
    }
    for (int s = 0; s < t->streams && rc == 0; s++)
        if (pos[s] != t->stream_len[s])
            rc = fail(err, errlen, path,
                      "corrupt trace: the schedule covers %llu of stream %d's %llu events",
                      (unsigned long long)pos[s], s, (unsigned long long)t->stream_len[s]);
    free(bytes);
    free(owner);
    free(state);
    free(pos);
    return rc;
}

static int decode_body(trace *t, const uint8_t *b, size_t len, const char *path, char *err,
                       size_t errlen)
{
    size_t at = 0;
    uint64_t streams, blocks, runs;
    if (trace_get_varint(b, len, &at, &streams) || trace_get_varint(b, len, &at, &blocks) ||
        trace_get_varint(b, len, &at, &runs))
        return fail(err, errlen, path, "corrupt trace: body too short for its counts");
    if (streams < 1 || streams > TRACE_MAX_STREAMS || blocks > UINT32_MAX || runs > len)
        return fail(err, errlen, path, "corrupt trace: %llu streams, %llu blocks, %llu runs",
                    (unsigned long long)streams, (unsigned long long)blocks,
                    (unsigned long long)runs);
    /* each event takes at least two bytes, so len bounds the event count */
    uint64_t max_ops = len;
    size_t bytes = round_up(streams * sizeof(trace_ev *)) + round_up(streams * sizeof(uint64_t)) +
                   round_up(runs * sizeof(trace_run)) + round_up(max_ops * sizeof(trace_ev)) +
                   round_up((blocks + 1) * sizeof(trace_slot));
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return fail(err, errlen, path, "cannot map %zu bytes for the trace: %s", bytes,
                    strerror(errno));
    t->mapping = m;
    t->mapping_bytes = bytes;
    char *p = m;
    t->stream = (trace_ev **)p;
    p += round_up(streams * sizeof(trace_ev *));
    t->stream_len = (uint64_t *)p;
    p += round_up(streams * sizeof(uint64_t));
    t->schedule = (trace_run *)p;
    p += round_up(runs * sizeof(trace_run));
    t->slots = (trace_slot *)p;
    p += round_up((blocks + 1) * sizeof(trace_slot));
    trace_ev *ev = (trace_ev *)p;
    t->streams = (int)streams;
    t->blocks = blocks;
    t->schedule_len = runs;
    uint64_t scheduled = 0;
    for (uint64_t r = 0; r < runs; r++) {
        uint64_t th, n;
        if (trace_get_varint(b, len, &at, &th) || trace_get_varint(b, len, &at, &n) ||
            th >= streams || n == 0 || n > UINT32_MAX)
            return fail(err, errlen, path, "corrupt trace: bad schedule run at body offset %zu",
                        at);
        t->schedule[r] = (trace_run){(uint32_t)th, (uint32_t)n};
        scheduled += n;
    }
    uint64_t used = 0;
    for (uint64_t s = 0; s < streams; s++) {
        uint64_t n;
        if (trace_get_varint(b, len, &at, &n) || n > max_ops - used)
            return fail(err, errlen, path, "corrupt trace: bad stream length at body offset %zu",
                        at);
        t->stream[s] = ev + used;
        t->stream_len[s] = n;
        if (decode_stream(b, len, &at, ev + used, n, blocks, path, err, errlen) != 0)
            return -1;
        used += n;
    }
    if (at != len)
        return fail(err, errlen, path, "corrupt trace: %zu bytes after the last stream",
                    len - at);
    if (used != scheduled)
        return fail(err, errlen, path,
                    "corrupt trace: the schedule orders %llu events, the streams hold %llu",
                    (unsigned long long)scheduled, (unsigned long long)used);
    t->ops = used;
    /* fault the slots in now, not in the replay */
    memset(t->slots, 0, (blocks + 1) * sizeof(trace_slot));
    return walk_schedule(t, path, err, errlen);
}

int trace_open(const char *path, trace *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    unsigned char *data = NULL;
    size_t len = 0;
    if (slurp(path, &data, &len, err, errlen) != 0)
        return -1;
    int rc = -1;
    void *body = NULL;
    size_t body_len = 0;
    if (len < TRACE_PREFIX_BYTES || memcmp(data, TRACE_MAGIC, TRACE_MAGIC_BYTES) != 0) {
        if (len >= TRACE_MAGIC_BYTES && memcmp(data, TRACE_MAGIC, TRACE_MAGIC_BYTES) == 0)
            fail(err, errlen, path, "truncated trace: %zu bytes, the header starts at offset %d",
                 len, TRACE_PREFIX_BYTES);
        else
            fail(err, errlen, path, "not a heaplab trace (no \"HLTRACE\" magic at offset 0)");
        goto out;
    }
    uint64_t version = get_le(data + 8, 4), header_len = get_le(data + 12, 4);
    if (version != TRACE_VERSION) {
        fail(err, errlen, path, "trace format version %llu at offset 8; this runner reads version %d",
             (unsigned long long)version, TRACE_VERSION);
        goto out;
    }
    if (header_len > TRACE_MAX_HEADER ||
        len < TRACE_PREFIX_BYTES + header_len + TRACE_LENGTHS_BYTES) {
        fail(err, errlen, path, "truncated trace: %zu bytes, the header says it ends at offset %llu",
             len, (unsigned long long)(TRACE_PREFIX_BYTES + header_len + TRACE_LENGTHS_BYTES));
        goto out;
    }
    size_t lengths_at = TRACE_PREFIX_BYTES + header_len;
    uint64_t raw_len = get_le(data + lengths_at, 8), z_len = get_le(data + lengths_at + 8, 8);
    size_t z_at = lengths_at + TRACE_LENGTHS_BYTES;
    if (z_len != len - z_at) {
        fail(err, errlen, path, "%s trace: the body at offset %zu should be %llu bytes, the file has %zu",
             z_len > len - z_at ? "truncated" : "corrupt", z_at, (unsigned long long)z_len,
             len - z_at);
        goto out;
    }
    if (raw_len > ((uint64_t)1 << 40)) {
        fail(err, errlen, path, "corrupt trace: body size %llu at offset %zu",
             (unsigned long long)raw_len, lengths_at);
        goto out;
    }
    body_len = (size_t)raw_len;
    body = malloc(body_len ? body_len : 1);
    if (!body) {
        fail(err, errlen, path, "out of memory for a %zu-byte body", body_len);
        goto out;
    }
    size_t got = ZSTD_decompress(body, body_len, data + z_at, (size_t)z_len);
    if (ZSTD_isError(got) || got != body_len) {
        fail(err, errlen, path, "corrupt trace: compressed body at offset %zu: %s", z_at,
             ZSTD_isError(got) ? ZSTD_getErrorName(got) : "shorter than the header says");
        goto out;
    }
    t->path = strdup(path);
    t->header_json = strndup((const char *)data + TRACE_PREFIX_BYTES, (size_t)header_len);
    if (!t->path || !t->header_json) {
        fail(err, errlen, path, "out of memory");
        goto out;
    }
    rc = decode_body(t, body, body_len, path, err, errlen);
out:
    free(body);
    free(data);
    if (rc != 0)
        trace_close(t);
    return rc;
}

void trace_close(trace *t)
{
    if (t->mapping)
        munmap(t->mapping, t->mapping_bytes);
    free(t->path);
    free(t->header_json);
    memset(t, 0, sizeof *t);
}
