/* heaplab core: a thread's stash of the medium blocks it freed.
 *
 * A short list in about the order the blocks came (a taken entry's place
 * goes to the last one), searched for the newest that fits: a program that
 * frees and allocates medium blocks of similar sizes gets its own recent
 * (cache-warm) blocks back without taking an arena lock. Only the owning
 * thread touches its stash; the blocks' tags say they are stashed, so
 * stats and checks count them from the tags (medium.c). */
#include "internal.h"

#include <string.h>

_Static_assert(MEDIUM_STASH_BLOCK_MAX <= UINT32_MAX, "stashed sizes fit 32 bits");
_Static_assert(MEDIUM_STASH_BLOCK_MAX <= MEDIUM_STASH_BYTES, "a stash holds its biggest block");

/* Gives the oldest n entries back to their arenas. */
static void give_back(struct medium_stash *st, unsigned n)
{
    medium_unstash(st->blocks, n);
    for (unsigned i = 0; i < n; i++)
        st->bytes -= st->sizes[i];
    unsigned keep = st->count - n;
    memmove(st->blocks, st->blocks + n, keep * sizeof st->blocks[0]);
    memmove(st->sizes, st->sizes + n, keep * sizeof st->sizes[0]);
    st->count = keep;
}

void medium_stash_put(struct medium_stash *st, void *block, size_t size)
{
    CORE_ASSERT(size <= MEDIUM_STASH_BLOCK_MAX, "a block too big for the stash stashed");
    /* the older half goes, and more while the bytes do not fit: a program
     * near the limit does not give back and take again on every free */
    if (st->count == MEDIUM_STASH_BLOCKS)
        give_back(st, MEDIUM_STASH_BLOCKS / 2);
    unsigned n = 0;
    size_t bytes = st->bytes;
    while (bytes + size > MEDIUM_STASH_BYTES)
        bytes -= st->sizes[n++];
    if (n)
        give_back(st, n);
    st->blocks[st->count] = block;
    st->sizes[st->count] = (uint32_t)size;
    st->count++;
    st->bytes += size;
}

void *medium_stash_take(struct medium_stash *st, size_t need)
{
    /* every entry is compared, without a branch per entry: the sizes are
     * the program's, so such branches would be mispredicted about every
     * other time (tmalloc-st-medium with 20 live blocks of 9-32 KiB: a
     * searching loop was a quarter of the run) */
    uint32_t want = (uint32_t)need, slack = (uint32_t)(need / MEDIUM_FIT_SLACK);
    uint32_t fits = 0;
    for (unsigned i = 0; i < MEDIUM_STASH_BLOCKS; i++)
        fits |= (uint32_t)(st->sizes[i] - want <= slack) << i;
    fits &= (1u << st->count) - 1;
    if (!fits)
        return NULL;
    /* the newest that fits; the last entry takes its place */
    unsigned i = 31u - (unsigned)__builtin_clz(fits);
    void *b = st->blocks[i];
    /* mutant 8: a block handed out and left in the stash */
    if (CORE_MUTANT(8))
        return b;
    st->bytes -= st->sizes[i];
    st->count--;
    st->blocks[i] = st->blocks[st->count];
    st->sizes[i] = st->sizes[st->count];
    return b;
}

void medium_stash_flush(struct medium_stash *st)
{
    if (st->count)
        give_back(st, st->count);
}
