/* heaplab core test: thread exit. Thousands of short-lived threads allocate,
 * keep some blocks cached, free some blocks of other threads, and exit;
 * afterwards stats show every object back and no thread cache left. Also
 * allocation from a TLS destructor that runs after heaplab's own exit hook. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "heaplab.h"
#include "testutil.h"

#define WAVES 50
#define PER_WAVE 40

static void *handoff[PER_WAVE];

static void *short_lived(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    void *keep[32];
    for (int i = 0; i < 32; i++) {
        keep[i] = hl_malloc(16 + (id * 31 + (uintptr_t)i * 97) % 3000);
        memset(keep[i], (int)id, 16);
    }
    for (int i = 0; i < 32; i += 2)
        hl_free(keep[i]); /* these stay in this thread's cache until exit */
    handoff[id % PER_WAVE] = keep[1]; /* freed by the main thread later */
    for (int i = 3; i < 32; i += 2)
        hl_free(keep[i]);
    return NULL;
}

static pthread_key_t late_key;
static _Atomic int late_ok;

static void late_destructor(void *v)
{
    /* runs in a later destructor round than heaplab's own hook */
    hl_free(v);
    void *p = hl_malloc(100);
    void *q = hl_malloc(70000);
    if (p && q) {
        memset(p, 1, 100);
        memset(q, 2, 70000);
        atomic_fetch_add(&late_ok, 1);
    }
    hl_free(p);
    hl_free(q);
}

static void *uses_tls_destructor(void *arg)
{
    (void)arg;
    void *v = hl_malloc(10); /* heaplab's key is created first: runs first */
    pthread_setspecific(late_key, v);
    return NULL;
}

int main(void)
{
    pthread_key_create(&late_key, late_destructor);
    for (int w = 0; w < WAVES; w++) {
        pthread_t t[PER_WAVE];
        for (uintptr_t i = 0; i < PER_WAVE; i++)
            pthread_create(&t[i], NULL, short_lived, (void *)(i + (uintptr_t)w * PER_WAVE));
        for (int i = 0; i < PER_WAVE; i++)
            pthread_join(t[i], NULL);
        for (int i = 0; i < PER_WAVE; i++)
            hl_free(handoff[i]);
    }
    enum { LATE = 20 };
    pthread_t t[LATE];
    for (int i = 0; i < LATE; i++)
        pthread_create(&t[i], NULL, uses_tls_destructor, NULL);
    for (int i = 0; i < LATE; i++)
        pthread_join(t[i], NULL);
    CHECK("malloc/free from a TLS destructor after heaplab's exit hook works", atomic_load(&late_ok) == LATE);

    hl_thread_flush();
    hl_stats_t s;
    hl_stats(&s);
    CHECK("2000 threads exited: every object back (live 0)", s.live == 0);
    CHECK("exited threads' caches returned (tcache 0)", s.tcache == 0);
    CHECK("alloc count equals free count", s.alloc_count == s.free_count);
    CHECK("stats balanced", hl_stats_balanced(&s));
    CHECK("hl_check clean", hl_check() == 0);
    size_t trimmed = hl_trim();
    hl_stats(&s);
    CHECK("after trim, nothing is left in small pages beyond metadata", s.page_free == 0 && trimmed > 0);
    return tu_finish();
}
