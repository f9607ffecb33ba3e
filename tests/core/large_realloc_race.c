/* heaplab core test: threads growing (and shrinking) large blocks with
 * realloc at the same time.
 *
 * Each thread repeatedly allocates 1-4 MiB, writes its first and last byte,
 * reallocs it to about twice the size (a move of its pages to a fresh
 * mapping when the addresses above are taken), checks both bytes, and frees
 * an older block from a small ring of live ones. A second phase also shrinks
 * the grown blocks (in place, and below the large threshold). While one
 * thread moves a mapping, another may map a block of its own in the range
 * the move just released: the registry entry of that range must then
 * describe the new block, or its later free aborts as "invalid pointer".
 *
 * The race is a short window, so the whole set runs for ROUNDS rounds, each
 * in a fresh child process (a fresh address space layout); an abort or a
 * wrong byte in any round fails the test, and the parent names the round. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heaplab.h"
#include "testutil.h"

#define MiB ((size_t)1 << 20)
#define ROUNDS 20
/* per thread and phase. ThreadSanitizer makes every mapping of a large
 * block cost about 30 times more (it resets the shadow of the range): its
 * build looks for data races with fewer iterations, within the time of the
 * others. */
#if defined(__SANITIZE_THREAD__)
#define ITERATIONS 40
#else
#define ITERATIONS 400
#endif
#define RING 4         /* live blocks each thread keeps */
#define MAX_PHASE_THREADS 4
/* A hang detector for one round, not a performance limit: the round is
 * killed (SIGALRM) only when its workers made no progress at all for this
 * long. A fixed limit per round fired on a CPU starved by other work
 * (three rounds of twenty beside a full test run at nice 19) where no
 * thread hung. */
#define ROUND_ALARM_S 60

enum round_status { ROUND_OK = 0, ROUND_NULL = 2, ROUND_BYTES = 3, ROUND_CHECK = 4, ROUND_LIVE = 5 };

static _Atomic int round_status;
/* worker iterations finished in this round's process */
static _Atomic unsigned long progress;

static void on_alarm(int sig)
{
    static unsigned long seen;
    unsigned long now = atomic_load_explicit(&progress, memory_order_relaxed);
    if (now != seen) {
        seen = now;
        alarm(ROUND_ALARM_S);
        return;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

struct block {
    unsigned char *p;
    size_t size;
    unsigned char mark;
};

static void note(enum round_status s)
{
    int expected = ROUND_OK;
    atomic_compare_exchange_strong(&round_status, &expected, (int)s);
}

static void mark_ends(struct block *b)
{
    b->p[0] = b->mark;
    b->p[b->size - 1] = (unsigned char)~b->mark;
}

static int ends_intact(const struct block *b, size_t size)
{
    return b->p[0] == b->mark && b->p[size - 1] == (unsigned char)~b->mark;
}

static void retire(struct block *b)
{
    if (!b->p)
        return;
    if (!ends_intact(b, b->size))
        note(ROUND_BYTES);
    hl_free(b->p);
    b->p = NULL;
}

struct worker_arg {
    uint64_t seed;
    int shrink;
};

static void *worker(void *argp)
{
    const struct worker_arg *arg = argp;
    uint64_t rng = arg->seed;
    struct block ring[RING] = {{0}};
    for (unsigned i = 0; i < ITERATIONS; i++) {
        uint64_t r = tu_rand(&rng);
        struct block b = {.size = MiB + (size_t)(r % (3 * MiB)), .mark = (unsigned char)(r >> 56 | 1)};
        b.p = hl_malloc(b.size);
        if (!b.p) {
            note(ROUND_NULL);
            break;
        }
        mark_ends(&b);
        /* about twice the size: past what the mapping can hold */
        size_t grown = 2 * b.size + (size_t)(r >> 8) % (64 * 1024);
        unsigned char *q = hl_realloc(b.p, grown);
        if (!q) {
            note(ROUND_NULL);
            hl_free(b.p);
            break;
        }
        b.p = q;
        if (!ends_intact(&b, b.size))
            note(ROUND_BYTES);
        b.size = grown;
        mark_ends(&b);
        if (arg->shrink) {
            /* every other block shrinks: to a quarter (still large, in place)
             * or, now and then, to a medium size (a copy) */
            size_t smaller = r % 8 == 0 ? 300 * 1024 + (size_t)(r >> 16) % (64 * 1024) : b.size / 4;
            if (r % 2 == 0) {
                unsigned char first = b.p[0];
                q = hl_realloc(b.p, smaller);
                if (!q) {
                    note(ROUND_NULL);
                    hl_free(b.p);
                    break;
                }
                b.p = q;
                if (b.p[0] != first)
                    note(ROUND_BYTES);
                b.size = smaller;
                mark_ends(&b);
            }
        }
        retire(&ring[i % RING]);
        ring[i % RING] = b;
        atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
    }
    for (unsigned k = 0; k < RING; k++)
        retire(&ring[k]);
    return NULL;
}

/* `threads` workers at once; each has its own seed */
static void phase(unsigned threads, int shrink, uint64_t seed)
{
    pthread_t t[MAX_PHASE_THREADS];
    struct worker_arg args[MAX_PHASE_THREADS];
    for (unsigned i = 0; i < threads; i++) {
        args[i] = (struct worker_arg){.seed = seed * 0x9E3779B97F4A7C15ULL + i + 1, .shrink = shrink};
        pthread_create(&t[i], NULL, worker, &args[i]);
    }
    for (unsigned i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
}

/* one round in a fresh child: grow at 2 then 4 threads, then grow and
 * shrink at 2 and 4; the exit status says what went wrong */
static int round_child(unsigned round)
{
    signal(SIGALRM, on_alarm);
    alarm(ROUND_ALARM_S);
    static const unsigned thread_counts[] = {2, MAX_PHASE_THREADS};
    for (int shrink = 0; shrink <= 1; shrink++)
        for (unsigned k = 0; k < 2; k++)
            phase(thread_counts[k], shrink, (uint64_t)round * 4 + (unsigned)shrink * 2 + k + 1);
    if (atomic_load(&round_status) != ROUND_OK)
        return atomic_load(&round_status);
    if (hl_check() != 0)
        return ROUND_CHECK;
    hl_stats_t s;
    hl_stats(&s);
    return s.live == 0 ? ROUND_OK : ROUND_LIVE;
}

int main(void)
{
    int aborted = 0, wrong = 0;
    for (unsigned round = 0; round < ROUNDS; round++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
            _exit(round_child(round));
        int status = -1;
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status)) {
            printf("round %u: killed by signal %d\n", round, WTERMSIG(status));
            aborted++;
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != ROUND_OK) {
            printf("round %u: exit status %d (2 NULL, 3 bytes lost, 4 hl_check, 5 blocks left)\n", round,
                   WEXITSTATUS(status));
            wrong++;
        }
    }
    printf("%d of %d rounds aborted, %d ended wrong\n", aborted, ROUNDS, wrong);
    CHECK("threads growing large blocks with realloc never abort a correct program (20 rounds, 2 and 4 threads)",
          aborted == 0);
    CHECK("grown and shrunk large blocks keep their first and last bytes; heap consistent after", wrong == 0);
    return tu_finish();
}
