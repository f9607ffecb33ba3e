/* heaplab core micro-benchmark (not a test): heaplab, mimalloc (dlopen) and
 * glibc, each called through function pointers the compiler cannot inline.
 *
 *   heaplab-core-bench MODE ALLOCATOR
 *     MODE: pairs | pairs-mixed | big | memory | threads2
 *     ALLOCATOR: heaplab | mimalloc | glibc
 * Prints one line "MODE ALLOCATOR value unit". Run each cell in a fresh
 * process (bench.sh does, and takes medians). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heaplab.h"

struct table {
    void *(*malloc)(size_t);
    void (*free)(void *);
};
static struct table T;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static size_t rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long a = 0, b = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &a, &b) != 2)
            b = 0;
        fclose(f);
    }
    return b * 4;
}

/* operations per timed loop; BENCH_OPS overrides (e.g. under valgrind) */
static long PAIRS = 20000000L;

/* one malloc/free pair of a fixed small size, repeated */
static double pairs(size_t size)
{
    double t = now_s();
    for (long i = 0; i < PAIRS; i++) {
        void *p = T.malloc(size);
        *(volatile char *)p = 1;
        T.free(p);
    }
    return (now_s() - t) / PAIRS * 1e9;
}

/* small sizes 8..1024 mixed, a window of 64 live blocks */
static double pairs_mixed(void)
{
    void *w[64] = {0};
    uint64_t s = 88172645463325252ULL;
    double t = now_s();
    for (long i = 0; i < PAIRS; i++) {
        uint64_t r = rnd(&s);
        unsigned k = (unsigned)(r & 63);
        T.free(w[k]);
        w[k] = T.malloc(8 + (r >> 8) % 1017);
        *(volatile char *)w[k] = 1;
    }
    for (int k = 0; k < 64; k++)
        T.free(w[k]);
    return (now_s() - t) / PAIRS * 1e9;
}

/* 1-4 MiB blocks, every page touched, 4 live at a time */
static double big(void)
{
    enum { N = 4000 };
    void *w[4] = {0};
    uint64_t s = 12345;
    double t = now_s();
    for (int i = 0; i < N; i++) {
        uint64_t r = rnd(&s);
        unsigned k = (unsigned)(r & 3);
        T.free(w[k]);
        size_t size = ((size_t)1 << 20) + (r >> 8) % ((size_t)3 << 20);
        char *p = T.malloc(size);
        for (size_t o = 0; o < size; o += 4096)
            p[o] = (char)o;
        w[k] = p;
    }
    for (int k = 0; k < 4; k++)
        T.free(w[k]);
    return (now_s() - t) / N * 1e6;
}

/* the memory test of the brief; prints RSS (KiB) after each phase */
static void memory(const char *name)
{
    enum { N = 300000 };
    static void *a[N], *b[N];
    uint64_t s = 99;
    for (int i = 0; i < N; i++) {
        /* log-uniform 16 B .. 32 KiB */
        double u = (double)(rnd(&s) % 1000000) / 1e6;
        size_t size = (size_t)(16.0 * __builtin_exp(u * __builtin_log(2048.0)));
        a[i] = T.malloc(size);
        memset(a[i], 1, size);
    }
    size_t built = rss_kib();
    for (int i = 0; i < N; i++)
        if (rnd(&s) % 100 < 80) {
            T.free(a[i]);
            a[i] = NULL;
        }
    size_t freed80 = rss_kib();
    for (int i = 0; i < N; i++) {
        size_t size = 1 + rnd(&s) % 2048;
        b[i] = T.malloc(size);
        memset(b[i], 2, size);
    }
    size_t built2 = rss_kib();
    for (int i = 0; i < N; i++)
        if (rnd(&s) % 100 < 90) {
            T.free(b[i]);
            b[i] = NULL;
        }
    size_t freed90 = rss_kib();
    printf("memory %s built %zu freed80 %zu built2 %zu freed90 %zu KiB\n", name, built, freed80, built2, freed90);
}

struct targ {
    long ops;
};

static void *thread_work(void *arg)
{
    struct targ *ta = arg;
    void *w[256] = {0};
    uint64_t s = (uintptr_t)arg | 1;
    for (long i = 0; i < ta->ops; i++) {
        uint64_t r = rnd(&s);
        unsigned k = (unsigned)(r & 255);
        T.free(w[k]);
        w[k] = T.malloc(16 + (r >> 8) % 2000);
        *(volatile char *)w[k] = 1;
    }
    for (int k = 0; k < 256; k++)
        T.free(w[k]);
    return NULL;
}

/* 2 threads, each its own window of small blocks: Mops/s in total */
static double threads2(void)
{
    pthread_t t[2];
    struct targ a[2] = {{PAIRS / 2}, {PAIRS / 2}};

    double t0 = now_s();
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, thread_work, &a[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    return (double)PAIRS / (now_s() - t0) / 1e6;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s pairs|pairs-mixed|big|memory|threads2 heaplab|mimalloc|glibc\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1], *name = argv[2];
    if (getenv("BENCH_OPS"))
        PAIRS = atol(getenv("BENCH_OPS"));
    if (strcmp(name, "heaplab") == 0) {
        T.malloc = hl_malloc;
        T.free = hl_free;
    } else if (strcmp(name, "glibc") == 0) {
        T.malloc = malloc;
        T.free = free;
    } else if (strcmp(name, "mimalloc") == 0) {
        void *h = dlopen("libmimalloc.so.2", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "bench: cannot load libmimalloc.so.2 (install libmimalloc2.0): %s\n", dlerror());
            return 2;
        }
        T.malloc = (void *(*)(size_t))dlsym(h, "mi_malloc");
        T.free = (void (*)(void *))dlsym(h, "mi_free");
    } else {
        fprintf(stderr, "bench: unknown allocator '%s'\n", name);
        return 2;
    }
    /* keep the compiler from seeing through the table */
    __asm__ volatile("" : : "r"(&T) : "memory");
    if (strcmp(mode, "pairs") == 0)
        printf("pairs %s %.2f ns/pair\n", name, pairs(64));
    else if (strcmp(mode, "pairs-mixed") == 0)
        printf("pairs-mixed %s %.2f ns/op\n", name, pairs_mixed());
    else if (strcmp(mode, "big") == 0)
        printf("big %s %.1f us/op\n", name, big());
    else if (strcmp(mode, "memory") == 0)
        memory(name);
    else if (strcmp(mode, "threads2") == 0)
        printf("threads2 %s %.1f Mops/s\n", name, threads2());
    else {
        fprintf(stderr, "bench: unknown mode '%s'\n", mode);
        return 2;
    }
    return 0;
}
