/* heaplab core tests: a tiny named-check harness shared by the C tests. */
#ifndef HEAPLAB_TESTUTIL_H
#define HEAPLAB_TESTUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int tu_failures;

/* One named check: prints "ok   name" or "FAIL name (file:line)". */
#define CHECK(name, cond)                                                          \
    do {                                                                           \
        if (cond) {                                                                \
            printf("ok   %s\n", name);                                             \
        } else {                                                                   \
            printf("FAIL %s (%s:%d)\n", name, __FILE__, __LINE__);                 \
            tu_failures++;                                                         \
        }                                                                          \
    } while (0)

/* A condition that must hold on every iteration of a loop: reports once. */
#define REQUIRE(name, cond)                                                        \
    do {                                                                           \
        if (!(cond)) {                                                             \
            printf("FAIL %s (%s:%d)\n", name, __FILE__, __LINE__);                 \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

static inline int tu_finish(void)
{
    if (tu_failures)
        printf("%d check(s) failed\n", tu_failures);
    return tu_failures ? 1 : 0;
}

/* xorshift64*: deterministic, seeded per test */
static inline uint64_t tu_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* resident set size in bytes, from /proc/self/statm */
static inline size_t tu_rss(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long size = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (size_t)resident * 4096u;
}

#endif
