/* "floor": the least an allocator can do, reached through the same table as
 * every other one, to measure what the harness itself costs per call.
 *
 * A workload's figure is its loop, two indirect calls and the allocator's
 * work. On a workload that frees each block before it asks for the next
 * (tmalloc-st-64) this allocator's figure is the first two alone: no
 * allocator can beat it, so it bounds every ratio the table can show (a goal
 * such as "2x faster than glibc" is out of reach when glibc's time is less
 * than twice the floor's).
 *
 * Each thread owns one block of FLOOR_BLOCK_BYTES in its TLS. malloc hands it
 * out while it is not taken and returns NULL (ENOMEM) otherwise, so a
 * workload that keeps two blocks live fails cleanly ("malloc returned NULL")
 * instead of getting aliased memory. It is not run unless named
 * (its family entry, families.c). */
#include "families.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

enum {
    FLOOR_BLOCK_BYTES = 4096,
    FLOOR_ALIGN = 64, /* the block's alignment: the largest aligned_alloc serves */
};

/* initial-exec: the runner is a program, and the default model for code
 * built as position-independent would call __tls_get_addr, whose frame
 * would then be part of the floor */
#define FLOOR_TLS _Thread_local __attribute__((tls_model("initial-exec")))
static FLOOR_TLS struct {
    _Alignas(FLOOR_ALIGN) unsigned char bytes[FLOOR_BLOCK_BYTES];
} floor_block;
static FLOOR_TLS bool floor_taken;

/* The refusals are out of line, so that the two entries the floor is for
 * need no stack frame. */
static __attribute__((noinline, cold)) void *floor_refuse(void)
{
    errno = ENOMEM;
    return NULL;
}

static __attribute__((noinline, cold)) void floor_free_other(void *p)
{
    /* another thread's block (or NULL): left as it is. Clearing this
     * thread's flag would hand out a block that is still live, and the
     * owner's flag is its own TLS, so the block stays taken and its owner's
     * next malloc fails cleanly (NULL) instead of the process aborting in a
     * workload that frees on another thread. */
    (void)p;
}

static void *floor_malloc(size_t size)
{
    if (size > FLOOR_BLOCK_BYTES || floor_taken)
        return floor_refuse();
    floor_taken = true;
    return floor_block.bytes;
}

static void floor_free(void *p)
{
    if (p != floor_block.bytes) {
        floor_free_other(p);
        return;
    }
    floor_taken = false;
}

static void *floor_calloc(size_t n, size_t size)
{
    if (size != 0 && n > (size_t)-1 / size) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = floor_malloc(n * size);
    if (p != NULL)
        memset(p, 0, n * size);
    return p;
}

static void *floor_realloc(void *p, size_t size)
{
    if (p == NULL)
        return floor_malloc(size);
    if (size > FLOOR_BLOCK_BYTES) {
        errno = ENOMEM; /* the block stays as it was */
        return NULL;
    }
    return p;
}

static void *floor_aligned_alloc(size_t align, size_t size)
{
    if (align == 0 || (align & (align - 1)) != 0 || align > FLOOR_ALIGN) {
        errno = EINVAL;
        return NULL;
    }
    return floor_malloc(size);
}

static size_t floor_usable_size(void *p)
{
    return p != NULL ? FLOOR_BLOCK_BYTES : 0;
}

int alloc_open_floor(alloc_table *out, char *err, size_t errlen, char **argv)
{
    (void)err;
    (void)errlen;
    (void)argv;
    out->name = "floor";
    out->version = "one 4 KiB block per thread";
    out->library = "static";
    out->preload = NULL;
    out->malloc = floor_malloc;
    out->free = floor_free;
    out->calloc = floor_calloc;
    out->realloc = floor_realloc;
    out->aligned_alloc = floor_aligned_alloc;
    out->usable_size = floor_usable_size;
    return 0;
}
