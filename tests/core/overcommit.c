/* heaplab core test: a block the kernel's overcommit policy refuses is not
 * handed out.
 *
 * Under the kernel's heuristic policy (vm.overcommit_memory = 0, the
 * default) a single private writable mapping larger than RAM + swap is
 * refused, and under strict accounting (2) anything over the commit limit:
 * glibc's malloc then returns NULL with ENOMEM. A block promised without
 * that accounting (MAP_NORESERVE) lets the program believe it has memory the
 * system cannot give, and kills it later, when it touches the pages. So
 * malloc, calloc, a growing realloc and aligned_alloc of a size clearly over
 * the limit must fail cleanly, and the heap must work afterwards. Under the
 * "always overcommit" policy (1) there is nothing to check: the test says
 * so and passes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heaplab.h"
#include "testutil.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define GiB ((size_t)1 << 30)
#define MIN_REFUSED_SIZE (32 * GiB)

/* -1 when the file cannot be read */
static long read_overcommit_mode(void)
{
    FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
    long mode = -1;
    if (f) {
        if (fscanf(f, "%ld", &mode) != 1)
            mode = -1;
        fclose(f);
    }
    return mode;
}

/* the value of one /proc/meminfo field in bytes (0 when absent) */
static size_t meminfo_bytes(const char *field)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    size_t len = strlen(field), kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, len) == 0 && line[len] == ':') {
            kib = strtoull(line + len + 1, NULL, 10);
            break;
        }
    if (f)
        fclose(f);
    return kib * KiB;
}

int main(void)
{
    long mode = read_overcommit_mode();
    if (mode == 1) {
        printf("skip overcommit checks: vm.overcommit_memory is 1 (always overcommit), nothing is refused\n");
        return 0;
    }
    CHECK("vm.overcommit_memory is readable (0 heuristic or 2 strict)", mode == 0 || mode == 2);
    size_t ram = meminfo_bytes("MemTotal"), swap = meminfo_bytes("SwapTotal"), limit = meminfo_bytes("CommitLimit");
    size_t size = 2 * (ram + swap);
    if (size < 2 * limit)
        size = 2 * limit;
    if (size < MIN_REFUSED_SIZE)
        size = MIN_REFUSED_SIZE;
    printf("mode %ld, RAM %zu MiB + swap %zu MiB, commit limit %zu MiB: asking for %zu GiB\n", mode, ram / MiB,
           swap / MiB, limit / MiB, size / GiB);
    CHECK("MemTotal found in /proc/meminfo", ram > 0);

#if defined(__SANITIZE_ADDRESS__)
    /* `malloc` is the sanitizer's own here, which reserves without accounting */
    printf("skip the glibc comparison: malloc is AddressSanitizer's in this build\n");
#else
    {
        /* the premise: the real malloc (glibc's; this test links the core
         * as hl_ functions) is refused the same size in this mode */
        errno = 0;
        void *g = malloc(size);
        int refused = g == NULL && errno == ENOMEM;
        free(g);
        CHECK("premise: glibc's malloc refuses the size with ENOMEM in this mode", refused);
    }
#endif

    errno = 0;
    void *p = hl_malloc(size);
    int e = errno;
    CHECK("malloc of more than RAM + swap (and the commit limit) is NULL with ENOMEM", p == NULL && e == ENOMEM);
    if (p)
        hl_free(p);

    errno = 0;
    p = hl_calloc(size / 16, 16);
    e = errno;
    CHECK("calloc of the same size is NULL with ENOMEM", p == NULL && e == ENOMEM);
    if (p)
        hl_free(p);

    unsigned char *block = hl_malloc(2 * MiB);
    memset(block, 0x3C, 2 * MiB);
    errno = 0;
    p = hl_realloc(block, size);
    e = errno;
    CHECK("realloc growing a 2 MiB block to the same size is NULL with ENOMEM", p == NULL && e == ENOMEM);
    if (p) {
        block = p;
    } else {
        CHECK("the block survives the refused growth with its content",
              block[0] == 0x3C && block[2 * MiB - 1] == 0x3C && hl_usable_size(block) >= 2 * MiB);
    }
    hl_free(block);

    /* 64 KiB: an alignment every version of the core serves, so the
     * refusal must come from the accounting, not from the alignment */
    static const struct {
        size_t align;
        const char *name;
    } aligned[] = {
        {4 * MiB, "aligned_alloc(4 MiB, the same size) is NULL with ENOMEM"},
        {64 * KiB, "aligned_alloc(64 KiB, the same size) is NULL with ENOMEM"},
    };
    for (size_t i = 0; i < sizeof aligned / sizeof aligned[0]; i++) {
        errno = 0;
        p = hl_aligned_alloc(aligned[i].align, size);
        e = errno;
        CHECK(aligned[i].name, p == NULL && e == ENOMEM);
        if (p)
            hl_free(p);
    }

    void *small = hl_malloc(100), *medium = hl_malloc(200 * KiB), *large = hl_malloc(3 * MiB);
    CHECK("the heap still serves every path after the refusals", small && medium && large);
    if (large)
        memset(large, 1, 3 * MiB);
    hl_free(small);
    hl_free(medium);
    hl_free(large);
    CHECK("hl_check clean after the refusals", hl_check() == 0);
    return tu_finish();
}
