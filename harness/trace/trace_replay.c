/* Replaying a trace through the allocator table: see trace_workload.h and
 * docs/trace-format.md ("Replay").
 *
 * Two ways to run the threads. Freely (the default): each recorded thread
 * is a replay thread running its own stream. The streams meet at cuts:
 * phase ends (at fixed fractions of the recorded order, or where a
 * script's phases say) and sample points. At a cut every thread stops
 * exactly where the recorded order puts it, so the blocks live there are
 * the recorded ones; thread 0 then reads RSS. Between cuts a thread waits
 * only when it names a block another thread allocates (TRACE_EV_WAIT): it
 * spins, then yields, until the slot holds the block. The recorded order
 * puts that allocation first, and before the same cut, so no wait can
 * deadlock.
 *
 * In turns (`turns=1`, and always under valgrind): the threads take turns
 * run by run of the recorded order, so the allocator sees the same calls
 * in the same order every time and none at once; valgrind runs one thread
 * at a time anyway, and this is what makes instruction counts of a
 * threaded trace repeat. A thread waits for its turn on a futex of its
 * own, with callgrind's counting off; whoever holds the turn at a cut
 * takes the cut's readings.
 *
 * Bookkeeping (events, slots, cut tables) is in mappings made before the
 * clock starts; the loop calls nothing but the table and wl_touch. */
#include "trace_workload.h"
#include "measure.h"
#include "runner.h"
#include "trace_format.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trace_valgrind.h"

enum { SPINS_BEFORE_YIELD = 64, CACHE_LINE = 64, PHASE_NAME_MAX = 32 };

typedef struct replay_thread {
    uint64_t live;     /* bytes this thread allocated minus what it freed */
    uint64_t peak;     /* peak of live (exact for a single stream) */
    uint64_t pos;      /* next event of the stream */
    uint64_t sink;     /* usable sizes, kept so the calls are not dropped */
    /* in turns: the low 32 bits of the schedule run this thread may start */
    _Atomic uint32_t turn;
    char pad[CACHE_LINE - 4 * sizeof(uint64_t) - sizeof(uint32_t)];
} replay_thread;
_Static_assert(sizeof(replay_thread) == CACHE_LINE, "one replay thread per cache line");

typedef struct replay {
    trace *t;
    const alloc_table *a;
    wl_ctx *ctx;
    wl_touch_mode touch;
    const char *const *names; /* phase names, or NULL for part1, part2, ... */
    int cuts;
    uint64_t *cut_end;   /* cut_end[c * streams + s]: stream s stops before this event */
    uint64_t *cut_ops;   /* events in recorded order up to cut c */
    int *cut_phase;      /* phase number (1-based) ending at cut c, or 0 for a sample */
    replay_thread *th;
    pthread_barrier_t at_cut;
    /* in turns: events done in recorded order, the next cut, the clock */
    uint64_t done;
    int next_cut;
    uint64_t since_ns;
    uint64_t timed_ns;
    long long rss_start, peak_ws;
    size_t books_bytes;
} replay;

static _Noreturn void replay_failed(replay *r, const trace_ev *e, const char *what)
{
    runner_abort(r->ctx->runner, "%s: %s(%llu bytes) returned NULL (block %u)", r->t->path,
                 what, (unsigned long long)trace_ev_size(e), e->id);
}

static void *block_of(replay *r, const trace_ev *e)
{
    trace_slot *s = &r->t->slots[e->old];
    if (!(e->word & TRACE_EV_WAIT))
        return atomic_load_explicit(&s->p, memory_order_relaxed);
    void *p;
    for (int spins = 0; !(p = atomic_load_explicit(&s->p, memory_order_acquire));)
        if (++spins > SPINS_BEFORE_YIELD)
            sched_yield();
    return p;
}

static void placed(replay *r, replay_thread *me, const trace_ev *e, void *p, uint64_t bytes)
{
    wl_touch_block(p, (size_t)bytes, r->touch);
    trace_slot *s = &r->t->slots[e->id];
    s->size = bytes;
    me->live += bytes;
    if (me->live > me->peak)
        me->peak = me->live;
    atomic_store_explicit(&s->p, p, memory_order_release);
}

static void released(replay *r, replay_thread *me, const trace_ev *e)
{
    me->live -= r->t->slots[e->old].size;
}

/* One event. Events whose recorded call returned NULL (no id) are not
 * replayed, nor frees of blocks allocated before the recording began. */
static void replay_event(replay *r, replay_thread *me, const trace_ev *e)
{
    const alloc_table *a = r->a;
    uint64_t size = trace_ev_size(e);
    void *p, *q;
    switch (trace_ev_op(e)) {
    case TRACE_MALLOC:
        if (!e->id)
            return;
        if (!(p = a->malloc(size)) && size)
            replay_failed(r, e, "malloc");
        placed(r, me, e, p, size);
        return;
    case TRACE_CALLOC:
        if (!e->id)
            return;
        if (!(p = a->calloc(e->old, size)) && size && e->old)
            replay_failed(r, e, "calloc");
        placed(r, me, e, p, size * e->old);
        return;
    case TRACE_ALIGNED:
        if (!e->id)
            return;
        if (!(p = a->aligned_alloc((size_t)1 << trace_ev_align_log2(e), size)) && size)
            replay_failed(r, e, "aligned_alloc");
        placed(r, me, e, p, size);
        return;
    case TRACE_REALLOC:
        q = e->old ? block_of(r, e) : NULL;
        if (!e->id) {
            /* glibc's realloc(p, 0) frees p; any other NULL was a failure */
            if (q && size == 0) {
                released(r, me, e);
                a->free(q);
            }
            return;
        }
        if (q)
            released(r, me, e);
        if (!(p = a->realloc(q, size)) && size)
            replay_failed(r, e, "realloc");
        placed(r, me, e, p, size);
        return;
    case TRACE_FREE:
        if (!e->old)
            return;
        q = block_of(r, e);
        released(r, me, e);
        a->free(q);
        return;
    case TRACE_FREE_SIZED:
        if (!e->old)
            return;
        q = block_of(r, e);
        released(r, me, e);
        if (a->free_sized)
            a->free_sized(q, size);
        else
            a->free(q);
        return;
    case TRACE_USABLE_SIZE:
        if (e->old)
            me->sink += a->usable_size(block_of(r, e));
        return;
    default:
        return;
    }
}

static uint64_t live_now(const replay *r)
{
    uint64_t live = 0;
    for (int s = 0; s < r->t->streams; s++)
        live += r->th[s].live;
    return live;
}

/* Thread 0, everyone stopped at cut c: the phase or sample of the cut. */
static void at_cut(replay *r, int c)
{
    long long rss = measure_rss_bytes();
    if (rss >= 0 && r->rss_start >= 0 && rss - r->rss_start > r->peak_ws)
        r->peak_ws = rss - r->rss_start;
    if (r->cut_phase[c]) {
        char part[PHASE_NAME_MAX];
        snprintf(part, sizeof part, "part%d", r->cut_phase[c]);
        const char *name = r->names ? r->names[r->cut_phase[c] - 1] : part;
        /* ops of the phase: events since the previous phase end */
        int last_phase = c - 1;
        while (last_phase >= 0 && !r->cut_phase[last_phase])
            last_phase--;
        uint64_t from = last_phase >= 0 ? r->cut_ops[last_phase] : 0;
        wl_phase(r->ctx, name, (long long)(r->cut_ops[c] - from), (size_t)live_now(r));
    } else {
        wl_sample(r->ctx, (long long)r->cut_ops[c], (size_t)live_now(r));
    }
}

static void replay_stream(wl_ctx *ctx, int index, void *arg)
{
    (void)ctx;
    replay *r = arg;
    replay_thread *me = &r->th[index];
    const trace_ev *ev = r->t->stream[index];
    int many = r->t->streams > 1;
    uint64_t start = wl_now_ns();
    for (int c = 0; c < r->cuts; c++) {
        uint64_t end = r->cut_end[(size_t)c * (size_t)r->t->streams + (size_t)index];
        for (; me->pos < end; me->pos++)
            replay_event(r, me, &ev[me->pos]);
        if (many)
            pthread_barrier_wait(&r->at_cut);
        if (index == 0) {
            r->timed_ns += wl_now_ns() - start;
            at_cut(r, c);
        }
        if (many)
            pthread_barrier_wait(&r->at_cut);
        start = wl_now_ns();
    }
}

/* ---- in turns ---- */

enum { NO_TURN = UINT32_MAX };

static void futex_wait(_Atomic uint32_t *word, uint32_t seen)
{
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Waits until run `run` of the schedule is this thread's to do. */
static void wait_turn(replay_thread *me, uint64_t run)
{
    trace_toggle_counting();
    uint32_t want = (uint32_t)run, seen;
    while ((seen = atomic_load_explicit(&me->turn, memory_order_acquire)) != want)
        futex_wait(&me->turn, seen);
    trace_toggle_counting();
}

static void give_turn(replay_thread *th, uint64_t run)
{
    atomic_store_explicit(&th->turn, (uint32_t)run, memory_order_release);
    futex_wake(&th->turn);
}

/* Hands run `run` to its thread; after the last run, "the end" (run
 * schedule_len) to every thread at once. */
static void pass_turn(replay *r, uint64_t run)
{
    trace_toggle_counting();
    if (run < r->t->schedule_len)
        give_turn(&r->th[r->t->schedule[run].thread], run);
    else
        for (int s = 0; s < r->t->streams; s++)
            give_turn(&r->th[s], run);
    trace_toggle_counting();
}

/* The cuts due before the next event (or at the end): their readings. */
static void cuts_due(replay *r)
{
    while (r->next_cut < r->cuts && r->cut_ops[r->next_cut] == r->done) {
        r->timed_ns += wl_now_ns() - r->since_ns;
        at_cut(r, r->next_cut++);
        r->since_ns = wl_now_ns();
    }
}

static void replay_in_turns(wl_ctx *ctx, int index, void *arg)
{
    (void)ctx;
    replay *r = arg;
    const trace *t = r->t;
    replay_thread *me = &r->th[index];
    const trace_ev *ev = t->stream[index];
    if (t->schedule_len == 0 && index == 0) {
        r->since_ns = wl_now_ns();
        cuts_due(r);
    }
    for (uint64_t run = 0; run < t->schedule_len; run++) {
        if (t->schedule[run].thread != (uint32_t)index)
            continue;
        wait_turn(me, run);
        if (run == 0)
            r->since_ns = wl_now_ns();
        for (uint32_t k = 0; k < t->schedule[run].length; k++) {
            cuts_due(r);
            replay_event(r, me, &ev[me->pos++]);
            r->done++;
        }
        if (run + 1 == t->schedule_len)
            cuts_due(r);
        pass_turn(r, run + 1);
    }
    /* no thread ends (and the allocator's thread-exit work starts) before
     * the last call is replayed */
    if (t->schedule_len)
        wait_turn(me, t->schedule_len);
}

static void *map_zeroed(size_t bytes)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memset(p, 0, bytes); /* faulted in before the clock starts */
    return p;
}

/* The cuts: phase ends (ends[k-1], or k/phases of the recorded order) and
 * sample points at j/samples, merged; for each, where every stream stops. */
static int plan_cuts(replay *r, int phases, const uint64_t *ends, int samples)
{
    trace *t = r->t;
    int most = phases + samples;
    size_t streams = (size_t)t->streams;
    size_t bytes = (size_t)most * streams * sizeof(uint64_t) + (size_t)most * sizeof(uint64_t) +
                   (size_t)most * sizeof(int) + streams * sizeof(replay_thread);
    char *m = map_zeroed(bytes);
    if (!m)
        return -1;
    r->books_bytes = bytes;
    r->th = (replay_thread *)m;
    r->cut_end = (uint64_t *)(m + streams * sizeof(replay_thread));
    r->cut_ops = r->cut_end + (size_t)most * streams;
    r->cut_phase = (int *)(r->cut_ops + most);
    int c = 0;
    for (int k = 1, j = 1; k <= phases;) {
        uint64_t at_phase = ends ? ends[k - 1] : t->ops * (uint64_t)k / (uint64_t)phases;
        uint64_t at_sample = j <= samples ? t->ops * (uint64_t)j / (uint64_t)samples : UINT64_MAX;
        if (at_sample < at_phase) {
            r->cut_ops[c++] = at_sample;
            j++;
        } else {
            r->cut_phase[c] = k;
            r->cut_ops[c++] = at_phase;
            k++;
            if (at_sample == at_phase)
                j++;
        }
    }
    r->cuts = c;
    /* walk the schedule once, filling each cut's stream positions */
    uint64_t done = 0;
    uint64_t *now = r->cut_end; /* positions so far, copied at each cut */
    uint64_t run = 0, into = 0;
    uint64_t cur[TRACE_MAX_STREAMS];
    memset(cur, 0, streams * sizeof cur[0]);
    for (int k = 0; k < c; k++) {
        while (done < r->cut_ops[k]) {
            const trace_run *sr = &t->schedule[run];
            uint64_t take = sr->length - into;
            if (take > r->cut_ops[k] - done)
                take = r->cut_ops[k] - done;
            cur[sr->thread] += take;
            into += take;
            done += take;
            if (into == sr->length) {
                run++;
                into = 0;
            }
        }
        memcpy(now + (size_t)k * streams, cur, streams * sizeof cur[0]);
    }
    return 0;
}

/* Resets the process's peak RSS (VmHWM) to its RSS now, so the peak read
 * after the replay is the replay's, not the loading's (Linux: writing 5
 * to clear_refs). Best effort: without it the sampled peak stands. */
static void reset_peak_rss(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return;
    fputs("5", f);
    fclose(f);
}

int trace_workload_replay(wl_ctx *ctx, trace *t, int nphases, const uint64_t *ends,
                          const char *const *names)
{
    replay r;
    memset(&r, 0, sizeof r);
    r.t = t;
    r.a = ctx->a;
    r.ctx = ctx;
    r.touch = wl_touch_param(ctx);
    r.names = names;
    if (plan_cuts(&r, nphases, ends, (int)wl_param(ctx, "samples")) != 0) {
        wl_fail(ctx, "%s: cannot map the replay's bookkeeping", r.t->path);
        return -1;
    }
    memset(r.t->slots, 0, (r.t->blocks + 1) * sizeof(trace_slot));
    int n = r.t->streams;
    int turns = wl_param(ctx, "turns") || trace_under_valgrind();
    for (int s = 0; s < n; s++)
        atomic_store(&r.th[s].turn, NO_TURN);
    if (t->schedule_len)
        atomic_store(&r.th[t->schedule[0].thread].turn, 0);
    if (n > 1 && !turns)
        pthread_barrier_init(&r.at_cut, NULL, (unsigned)n);
    reset_peak_rss();
    r.rss_start = measure_rss_bytes();
    wl_run_threads(ctx, n, 0, turns ? replay_in_turns : replay_stream, &r);
    long long hwm = measure_peak_rss_bytes();
    if (hwm >= 0 && r.rss_start >= 0 && hwm - r.rss_start > r.peak_ws)
        r.peak_ws = hwm - r.rss_start;
    if (n > 1 && !turns)
        pthread_barrier_destroy(&r.at_cut);

    uint64_t replayed = 0;
    for (int s = 0; s < n; s++)
        replayed += r.th[s].pos;
    uint64_t peak_live = n == 1 ? r.th[0].peak : t->peak_live;
    wl_metric(ctx, "ns_per_op", replayed ? (double)r.timed_ns / (double)replayed : 0, "ns",
              "lower");
    wl_metric(ctx, "ops", (double)replayed, "count", "higher");
    for (int op = 1; op < TRACE_OP_LIMIT; op++) {
        char name[32];
        snprintf(name, sizeof name, "%s_count", trace_op_name((unsigned)op));
        wl_metric(ctx, name, (double)t->counts[op], "count", "higher");
    }
    wl_metric(ctx, "skipped_frees", (double)t->skipped, "count", "lower");
    wl_metric(ctx, "threads", n, "count", "higher");
    wl_metric(ctx, "in_turns", turns, "bool", "higher");
    wl_metric(ctx, "peak_live_bytes", (double)peak_live, "bytes", "lower");
    wl_metric(ctx, "peak_ws_bytes", (double)r.peak_ws, "bytes", "lower");
    wl_metric(ctx, "fragmentation", peak_live ? (double)r.peak_ws / (double)peak_live : 0,
              "ratio", "lower");
    wl_frees(ctx, (long long)(t->counts[TRACE_FREE] + t->counts[TRACE_FREE_SIZED] - t->skipped),
             (long long)t->cross_thread);
    wl_operations(ctx, (long long)t->calls);
    munmap(r.th, r.books_bytes);
    return 0;
}

static int trace_run_workload(wl_ctx *ctx)
{
    return trace_workload_replay(ctx, ctx->w->data, (int)wl_param(ctx, "phases"), NULL, NULL);
}

trace *trace_workload_load(const char *path, char *err, size_t errlen)
{
    trace *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    if (trace_open(path, t, err, errlen) != 0) {
        free(t);
        return NULL;
    }
    return t;
}

uint64_t trace_workload_ops(const trace *t) { return t->ops; }

void trace_workload_close(trace *t)
{
    if (!t)
        return;
    trace_close(t);
    free(t);
}

int trace_workload_open(const char *path, workload *out, char *err, size_t errlen)
{
    static trace loaded;
    if (trace_open(path, &loaded, err, errlen) != 0)
        return -1;
    /* "trace-STEM": tables and charts show it; the path is the source */
    static char name[4096 + 8];
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base), suffix = strlen(TRACE_SUFFIX);
    if (len > suffix && strcmp(base + len - suffix, TRACE_SUFFIX) == 0)
        len -= suffix;
    snprintf(name, sizeof name, "trace-%.*s", (int)len, base);
    memset(out, 0, sizeof *out);
    *out = (workload){
        .name = name,
        .group = "trace",
        .describe = "replay of a recorded program's allocation calls",
        .metric = "ns_per_op",
        .unit = "ns",
        .better = "lower",
        .default_threads = 1,
        .threaded = 0,
        .params =
            {
                TRACE_PHASES_PARAM(TRACE_DEFAULT_PHASES),
                TRACE_SAMPLES_PARAM(TRACE_DEFAULT_SAMPLES),
                WL_TOUCH_PARAM(WL_TOUCH_PAGES),
                TRACE_TURNS_PARAM,
                {NULL, 0, 0, 0, 0, NULL, NULL},
            },
        .run = trace_run_workload,
        .source = loaded.path,
        .data = &loaded,
    };
    return 0;
}
