/* heaplab core test: blocks freed on threads other than their owner's.
 * A block of another heap waits in the freeing thread's remote bin and goes
 * home to its heap's store, where the owner's next refill finds it:
 *  - many threads free an owner's blocks while the owner keeps allocating:
 *    the owner's heap does not grow with the blocks it handed out (it gets
 *    its freed blocks back), and hl_check and the stats identity hold;
 *  - the owner exits while other threads still hold its blocks, which they
 *    free afterwards: nothing is lost or freed twice, and the next thread
 *    on that heap gets those blocks;
 *  - a fork while remote frees are in flight leaves a child whose heap is
 *    consistent and that allocates and frees normally. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "heaplab.h"
#include "testutil.h"

#define FREERS 3
#define RING 512         /* blocks in flight from the owner to each freer */
#define HANDED 200000    /* blocks the owner hands out over the first part */
#define SIZE 48

/* one single-producer, single-consumer ring per freer */
struct ring {
    _Atomic size_t head, tail;
    void *slot[RING];
};
static struct ring rings[FREERS];
static atomic_bool owner_done;

static void ring_put(struct ring *r, void *p)
{
    size_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    while (h - atomic_load_explicit(&r->tail, memory_order_acquire) == RING)
        sched_yield();
    r->slot[h % RING] = p;
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
}

static void *ring_take(struct ring *r)
{
    size_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    while (atomic_load_explicit(&r->head, memory_order_acquire) == t) {
        if (atomic_load_explicit(&owner_done, memory_order_acquire) &&
            atomic_load_explicit(&r->head, memory_order_acquire) == t)
            return NULL;
        sched_yield();
    }
    void *p = r->slot[t % RING];
    atomic_store_explicit(&r->tail, t + 1, memory_order_release);
    return p;
}

static void *freer(void *arg)
{
    struct ring *r = arg;
    void *p;
    while ((p = ring_take(r)) != NULL) {
        /* the block holds its own address: nothing wrote into it on the way */
        REQUIRE("a block handed to another thread holds what its owner wrote", *(void **)p == p);
        hl_free(p);
    }
    return NULL;
}

/* distinct 64 KiB pages the owner's blocks came from */
#define PAGE_BITS 16
#define MAX_PAGES 4096
static uintptr_t pages_seen[MAX_PAGES];
static size_t pages_count;

static void note_page(void *p)
{
    uintptr_t page = (uintptr_t)p >> PAGE_BITS;
    for (size_t i = 0; i < pages_count; i++)
        if (pages_seen[i] == page)
            return;
    REQUIRE("the owner's blocks come from a bounded set of pages", pages_count < MAX_PAGES);
    pages_seen[pages_count++] = page;
}

static void *owner(void *arg)
{
    (void)arg;
    for (size_t i = 0; i < HANDED; i++) {
        void *p = hl_malloc(SIZE);
        REQUIRE("malloc on the owner", p != NULL);
        *(void **)p = p;
        note_page(p);
        ring_put(&rings[i % FREERS], p);
    }
    atomic_store_explicit(&owner_done, true, memory_order_release);
    return NULL;
}

static void many_freers(void)
{
    pthread_t o, f[FREERS];
    atomic_store(&owner_done, false);
    for (int i = 0; i < FREERS; i++)
        pthread_create(&f[i], NULL, freer, &rings[i]);
    pthread_create(&o, NULL, owner, NULL);
    pthread_join(o, NULL);
    for (int i = 0; i < FREERS; i++)
        pthread_join(f[i], NULL);
    /* At most FREERS * RING blocks are in the rings, and each freer's
     * remote bin holds fewer than a bin's worth: the owner needs pages for
     * those, not for the HANDED blocks it handed out (HANDED * SIZE bytes
     * would take about 150 pages of 64 KiB). */
    size_t bound = (FREERS * (RING + 256) * SIZE >> PAGE_BITS) + 16;
    printf("     the owner's blocks came from %zu pages of 64 KiB (bound %zu)\n", pages_count, bound);
    CHECK("an owner whose blocks other threads free reuses them: its pages do not grow with what it handed out",
          pages_count <= bound);
    CHECK("hl_check clean after many threads freed an owner's blocks", hl_check() == 0);
    hl_stats_t s;
    hl_stats(&s);
    CHECK("stats balanced after many threads freed an owner's blocks", hl_stats_balanced(&s));
}

/* Part two: the owner exits first. */
#define KEPT 3000
static void *kept[KEPT];
static void *again[KEPT];

static void *owner_that_exits(void *arg)
{
    (void)arg;
    for (size_t i = 0; i < KEPT; i++) {
        kept[i] = hl_malloc(SIZE);
        REQUIRE("malloc on the exiting owner", kept[i] != NULL);
        memset(kept[i], 0x77, SIZE);
    }
    return NULL;
}

static void *heir(void *arg)
{
    (void)arg;
    for (size_t i = 0; i < KEPT; i++) {
        again[i] = hl_malloc(SIZE);
        REQUIRE("malloc on the heir", again[i] != NULL);
    }
    return NULL;
}

static int cmp_ptr(const void *x, const void *y)
{
    uintptr_t a = *(const uintptr_t *)x, b = *(const uintptr_t *)y;
    return (a > b) - (a < b);
}

static void owner_exits_first(void)
{
    pthread_t t;
    pthread_create(&t, NULL, owner_that_exits, NULL);
    pthread_join(t, NULL);
    /* this thread frees all of them after their owner has gone: its remote
     * bin sends them home each time it fills */
    for (size_t i = 0; i < KEPT; i++)
        hl_free(kept[i]);
    CHECK("hl_check clean after a dead owner's blocks were freed", hl_check() == 0);
    hl_stats_t s;
    hl_stats(&s);
    CHECK("stats balanced after a dead owner's blocks were freed", hl_stats_balanced(&s));
    /* the next thread takes the least used heap: the one the owner left */
    pthread_create(&t, NULL, heir, NULL);
    pthread_join(t, NULL);
    qsort(kept, KEPT, sizeof *kept, cmp_ptr);
    size_t found = 0;
    for (size_t i = 0; i < KEPT; i++)
        found += bsearch(&again[i], kept, KEPT, sizeof *kept, cmp_ptr) != NULL;
    printf("     the heir got %zu of the %d blocks its predecessor left\n", found, KEPT);
    /* all but what still waits in this thread's remote bin (under half a
     * bin of 48-byte blocks) */
    CHECK("the next thread on a dead owner's heap gets the blocks others freed for it", found + 128 >= KEPT);
    for (size_t i = 0; i < KEPT; i++)
        hl_free(again[i]);
    CHECK("hl_check clean after the heir freed its blocks", hl_check() == 0);
}

/* Part three: fork while remote frees are in flight. */
static void fork_in_flight(void)
{
    pthread_t o, f[FREERS];
    atomic_store(&owner_done, false);
    for (int i = 0; i < FREERS; i++)
        pthread_create(&f[i], NULL, freer, &rings[i]);
    pthread_create(&o, NULL, owner, NULL);
    int forks = 0, bad_children = 0;
    for (int k = 0; k < 8; k++) {
        usleep(2000);
        pid_t pid = fork();
        if (pid == 0) {
            /* the child: only this thread; the heap must be whole */
            int bad = hl_check();
            void *v[1000];
            for (int i = 0; i < 1000; i++)
                v[i] = hl_malloc(SIZE + (size_t)i % 200);
            for (int i = 0; i < 1000; i++)
                hl_free(v[i]);
            hl_stats_t s;
            hl_stats(&s);
            _exit(bad == 0 && hl_check() == 0 && hl_stats_balanced(&s) ? 0 : 1);
        }
        int status = 0;
        if (pid > 0 && waitpid(pid, &status, 0) == pid) {
            forks++;
            bad_children += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
    }
    pthread_join(o, NULL);
    for (int i = 0; i < FREERS; i++)
        pthread_join(f[i], NULL);
    CHECK("fork while remote frees are in flight: every child's heap is consistent", forks == 8 && bad_children == 0);
    CHECK("hl_check clean in the parent after the forks", hl_check() == 0);
}

int main(void)
{
    /* this thread sets up first, so it keeps heap 0 and every thread it
     * starts later is on another heap */
    hl_free(hl_malloc(SIZE));
    many_freers();
    owner_exits_first();
    pages_count = 0;
    fork_in_flight();
    return tu_finish();
}
