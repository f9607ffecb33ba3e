/* heaplab core test: threaded stress. 8 threads allocate blocks of every
 * path, write a pattern derived from the address, and hand about half of
 * them through a shared mailbox to other threads, which verify the pattern
 * and free them (remote frees). Afterwards every block is back. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "heaplab.h"
#include "testutil.h"

#define THREADS 8
#define ITERS 40000
#define MAILBOX 256
#define LOCAL 64

static _Atomic(unsigned char *) mailbox[MAILBOX];
static _Atomic int corrupt;

static size_t size_of(uint64_t r)
{
    if (r % 200 == 0)
        return 1100000 + r % 900000; /* large */
    if (r % 25 == 0)
        return 40000 + r % 200000;   /* medium */
    return 1 + r % 2048;             /* small */
}

/* size in the first 8 bytes, then bytes derived from the address */
static unsigned char *make(uint64_t r)
{
    size_t size = size_of(r);
    if (size < sizeof(size_t))
        size = sizeof(size_t);
    unsigned char *p = hl_malloc(size);
    if (!p)
        return NULL;
    memcpy(p, &size, sizeof size);
    size_t step = size > 4096 ? 509 : 1;
    for (size_t i = sizeof size; i < size; i += step)
        p[i] = (unsigned char)((uintptr_t)p >> 4 ^ i);
    return p;
}

static void verify_and_free(unsigned char *p)
{
    size_t size;
    memcpy(&size, p, sizeof size);
    size_t step = size > 4096 ? 509 : 1;
    for (size_t i = sizeof size; i < size; i += step)
        if (p[i] != (unsigned char)((uintptr_t)p >> 4 ^ i)) {
            atomic_store(&corrupt, 1);
            break;
        }
    hl_free(p);
}

static void *worker(void *arg)
{
    uint64_t rng = 0x1234567ULL * (uintptr_t)arg + 1;
    unsigned char *local[LOCAL] = {0};
    for (int i = 0; i < ITERS; i++) {
        uint64_t r = tu_rand(&rng);
        unsigned char *p = make(r);
        if (!p) {
            atomic_store(&corrupt, 1);
            break;
        }
        if (r & 1) {
            /* hand it off; free whatever was waiting in that slot */
            unsigned char *old = atomic_exchange(&mailbox[(r >> 8) % MAILBOX], p);
            if (old)
                verify_and_free(old);
        } else {
            unsigned slot = (unsigned)((r >> 8) % LOCAL);
            if (local[slot])
                verify_and_free(local[slot]);
            local[slot] = p;
        }
    }
    for (int i = 0; i < LOCAL; i++)
        if (local[i])
            verify_and_free(local[i]);
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)(i + 1));
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < MAILBOX; i++) {
        unsigned char *p = atomic_exchange(&mailbox[i], NULL);
        if (p)
            verify_and_free(p);
    }
    CHECK("every pattern intact when another thread freed the block", !atomic_load(&corrupt));
    hl_thread_flush();
    hl_stats_t s;
    hl_stats(&s);
    CHECK("all blocks back: live is 0", s.live == 0);
    CHECK("exited threads left nothing in caches", s.tcache == 0);
    CHECK("alloc count equals free count", s.alloc_count == s.free_count && s.alloc_count >= (size_t)THREADS * ITERS);
    CHECK("stats balanced", hl_stats_balanced(&s));
    CHECK("hl_check clean", hl_check() == 0);
    /* trim drains the transfer batches into the span bitmaps and purges */
    CHECK("hl_trim releases the freed memory", hl_trim() > 0);
    hl_stats(&s);
    CHECK("stats balanced after trim", hl_stats_balanced(&s));
    CHECK("hl_check clean after trim", hl_check() == 0);
    return tu_finish();
}
