/* heaplab core tests: a tiny named-check harness shared by the C tests. */
#ifndef HEAPLAB_TESTUTIL_H
#define HEAPLAB_TESTUTIL_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* Runs fn in a forked child whose stderr goes into buf (NUL-terminated,
 * *len bytes); returns the child's wait status, or -1 when no child ran. A
 * child whose fn returns exits with status `survived`. */
static inline int tu_run_child(void (*fn)(void), int survived, char *buf, size_t size, size_t *len)
{
    int pipefd[2];
    *len = 0;
    buf[0] = 0;
    if (pipe(pipefd) != 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(pipefd[0]);
        dup2(pipefd[1], STDERR_FILENO);
        fn();
        _exit(survived);
    }
    close(pipefd[1]);
    size_t n = 0;
    ssize_t r;
    while (n < size - 1 && (r = read(pipefd[0], buf + n, size - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = 0;
    close(pipefd[0]);
    int status = -1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    *len = n;
    return status;
}

/* 1 when a child's wait status is death by SIGABRT and its stderr (buf,
 * n bytes) is exactly one line starting with `expect` */
static inline int tu_aborted_with_line(int status, const char *buf, size_t n, const char *expect)
{
    int one_line = n > 0 && buf[n - 1] == '\n' && memchr(buf, '\n', n) == buf + n - 1;
    return status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && one_line &&
           strncmp(buf, expect, strlen(expect)) == 0;
}

/* Runs fn in a child: 1 when it died of SIGABRT after writing exactly one
 * line starting with `expect` to stderr; otherwise prints what it did */
static inline int tu_dies_with(void (*fn)(void), const char *expect)
{
    char buf[512];
    size_t n;
    int status = tu_run_child(fn, 0, buf, sizeof buf, &n);
    int ok = tu_aborted_with_line(status, buf, n, expect);
    if (!ok)
        printf("     child status %d, stderr: %s\n", status, n ? buf : "(nothing)");
    return ok;
}

#endif
