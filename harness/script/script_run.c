/* The interpreter for heap scripts (phases of alloc/free/...).
 *
 * Every thread runs all phases on its own live set, inside one
 * wl_run_threads call, so a thread keeps its allocator state (thread caches,
 * heaps) from phase to phase and a free is cross-thread only where the script
 * says `handoff`. Phases end together: a barrier, then thread 0 reports the
 * phase (wl_phase) while the others wait at the next phase's start.
 *
 * The interpreter's own memory (thread states, live rings) is mapped from the
 * system and pre-faulted before the first phase; only the script's blocks
 * come from ctx->a.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "script_live.h"

enum { CACHE_LINE = 64 };

/* The countdown to the next sample when there is none: every operation
 * pays the same decrement whether the script samples or not, so sampling
 * changes no instruction of the measured loop. */
static const long long NOT_SAMPLING = LLONG_MAX;

/* Mixes the script's seed, the run's --seed and the thread index into one
 * generator seed, so each thread has its own stream and --seed varies them. */
static const uint64_t SEED_MIX_RUN = 0x9E3779B97F4A7C15ULL;   /* 2^64 / golden ratio */
static const int SEED_THREAD_SHIFT = 32;

typedef struct thread_state {
    _Alignas(CACHE_LINE) live_set live;
    wl_rng rng;
    long long run_ops;          /* operations so far, all phases */
    /* allocator calls so far (a pair or a churn step is two): added once per
     * operation line after its loop, so the loops pay nothing for it */
    long long calls;
    long long phase_ops;        /* operations in the current phase */
    long long sample_every;     /* 0: not sampling */
    long long until_sample;     /* NOT_SAMPLING when not sampling */
    uint64_t trim_ns;           /* time spent in the trim hook */
    /* What the sampling thread reads of the others (published at ticks). */
    _Atomic long long pub_ops;
    _Atomic size_t pub_bytes;
} thread_state;

typedef struct run_state {
    wl_ctx *ctx;
    const alloc_table *a;
    sc_script *s;
    int nthreads;
    thread_state *ts;           /* nthreads entries, mapped */
    size_t ts_bytes;
    pthread_barrier_t barrier;
    atomic_int failed;
    uint64_t timed_ns;          /* sum of the phases' wall time (thread 0) */
    long long total_ops;
    atomic_int noted_trim, noted_flush;
} run_state;

/* Reports the first failure only; the other threads see `failed` and skip
 * their remaining work but still meet every barrier, so nobody hangs. */
static void fail_op(run_state *rs, const sc_op *op, const char *what, size_t size)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&rs->failed, &expected, 1))
        return;
    wl_fail(rs->ctx, "%s:%d: %s of %zu bytes returned NULL", rs->s->path, op->line, what, size);
}

static void touch(void *p, size_t n, sc_touch mode)
{
    switch (mode) {
    case TOUCH_NONE:
        return;
    case TOUCH_FIRST:
        *(volatile char *)p = 1;
        return;
    case TOUCH_PAGES:
        wl_touch(p, n, 0);
        return;
    case TOUCH_ALL:
        wl_touch(p, n, 1);
        return;
    }
}

static void sample_tick(run_state *rs, thread_state *t, int index)
{
    t->until_sample = t->sample_every;
    atomic_store_explicit(&t->pub_ops, t->run_ops, memory_order_relaxed);
    atomic_store_explicit(&t->pub_bytes, t->live.bytes, memory_order_relaxed);
    if (index != 0)
        return;
    long long ops = 0;
    size_t bytes = 0;
    for (int i = 0; i < rs->nthreads; i++) {
        ops += atomic_load_explicit(&rs->ts[i].pub_ops, memory_order_relaxed);
        bytes += atomic_load_explicit(&rs->ts[i].pub_bytes, memory_order_relaxed);
    }
    wl_sample(rs->ctx, ops, bytes);
}

/* Allocator calls of a pair or a churn step: a free and an allocation. */
enum { CALLS_PER_PAIR = 2 };

/* Counts one operation; samples every `sample_every` of them. */
static inline void count_op(run_state *rs, thread_state *t, int index)
{
    t->run_ops++;
    t->phase_ops++;
    if (--t->until_sample == 0)
        sample_tick(rs, t, index);
}

/* One block from the allocator, or NULL after reporting the failure. */
static void *new_block(run_state *rs, thread_state *t, const sc_op *op, size_t *size_out)
{
    size_t size = sc_dist_draw(&op->size, &t->rng);
    void *p;
    if (op->align.val) {
        /* C11 wants the size a multiple of the alignment. */
        size_t align = (size_t)op->align.val;
        size = (size + align - 1) & ~(align - 1);
        p = rs->a->aligned_alloc(align, size);
    } else {
        p = rs->a->malloc(size);
    }
    if (!p) {
        fail_op(rs, op, op->align.val ? "aligned_alloc" : "malloc", size);
        return NULL;
    }
    touch(p, size, op->touch);
    *size_out = size;
    return p;
}

static void op_alloc(run_state *rs, thread_state *t, int index, const sc_op *op, long long n)
{
    for (long long i = 0; i < n; i++) {
        size_t size;
        void *p = new_block(rs, t, op, &size);
        if (!p)
            return;
        live_push(&t->live, p, size);
        count_op(rs, t, index);
    }
    t->calls += n;
}

/* Frees n blocks taking every other one, oldest first, and closes the gaps
 * so the survivors keep their age order; when one pass over the set frees
 * too few, the next pass works on what is left. */
static void op_free_alternate(run_state *rs, thread_state *t, int index, long long n)
{
    live_set *ls = &t->live;
    long long freed = 0;
    while (freed < n) {
        long long total = ls->count, kept = 0;
        for (long long r = 0; r < total; r++) {
            live_block b = *live_at(ls, r);
            if (r % 2 == 0 && freed < n) {
                rs->a->free(b.p);
                ls->bytes -= b.size;
                freed++;
                count_op(rs, t, index);
            } else {
                *live_at(ls, kept++) = b;
            }
        }
        ls->count = kept;
    }
    t->calls += n;
}

static void op_free(run_state *rs, thread_state *t, int index, const sc_op *op, long long n)
{
    if (op->order == ORDER_ALTERNATE) {
        op_free_alternate(rs, t, index, n);
        return;
    }
    for (long long i = 0; i < n; i++) {
        live_block b = live_take(&t->live, op->order, wl_rng_next(&t->rng));
        rs->a->free(b.p);
        count_op(rs, t, index);
    }
    t->calls += n;
}

static void op_realloc(run_state *rs, thread_state *t, int index, const sc_op *op, long long n)
{
    for (long long i = 0; i < n; i++) {
        live_set *ls = &t->live;
        unsigned long long pick = wl_rng_next(&t->rng) % (unsigned long long)ls->count;
        live_block *b = live_at(ls, (long long)pick);
        size_t size = sc_dist_draw(&op->size, &t->rng);
        void *q = rs->a->realloc(b->p, size);
        if (!q) {
            /* the old block is still live and still ours */
            fail_op(rs, op, "realloc", size);
            return;
        }
        touch(q, size, op->touch);
        ls->bytes = ls->bytes - b->size + size;
        b->p = q;
        b->size = size;
        count_op(rs, t, index);
    }
    t->calls += n;
}

static void op_pairs(run_state *rs, thread_state *t, int index, const sc_op *op, long long n)
{
    for (long long i = 0; i < n; i++) {
        size_t size;
        void *p = new_block(rs, t, op, &size);
        if (!p)
            return;
        rs->a->free(p);
        count_op(rs, t, index);
    }
    t->calls += CALLS_PER_PAIR * n;
}

static void call_trim(run_state *rs, thread_state *t, const sc_op *op)
{
    if (!rs->a->trim) {
        if (!atomic_exchange(&rs->noted_trim, 1))
            fprintf(stderr, "note: %s:%d: allocator '%s' has no trim hook: trim is n/a\n",
                    rs->s->path, op->line, rs->a->name);
        return;
    }
    uint64_t t0 = wl_now_ns();
    rs->a->trim();
    t->trim_ns += wl_now_ns() - t0;
}

static void op_churn(run_state *rs, thread_state *t, int index, const sc_op *op, long long n)
{
    /* live=L first tops the set up to L blocks; those allocations count. */
    if (op->has_live && t->live.count < op->live.val)
        op_alloc(rs, t, index, op, op->live.val - t->live.count);
    long long trim_every = op->trim_every.val;
    for (long long i = 0; i < n && !atomic_load_explicit(&rs->failed, memory_order_relaxed); i++) {
        live_block b = live_take(&t->live, op->order, wl_rng_next(&t->rng));
        rs->a->free(b.p);
        size_t size;
        void *p = new_block(rs, t, op, &size);
        if (!p)
            return;
        live_push(&t->live, p, size);
        count_op(rs, t, index);
        if (trim_every && (i + 1) % trim_every == 0)
            call_trim(rs, t, op);
    }
    t->calls += CALLS_PER_PAIR * n;
}

/* Thread i frees the blocks of thread i-1 (the last thread's go to thread
 * 0): every free is cross-thread. Barriers before and after, so no thread
 * touches a set while its neighbour empties it. */
static void op_handoff(run_state *rs, thread_state *t, int index)
{
    pthread_barrier_wait(&rs->barrier);
    if (!atomic_load(&rs->failed)) {
        live_set *from = &rs->ts[(index + rs->nthreads - 1) % rs->nthreads].live;
        t->calls += from->count;
        while (from->count > 0) {
            live_block b = live_take(from, ORDER_FIFO, 0);
            rs->a->free(b.p);
            count_op(rs, t, index);
        }
    }
    pthread_barrier_wait(&rs->barrier);
}

static void run_ops(run_state *rs, thread_state *t, int index, const sc_op *ops, int n);

static void run_op(run_state *rs, thread_state *t, int index, const sc_op *op)
{
    if (op->kind == OP_HANDOFF) {
        op_handoff(rs, t, index);
        return;
    }
    /* After a failure, work is skipped but repeats still run their rounds:
     * a handoff inside one is a barrier every thread must reach. */
    if (op->kind != OP_REPEAT && atomic_load_explicit(&rs->failed, memory_order_relaxed))
        return;
    long long n = sc_op_count(op, t->live.count);
    switch (op->kind) {
    case OP_ALLOC: op_alloc(rs, t, index, op, n); return;
    case OP_FREE: op_free(rs, t, index, op, n); return;
    case OP_REALLOC: op_realloc(rs, t, index, op, n); return;
    case OP_PAIRS: op_pairs(rs, t, index, op, n); return;
    case OP_CHURN: op_churn(rs, t, index, op, n); return;
    case OP_TRIM: call_trim(rs, t, op); return;
    case OP_FLUSH:
        if (rs->a->thread_flush)
            rs->a->thread_flush();
        else if (!atomic_exchange(&rs->noted_flush, 1))
            fprintf(stderr, "note: %s:%d: allocator '%s' has no thread_flush hook: flush is n/a\n",
                    rs->s->path, op->line, rs->a->name);
        return;
    case OP_SAMPLE:
        t->sample_every = op->count.val;
        t->until_sample = op->count.val ? op->count.val : NOT_SAMPLING;
        return;
    case OP_REPEAT:
        for (long long r = 0; r < op->count.val; r++)
            run_ops(rs, t, index, op + 1, op->body);
        return;
    case OP_HANDOFF:
        return;
    }
}

/* Runs ops[0..n); a repeat runs its body and the walk skips past it. */
static void run_ops(run_state *rs, thread_state *t, int index, const sc_op *ops, int n)
{
    for (int i = 0; i < n; i++) {
        run_op(rs, t, index, &ops[i]);
        if (ops[i].kind == OP_REPEAT)
            i += ops[i].body;
    }
}

static void thread_main(wl_ctx *ctx, int index, void *arg)
{
    run_state *rs = arg;
    thread_state *t = &rs->ts[index];
    (void)ctx;
    for (int p = 0; p < rs->s->nphases; p++) {
        const sc_phase *ph = &rs->s->phases[p];
        pthread_barrier_wait(&rs->barrier);
        uint64_t t0 = wl_now_ns();
        uint64_t untimed0 = wl_untimed_ns(rs->ctx);
        t->phase_ops = 0;
        run_ops(rs, t, index, ph->ops, ph->nops);
        pthread_barrier_wait(&rs->barrier);
        if (index != 0 || atomic_load(&rs->failed))
            continue;
        /* The others wait at the next phase's start barrier meanwhile. */
        /* sampling (thread 0's) is the harness's time, not the script's */
        rs->timed_ns += wl_now_ns() - t0 - (wl_untimed_ns(rs->ctx) - untimed0);
        long long ops = 0;
        size_t live = 0;
        for (int i = 0; i < rs->nthreads; i++) {
            ops += rs->ts[i].phase_ops;
            live += rs->ts[i].live.bytes;
        }
        rs->total_ops += ops;
        wl_phase(rs->ctx, ph->name, ops, live);
    }
}

static int map_threads(run_state *rs, long long max_live)
{
    rs->ts_bytes = (size_t)rs->nthreads * sizeof(thread_state);
    void *m = mmap(NULL, rs->ts_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        wl_fail(rs->ctx, "%s: cannot map the interpreter's thread states", rs->s->path);
        return -1;
    }
    rs->ts = m;
    for (int i = 0; i < rs->nthreads; i++) {
        thread_state *t = &rs->ts[i];
        uint64_t seed = (uint64_t)rs->s->seed ^ (rs->ctx->seed * SEED_MIX_RUN) ^
                        ((uint64_t)i << SEED_THREAD_SHIFT);
        wl_rng_seed(&t->rng, seed);
        t->until_sample = NOT_SAMPLING;
        if (live_map(&t->live, max_live) < 0) {
            wl_fail(rs->ctx, "%s: cannot map room for %lld live blocks per thread", rs->s->path,
                    max_live);
            return -1;
        }
    }
    return 0;
}

/* Frees whatever is still live (not timed, after the last phase); returns
 * the allocator calls of the whole run: the threads' and these frees. */
static long long unmap_threads(run_state *rs)
{
    if (!rs->ts)
        return 0;
    long long calls = 0;
    for (int i = 0; i < rs->nthreads; i++) {
        live_set *ls = &rs->ts[i].live;
        calls += rs->ts[i].calls;
        while (ls->ring && ls->count > 0) {
            rs->a->free(live_take(ls, ORDER_LIFO, 0).p);
            calls++;
        }
        live_unmap(ls);
    }
    munmap(rs->ts, rs->ts_bytes);
    return calls;
}

static void report(run_state *rs)
{
    enum { NS_PER_US = 1000 };
    wl_ctx *ctx = rs->ctx;
    double ops = (double)rs->total_ops;
    double ns = (double)rs->timed_ns;
    wl_metric(ctx, "ns_per_op", ns / ops, "ns", "lower");
    /* ops per microsecond = millions of ops per second */
    wl_metric(ctx, "mops_per_s", ops / ns * NS_PER_US, "Mops/s", "higher");
    uint64_t trim_ns = 0;
    for (int i = 0; i < rs->nthreads; i++)
        trim_ns += rs->ts[i].trim_ns;
    if (rs->a->trim && trim_ns)
        wl_metric(ctx, "trim_ns", (double)trim_ns, "ns", "lower");
}

int sc_run_heap(wl_ctx *ctx)
{
    sc_script *s = ctx->w->data;
    long long pv[WL_MAX_PARAMS], max_live, calls;
    char err[SC_ERR_MAX];
    for (int i = 0; i < s->nparams; i++)
        pv[i] = wl_param(ctx, s->param_name[i]);
    /* --param values can break what the defaults allowed: check again. */
    if (sc_check_counts(s, pv, &max_live, err, sizeof err) < 0) {
        wl_fail(ctx, "%s", err);
        return -1;
    }
    run_state rs;
    memset(&rs, 0, sizeof rs);
    rs.ctx = ctx;
    rs.a = ctx->a;
    rs.s = s;
    rs.nthreads = ctx->threads > 0 ? ctx->threads : 1;
    int rc = -1;
    if (map_threads(&rs, max_live) < 0)
        goto out;
    if (pthread_barrier_init(&rs.barrier, NULL, (unsigned)rs.nthreads) != 0) {
        wl_fail(ctx, "%s: cannot create a barrier for %d threads", s->path, rs.nthreads);
        goto out;
    }
    wl_run_threads(ctx, rs.nthreads, 0, thread_main, &rs);
    pthread_barrier_destroy(&rs.barrier);
    if (atomic_load(&rs.failed))
        goto out;
    if (rs.total_ops == 0) {
        wl_fail(ctx, "%s: the script did no counted operations (all counts are 0?)", s->path);
        goto out;
    }
    report(&rs);
    rc = 0;
out:
    /* the frees of what is still live are calls of this run too */
    calls = unmap_threads(&rs);
    if (rc == 0)
        wl_operations(ctx, calls);
    return rc;
}
