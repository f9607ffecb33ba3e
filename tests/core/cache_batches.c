/* heaplab core test: how many blocks enter and leave a thread's cache at a
 * time, where the batch size decides how much memory a program touches.
 *  - a first allocation of a 1,000-byte block carves at most 8 KiB of new
 *    blocks into the thread's cache, not a whole bin (64 blocks: 63 KiB
 *    left cached);
 *  - a thread freeing another heap's 1,000-byte blocks keeps fewer than
 *    8 KiB of them before sending them home (a remote bin of half a bin
 *    held 31 of 31);
 *  - those blocks, back home, serve their owner's next allocations, and
 *    hl_check and the stats identity hold;
 *  - a thread that frees a burst of its own blocks, allocating none in
 *    between, gives its full bins back whole after the first flush: 1,024
 *    blocks of 16 bytes freed leave half a bin (128) cached, where giving
 *    back the older half of each full bin left a whole one (256).
 * Run with HEAPLAB_HEAPS=4 (CMakeLists.txt), so that the two threads are on
 * different heaps whatever the CPU count. */
#include <pthread.h>

#include "heaplab.h"
#include "testutil.h"

#define SIZE 1000
#define FREED 31

static void *blocks[FREED];
static size_t remote_held;

static size_t cached_now(void)
{
    hl_stats_t s;
    hl_stats(&s);
    return s.tcache;
}

#define BURST 1024

static size_t burst_held;

static void *free_a_burst(void *arg)
{
    (void)arg;
    static void *tiny[BURST];
    /* a new thread's bins start empty, and four refills of a whole bin
     * leave the 16-byte one empty again */
    for (int i = 0; i < BURST; i++) {
        tiny[i] = hl_malloc(16);
        REQUIRE("allocated", tiny[i] != NULL);
    }
    size_t before = cached_now();
    for (int i = 0; i < BURST; i++)
        hl_free(tiny[i]);
    burst_held = cached_now() - before;
    return NULL;
}

static void *free_them(void *arg)
{
    (void)arg;
    size_t before = cached_now();
    for (int i = 0; i < FREED; i++)
        hl_free(blocks[i]);
    remote_held = cached_now() - before;
    return NULL;
}

int main(void)
{
    void *first = hl_malloc(SIZE);
    size_t cached = cached_now();
    CHECK("a first allocation leaves under 8 KiB of new blocks cached", cached > 0 && cached < 8192);

    for (int i = 0; i < FREED; i++) {
        blocks[i] = hl_malloc(SIZE);
        REQUIRE("allocated", blocks[i] != NULL);
    }
    pthread_t t;
    REQUIRE("thread started", pthread_create(&t, NULL, free_them, NULL) == 0);
    pthread_join(t, NULL);
    CHECK("a thread keeps under 8 KiB of another heap's blocks", remote_held < 8192);

    /* what the freeing thread still held went home when it exited */
    hl_stats_t before;
    hl_stats(&before);
    for (int i = 0; i < FREED; i++)
        blocks[i] = hl_malloc(SIZE);
    hl_stats_t after;
    hl_stats(&after);
    CHECK("the blocks freed elsewhere serve the owner again (no new pages)", after.untouched == before.untouched);
    for (int i = 0; i < FREED; i++)
        hl_free(blocks[i]);
    hl_free(first);

    REQUIRE("thread started", pthread_create(&t, NULL, free_a_burst, NULL) == 0);
    pthread_join(t, NULL);
    CHECK("a burst of frees gives full bins back whole (at most half a bin of 16-byte blocks left)",
          burst_held <= 128 * 16);
    CHECK("hl_check passes", hl_check() == 0);
    CHECK("stats balanced", hl_stats_balanced(&after));
    return tu_finish();
}
