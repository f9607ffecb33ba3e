/* The packer: see trace_pack.h and docs/trace-format.md.
 *
 * 1. read a raw file's chunks, per thread in file order (a thread writes
 *    its chunks one after another); a chunk cut short ends the file;
 * 2. merge the threads into one order: by timestamp, but an event that
 *    names a block is held back until that block's allocation is placed,
 *    so the order never frees a block before it exists;
 * 3. renumber the blocks densely in that order; a free of a block the
 *    recording never saw allocated keeps id 0 (counted as skipped);
 * 4. encode the streams as varints and compress them with zstd. */
#include "trace_pack.h"
#include "env_info.h"
#include "json_writer.h"
#include "trace_format.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

enum { ERR_LINE = 512, MAX_VARINTS_PER_EVENT = 7, VARINT_MAX = 10 };

typedef struct raw_thread {
    trace_raw_event *ev;
    uint64_t n, cap;
    uint64_t head; /* merge position */
} raw_thread;

typedef struct raw_process {
    char name[256];
    raw_thread *threads;
    int thread_count;
    uint64_t events;
    int truncated;
} raw_process;

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fputs("heaplab-trace: out of memory\n", stderr);
        exit(EXIT_FAILURE);
    }
    return q;
}

static int read_file(const char *path, unsigned char **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 1 << 20, n = 0;
    unsigned char *buf = xrealloc(NULL, cap);
    for (size_t got; (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap)
            buf = xrealloc(buf, cap *= 2);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return -1;
    }
    *data = buf;
    *len = n;
    return 0;
}

static raw_thread *thread_of(raw_process *p, uint32_t number)
{
    if (number >= (uint32_t)p->thread_count) {
        p->threads = xrealloc(p->threads, (number + 1) * sizeof *p->threads);
        memset(p->threads + p->thread_count, 0,
               (number + 1 - (uint32_t)p->thread_count) * sizeof *p->threads);
        p->thread_count = (int)number + 1;
    }
    return &p->threads[number];
}

static int load_raw(const char *path, raw_process *p, char *err, size_t errlen)
{
    unsigned char *data;
    size_t len;
    if (read_file(path, &data, &len) != 0) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    size_t at = 0;
    while (at < len) {
        trace_raw_chunk c;
        if (len - at < sizeof c) {
            p->truncated = 1;
            break;
        }
        memcpy(&c, data + at, sizeof c);
        size_t body = (size_t)c.count * sizeof(trace_raw_event);
        if (c.magic != TRACE_RAW_MAGIC || c.thread >= TRACE_MAX_STREAMS ||
            len - at - sizeof c < body) {
            p->truncated = 1; /* a crash cut the last chunk short */
            break;
        }
        raw_thread *t = thread_of(p, c.thread);
        if (t->n + c.count > t->cap) {
            t->cap = (t->n + c.count) * 2;
            t->ev = xrealloc(t->ev, t->cap * sizeof *t->ev);
        }
        memcpy(t->ev + t->n, data + at + sizeof c, body);
        t->n += c.count;
        p->events += c.count;
        at += sizeof c + body;
    }
    free(data);
    return 0;
}

static void free_process(raw_process *p)
{
    for (int i = 0; i < p->thread_count; i++)
        free(p->threads[i].ev);
    free(p->threads);
    memset(p, 0, sizeof *p);
}

/* What the merge needs per raw id: 0 = never allocated in this trace,
 * 1 = allocated later, 2 = placed (its new number in renum). */
typedef struct id_map {
    uint8_t *state;
    uint32_t *renum;
    uint64_t limit;
} id_map;

static int ready(const trace_raw_event *e, const id_map *m)
{
    return !trace_op_names_block(e->op) || e->old == 0 || e->old >= m->limit ||
           m->state[e->old] != 1;
}

/* The packed body, grown as events are encoded. */
typedef struct out_buf {
    uint8_t *p;
    size_t n, cap;
} out_buf;

static void put(out_buf *o, uint64_t v)
{
    if (o->n + VARINT_MAX > o->cap)
        o->p = xrealloc(o->p, o->cap = (o->cap + VARINT_MAX) * 2);
    o->n += trace_put_varint(o->p + o->n, v);
}

static void put_byte(out_buf *o, uint8_t b)
{
    put(o, 0); /* makes room */
    o->p[o->n - 1] = b;
}

typedef struct stream_state {
    out_buf out;
    uint64_t last_id;
    uint64_t last_t;
    uint64_t count;
} stream_state;

/* One event: the event byte (operation, and for the aligned family the
 * call), the alignment's log2 (aligned family, sized frees), the block
 * named (old: 0, or 1 + zigzag(last id - old)), the size (calloc: count,
 * then element size; a plain free has none), the block returned (0, or
 * id - last id) and the microseconds since the stream's previous event. */
static void encode_event(stream_state *s, const trace_raw_event *e, uint64_t old, uint64_t id)
{
    unsigned op = e->op;
    put_byte(&s->out, (uint8_t)(op | (op == TRACE_ALIGNED ? (e->aux & 7u) << TRACE_OP_BITS : 0)));
    if (op == TRACE_ALIGNED || op == TRACE_FREE_SIZED)
        put_byte(&s->out, e->align_log2);
    if (trace_op_names_block(op))
        put(&s->out, old ? 1 + trace_zigzag((int64_t)s->last_id - (int64_t)old) : 0);
    if (op == TRACE_CALLOC)
        put(&s->out, e->aux);
    if (op != TRACE_FREE)
        put(&s->out, e->size);
    if (trace_op_allocates(op)) {
        put(&s->out, id ? id - s->last_id : 0);
        if (id)
            s->last_id = id;
    }
    put(&s->out, e->t_us >= s->last_t ? e->t_us - s->last_t : 0);
    if (e->t_us > s->last_t)
        s->last_t = e->t_us;
    s->count++;
}

typedef struct pack_counts {
    uint64_t ops, per_op[TRACE_OP_LIMIT], skipped, failed, cross_thread, blocks;
    uint64_t live, peak_live, allocated_bytes, duration_us;
} pack_counts;

/* Merges, renumbers and encodes process p into body `o`. */
static void pack_process(raw_process *p, out_buf *body, pack_counts *c)
{
    uint64_t limit = 1;
    for (int t = 0; t < p->thread_count; t++)
        for (uint64_t i = 0; i < p->threads[t].n; i++) {
            const trace_raw_event *e = &p->threads[t].ev[i];
            if (e->id >= limit)
                limit = e->id + 1;
        }
    id_map m = {calloc(limit, 1), calloc(limit, sizeof(uint32_t)), limit};
    uint16_t *owner = calloc(limit, sizeof *owner);
    uint64_t *size_of = calloc(limit, sizeof *size_of);
    if (!m.state || !m.renum || !owner || !size_of) {
        fputs("heaplab-trace: out of memory\n", stderr);
        exit(EXIT_FAILURE);
    }
    for (int t = 0; t < p->thread_count; t++)
        for (uint64_t i = 0; i < p->threads[t].n; i++) {
            const trace_raw_event *e = &p->threads[t].ev[i];
            if (trace_op_allocates(e->op) && e->id)
                m.state[e->id] = 1;
        }

    int streams = p->thread_count;
    stream_state *ss = calloc((size_t)streams + 1, sizeof *ss);
    out_buf sched = {0};
    uint64_t runs = 0, next_number = 1;
    int run_thread = -1;
    uint64_t run_len = 0;
    for (;;) {
        /* the ready head with the earliest time; if none is ready (the
         * clock disagrees with the order of a hand-off), the earliest head */
        int best = -1, any = -1;
        for (int t = 0; t < streams; t++) {
            raw_thread *th = &p->threads[t];
            if (th->head >= th->n)
                continue;
            const trace_raw_event *e = &th->ev[th->head];
            if (any < 0 || e->t_us < p->threads[any].ev[p->threads[any].head].t_us)
                any = t;
            if (ready(e, &m) &&
                (best < 0 || e->t_us < p->threads[best].ev[p->threads[best].head].t_us))
                best = t;
        }
        if (any < 0)
            break;
        if (best < 0)
            best = any;
        raw_thread *th = &p->threads[best];
        const trace_raw_event *e = &th->ev[th->head++];
        uint64_t old = 0, id = 0;
        if (trace_op_names_block(e->op) && e->old && e->old < limit && m.state[e->old] == 2)
            old = m.renum[e->old];
        if (trace_op_allocates(e->op) && e->id && e->id < limit && m.state[e->id] == 1) {
            id = next_number++;
            m.renum[e->id] = (uint32_t)id;
            m.state[e->id] = 2;
            owner[id] = (uint16_t)best;
        }
        /* a block named after it was freed is not live any more */
        /* a realloc that failed left its block where it was */
        int frees = e->op == TRACE_FREE || e->op == TRACE_FREE_SIZED ||
                    (e->op == TRACE_REALLOC && (e->id || e->size == 0));
        if (trace_op_names_block(e->op) && e->old && !old)
            c->skipped += e->op != TRACE_USABLE_SIZE;
        if (frees && old) {
            c->live -= size_of[old];
            if (owner[old] != best)
                c->cross_thread++;
            m.state[e->old] = 3; /* freed: a later mention is of a block never seen */
        }
        if (trace_op_allocates(e->op) && !e->id && !(e->op == TRACE_REALLOC && e->size == 0))
            c->failed++;
        if (id) {
            uint64_t bytes = e->op == TRACE_CALLOC ? e->size * e->aux : e->size;
            size_of[id] = bytes;
            c->live += bytes;
            c->allocated_bytes += bytes;
            if (c->live > c->peak_live)
                c->peak_live = c->live;
        }
        if (e->t_us > c->duration_us)
            c->duration_us = e->t_us;
        encode_event(&ss[best], e, old, id);
        c->ops++;
        c->per_op[e->op < TRACE_OP_LIMIT ? e->op : 0]++;
        if (best == run_thread) {
            run_len++;
        } else {
            if (run_thread >= 0) {
                put(&sched, (uint64_t)run_thread);
                put(&sched, run_len);
                runs++;
            }
            run_thread = best;
            run_len = 1;
        }
    }
    if (run_thread >= 0) {
        put(&sched, (uint64_t)run_thread);
        put(&sched, run_len);
        runs++;
    }
    c->blocks = next_number - 1;
    put(body, (uint64_t)streams);
    put(body, c->blocks);
    put(body, runs);
    for (size_t i = 0; i < sched.n; i++)
        put_byte(body, sched.p[i]);
    for (int t = 0; t < streams; t++) {
        put(body, ss[t].count);
        for (size_t i = 0; i < ss[t].out.n; i++)
            put_byte(body, ss[t].out.p[i]);
        free(ss[t].out.p);
    }
    free(ss);
    free(sched.p);
    free(m.state);
    free(m.renum);
    free(owner);
    free(size_of);
}

static void write_header(FILE *f, int argc, char **command, const raw_process *main_p,
                         const pack_counts *c, const raw_process *others, int other_count)
{
    json_writer j;
    json_init(&j, f);
    json_object_begin(&j);
    json_kv_string(&j, "format", "heaplab.trace");
    json_kv_int(&j, "version", TRACE_VERSION);
    json_key(&j, "command");
    json_array_begin(&j);
    for (int i = 0; i < argc; i++)
        json_string(&j, command[i]);
    json_array_end(&j);
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    json_kv_string(&j, "recorded_utc", when);
    env_info_write(&j);
    json_kv_string(&j, "process", main_p->name);
    json_kv_bool(&j, "truncated", main_p->truncated);
    json_key(&j, "counts");
    json_object_begin(&j);
    json_kv_uint(&j, "ops", c->ops);
    for (int op = 1; op < TRACE_OP_LIMIT; op++)
        json_kv_uint(&j, trace_op_name((unsigned)op), c->per_op[op]);
    json_kv_uint(&j, "blocks", c->blocks);
    json_kv_uint(&j, "skipped_frees", c->skipped);
    json_kv_uint(&j, "failed", c->failed);
    json_kv_uint(&j, "cross_thread_frees", c->cross_thread);
    json_object_end(&j);
    json_kv_uint(&j, "peak_live_bytes", c->peak_live);
    json_kv_uint(&j, "allocated_bytes", c->allocated_bytes);
    json_kv_uint(&j, "duration_us", c->duration_us);
    json_key(&j, "streams");
    json_array_begin(&j);
    for (int t = 0; t < main_p->thread_count; t++)
        json_uint(&j, main_p->threads[t].n);
    json_array_end(&j);
    json_key(&j, "dropped_processes");
    json_array_begin(&j);
    for (int i = 0; i < other_count; i++) {
        json_object_begin(&j);
        json_kv_string(&j, "process", others[i].name);
        json_kv_uint(&j, "ops", others[i].events);
        json_object_end(&j);
    }
    json_array_end(&j);
    json_object_end(&j);
}

static void put_le(unsigned char *dst, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        dst[i] = (unsigned char)(v >> (8 * i));
}

static int write_trace(const char *out, const char *header, size_t header_len,
                       const out_buf *body, int level, char *err, size_t errlen)
{
    size_t bound = ZSTD_compressBound(body->n);
    unsigned char *z = xrealloc(NULL, bound);
    ZSTD_CCtx *cx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cx, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(cx, ZSTD_c_checksumFlag, 1);
    size_t zn = ZSTD_compress2(cx, z, bound, body->p, body->n);
    ZSTD_freeCCtx(cx);
    if (ZSTD_isError(zn)) {
        snprintf(err, errlen, "zstd: %s", ZSTD_getErrorName(zn));
        free(z);
        return -1;
    }
    /* written beside and renamed, so a failed pack never leaves half a trace */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.partial", out);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot create: %s", tmp, strerror(errno));
        free(z);
        return -1;
    }
    unsigned char prefix[TRACE_PREFIX_BYTES], lengths[TRACE_LENGTHS_BYTES];
    memcpy(prefix, TRACE_MAGIC, TRACE_MAGIC_BYTES);
    put_le(prefix + 8, TRACE_VERSION, 4);
    put_le(prefix + 12, header_len, 4);
    put_le(lengths, body->n, 8);
    put_le(lengths + 8, zn, 8);
    int bad = fwrite(prefix, 1, sizeof prefix, f) != sizeof prefix ||
              fwrite(header, 1, header_len, f) != header_len ||
              fwrite(lengths, 1, sizeof lengths, f) != sizeof lengths ||
              fwrite(z, 1, zn, f) != zn;
    bad |= fclose(f) != 0;
    free(z);
    if (bad || rename(tmp, out) != 0) {
        snprintf(err, errlen, "%s: cannot write: %s", out, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

int trace_pack(const char *raw_dir, const char *out, int argc, char **command, int level,
               char *err, size_t errlen)
{
    DIR *d = opendir(raw_dir);
    if (!d) {
        snprintf(err, errlen, "%s: cannot open: %s", raw_dir, strerror(errno));
        return -1;
    }
    raw_process *procs = NULL;
    int count = 0, rc = 0;
    for (struct dirent *e; (e = readdir(d)) && rc == 0;) {
        if (e->d_name[0] == '.' || !ends_with(e->d_name, ".raw"))
            continue;
        procs = xrealloc(procs, (size_t)(count + 1) * sizeof *procs);
        memset(&procs[count], 0, sizeof procs[count]);
        snprintf(procs[count].name, sizeof procs[count].name, "%s", e->d_name);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", raw_dir, e->d_name);
        rc = load_raw(path, &procs[count], err, errlen);
        count++;
    }
    closedir(d);
    if (rc == 0 && count == 0) {
        snprintf(err, errlen, "%s: the program made no allocation calls the recorder saw",
                 raw_dir);
        rc = -1;
    }
    if (rc == 0) {
        /* the main trace: most events; ties go to the lower name (the parent) */
        int main_i = 0;
        for (int i = 1; i < count; i++)
            if (procs[i].events > procs[main_i].events ||
                (procs[i].events == procs[main_i].events &&
                 strcmp(procs[i].name, procs[main_i].name) < 0))
                main_i = i;
        raw_process main_p = procs[main_i];
        procs[main_i] = procs[count - 1];
        out_buf body = {0};
        pack_counts c = {0};
        pack_process(&main_p, &body, &c);
        char *header = NULL;
        size_t header_len = 0;
        FILE *mem = open_memstream(&header, &header_len);
        write_header(mem, argc, command, &main_p, &c, procs, count - 1);
        fclose(mem);
        rc = write_trace(out, header, header_len, &body, level, err, errlen);
        free(header);
        free(body.p);
        free_process(&main_p);
        count--;
    }
    for (int i = 0; i < count; i++)
        free_process(&procs[i]);
    free(procs);
    return rc;
}
