/* The runner tests' one assertion: CHECK(cond, fmt, ...) counts a failure
 * and names the file, line and what broke, then the test goes on. */
#ifndef HEAPLAB_TESTS_RUNNER_CHECK_H
#define HEAPLAB_TESTS_RUNNER_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            failures++;                                                                    \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                           \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fputc('\n', stderr);                                                           \
        }                                                                                  \
    } while (0)

#endif
