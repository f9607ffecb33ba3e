/* heaplab core test: through libheaplab-preload.so's standard names, a call
 * that succeeds leaves errno as it was.
 *
 * Built without heaplab and run with LD_PRELOAD set to the preload library
 * (ctest label `preload`): first it checks that malloc, free_sized and
 * free_aligned_sized resolve to that library (glibc 2.36 has no
 * free_sized, so those two are looked up with dlsym: without the preload
 * library they are missing and the test fails). Then each exported name —
 * malloc, free, calloc, realloc, reallocarray, aligned_alloc,
 * posix_memalign, memalign, valloc, pvalloc, malloc_usable_size,
 * malloc_trim, free_sized, free_aligned_sized — is called with errno set to
 * a sentinel, on the small, medium and large paths, and the sentinel must
 * still be there. Built with -fno-builtin, so the compiler cannot drop a
 * malloc/free pair. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define SENTINEL 12345
#define PAGE 4096

static int failures;

static void kept(const char *name, int succeeded)
{
    int seen = errno;
    if (succeeded && seen == SENTINEL) {
        printf("ok   %s\n", name);
        return;
    }
    printf("FAIL %s\n", name);
    if (!succeeded)
        printf("     the call failed\n");
    if (seen != SENTINEL)
        printf("     errno is %d (%s), not the sentinel %d\n", seen, strerror(seen), SENTINEL);
    failures++;
}

/* 1 when the object that defines `symbol` is the preload library */
static int from_preload(void *symbol)
{
    Dl_info info;
    return symbol && dladdr(symbol, &info) && info.dli_fname && strstr(info.dli_fname, "heaplab-preload");
}

int main(void)
{
    void (*free_sized_fn)(void *, size_t) = (void (*)(void *, size_t))dlsym(RTLD_DEFAULT, "free_sized");
    void (*free_aligned_sized_fn)(void *, size_t, size_t) =
        (void (*)(void *, size_t, size_t))dlsym(RTLD_DEFAULT, "free_aligned_sized");
    int preloaded = from_preload((void *)malloc) && from_preload((void *)free_sized_fn) &&
                    from_preload((void *)free_aligned_sized_fn);
    if (!preloaded) {
        printf("FAIL malloc, free_sized and free_aligned_sized resolve to libheaplab-preload.so"
               " (run with LD_PRELOAD set to it)\n");
        return 1;
    }
    printf("ok   malloc, free_sized and free_aligned_sized resolve to libheaplab-preload.so\n");

    static const size_t sizes[] = {200, 100 * KiB, 6 * MiB};
    static const char *const paths[] = {"small", "medium", "large"};
    char name[160];
    for (size_t k = 0; k < 3; k++) {
        const char *path = paths[k];
        size_t size = sizes[k];
#define ROW(fmt, ok)                                        \
    do {                                                    \
        int ok_ = (ok);                                     \
        int errno_ = errno;                                 \
        snprintf(name, sizeof name, fmt " (%s)", path);     \
        errno = errno_;                                     \
        kept(name, ok_);                                    \
    } while (0)
        errno = SENTINEL;
        char *p = malloc(size);
        ROW("errno kept by malloc", p != NULL);
        p[0] = 1;
        errno = SENTINEL;
        size_t usable = malloc_usable_size(p);
        ROW("errno kept by malloc_usable_size", usable >= size);
        errno = SENTINEL;
        char *q = realloc(p, 2 * size);
        ROW("errno kept by realloc growing a block", q != NULL && q[0] == 1);
        errno = SENTINEL;
        free(q);
        ROW("errno kept by free", 1);

        errno = SENTINEL;
        char *c = calloc(4, size / 4);
        ROW("errno kept by calloc", c != NULL && c[0] == 0 && c[size - 1] == 0);
        errno = SENTINEL;
        char *r = reallocarray(c, 8, size / 4);
        ROW("errno kept by reallocarray", r != NULL);
        errno = SENTINEL;
        free_sized_fn(r, 2 * size);
        ROW("errno kept by free_sized", 1);

        errno = SENTINEL;
        void *a = aligned_alloc(256, size);
        ROW("errno kept by aligned_alloc(256, ...)", a != NULL && (uintptr_t)a % 256 == 0);
        void *pm = NULL;
        errno = SENTINEL;
        int rc = posix_memalign(&pm, 64 * KiB, size);
        ROW("errno kept by posix_memalign(64 KiB, ...)", rc == 0 && (uintptr_t)pm % (64 * KiB) == 0);
        errno = SENTINEL;
        void *m = memalign(3000, size);
        ROW("errno kept by memalign(3000, ...)", m != NULL && (uintptr_t)m % PAGE == 0);
        errno = SENTINEL;
        void *v = valloc(size);
        ROW("errno kept by valloc", v != NULL && (uintptr_t)v % PAGE == 0);
        errno = SENTINEL;
        void *pv = pvalloc(size);
        ROW("errno kept by pvalloc", pv != NULL && (uintptr_t)pv % PAGE == 0);
        errno = SENTINEL;
        free_aligned_sized_fn(a, 256, size);
        ROW("errno kept by free_aligned_sized", 1);
        errno = SENTINEL;
        free(pm);
        free(m);
        free(v);
        free(pv);
        ROW("errno kept by the frees of the aligned blocks", 1);
#undef ROW
    }
    errno = SENTINEL;
    malloc_trim(0);
    kept("errno kept by malloc_trim", 1);
    if (failures)
        printf("%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
