/* heaplab core test: a program with functions of its own named like
 * heaplab's API (hl_malloc, hl_free, hl_calloc, hl_realloc) still gets
 * heaplab's allocator from the standard names of the preload library, whose
 * calls bind to its own functions (linked -Bsymbolic-functions: no PLT jump
 * between malloc and hl_malloc, nor a way to divert it). Run with
 * LD_PRELOAD=libheaplab-preload.so. Knows nothing of heaplab's headers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int own_calls;

/* the program's own functions of those names: never what malloc runs */
void *hl_malloc(size_t n)
{
    (void)n;
    own_calls++;
    return NULL;
}
void hl_free(void *p)
{
    (void)p;
    own_calls++;
}
void *hl_calloc(size_t n, size_t size)
{
    (void)n;
    (void)size;
    own_calls++;
    return NULL;
}
void *hl_realloc(void *p, size_t size)
{
    (void)p;
    (void)size;
    own_calls++;
    return NULL;
}

int main(void)
{
    int failures = 0;
    size_t sizes[] = {1, 64, 5000, 100000, 3u << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char *p = malloc(sizes[i]);
        char *q = calloc(1, sizes[i]);
        if (p == NULL || q == NULL) {
            printf("FAIL malloc and calloc of %zu bytes returned NULL\n", sizes[i]);
            failures++;
            continue;
        }
        memset(p, 0x5a, sizes[i]);
        p = realloc(p, sizes[i] * 2);
        if (p == NULL || p[sizes[i] - 1] != 0x5a) {
            printf("FAIL realloc of %zu bytes lost its contents\n", sizes[i]);
            failures++;
        }
        free(p);
        free(q);
    }
    if (own_calls != 0) {
        printf("FAIL the standard names reached the program's own hl_ functions %d times\n", own_calls);
        failures++;
    } else {
        printf("ok   malloc, calloc, realloc and free never reached the program's own hl_ functions\n");
    }
    return failures ? 1 : 0;
}
