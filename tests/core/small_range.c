/* heaplab core test: the small segments' range (core/internal.h).
 *  - small blocks lie inside one read-only reservation of 16 GiB aligned
 *    to its size (in /proc/self/maps), which free() tells by the pointer's
 *    top bits, and which core dumps leave out (the segments in it they
 *    keep); with HEAPLAB_SMALL_RANGE=0 there is no such reservation and
 *    small blocks are found through the registry instead;
 *  - free, realloc and malloc_usable_size of an address inside the range
 *    that no segment holds end the program with their one line (the range
 *    reads as zeros there: no fault);
 *  - segments given back by hl_trim read as zeros again (a stale pointer
 *    into one is refused with the line, not a fault), and their slots are
 *    taken again by later segments;
 *  - either way, thousands of blocks over several segments come and go
 *    with hl_check clean and the stats identity exact.
 * Run with the argument "range" (the default environment) and "registry"
 * (HEAPLAB_SMALL_RANGE=0): CMakeLists.txt. */
#include <inttypes.h>

#include "heaplab.h"
#include "testutil.h"

#define RANGE_SHIFT 34
#define RANGE_BYTES ((uintptr_t)1 << RANGE_SHIFT)
#define SEG_BYTES ((uintptr_t)4 << 20)
/* 1 KiB blocks over at least three 4 MiB segments */
#define BLOCK 1024
#define BLOCKS (3 * 4096)

static void *blocks[BLOCKS];

/* the end of the read-only mapping of /proc/self/maps that holds [lo, hi),
 * 0 when none does */
static uintptr_t readonly_mapping_end(uintptr_t lo, uintptr_t hi)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    uintptr_t end = 0;
    while (f && !end && fgets(line, sizeof line, f)) {
        uintptr_t a, b;
        char perms[8];
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", &a, &b, perms) == 3 && strcmp(perms, "r--p") == 0 &&
            a <= lo && hi <= b)
            end = b;
    }
    if (f)
        fclose(f);
    return end;
}

/* 1 when the mapping of /proc/self/smaps that starts at or holds `at` has
 * "dd" (left out of core dumps) among its VmFlags */
static int left_out_of_dumps(uintptr_t at)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0, dd = 0;
    while (f && fgets(line, sizeof line, f)) {
        uintptr_t a, b;
        /* a mapping's first line; the field lines that follow never have
         * two hex numbers joined by a dash */
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &a, &b) == 2) {
            in = a <= at && at < b;
            continue;
        }
        if (in && strncmp(line, "VmFlags:", 8) == 0)
            dd = strstr(line, " dd") != NULL;
    }
    if (f)
        fclose(f);
    return dd;
}

/* the range's base, from a small block */
static uintptr_t range_of(void *p)
{
    return (uintptr_t)p & ~(RANGE_BYTES - 1);
}

/* an address in the middle of the range: no segment is there unless half
 * of it (8 GiB of small blocks) were in use */
static void *middle_of_range(void)
{
    void *p = hl_malloc(64);
    return (void *)(range_of(p) + RANGE_BYTES / 2 + 4096);
}

static void free_in_range(void)
{
    hl_free(middle_of_range());
}
static void realloc_in_range(void)
{
    hl_realloc(middle_of_range(), 100);
}
static void usable_in_range(void)
{
    hl_usable_size(middle_of_range());
}

static void *stale;
static void free_stale(void)
{
    hl_free(stale);
}

static int all_in_one_range(void)
{
    for (int i = 1; i < BLOCKS; i++)
        if (range_of(blocks[i]) != range_of(blocks[0]))
            return 0;
    return 1;
}

static int balanced(void)
{
    hl_stats_t s;
    hl_stats(&s);
    return hl_stats_balanced(&s) && hl_check() == 0;
}

int main(int argc, char **argv)
{
    int range = argc < 2 || strcmp(argv[1], "registry") != 0;
    for (int i = 0; i < BLOCKS; i++) {
        blocks[i] = hl_malloc(BLOCK);
        memset(blocks[i], i & 0xff, BLOCK);
    }
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < BLOCKS; i++) {
        uintptr_t a = (uintptr_t)blocks[i];
        lo = a < lo ? a : lo;
        hi = a + BLOCK > hi ? a + BLOCK : hi;
    }
    CHECK("the blocks span more than one segment", hi - lo > SEG_BYTES);
    /* past the newest segment, the reservation runs to the range's end */
    uintptr_t past = ((hi - 1) & ~(SEG_BYTES - 1)) + SEG_BYTES;
    int reserved = readonly_mapping_end(past, past + SEG_BYTES) == range_of(blocks[0]) + RANGE_BYTES;
    if (range) {
        CHECK("small blocks lie in one 16 GiB range aligned to its size", all_in_one_range());
        CHECK("the range past the segments is a read-only reservation to its end", reserved);
        CHECK("core dumps leave the reservation out", left_out_of_dumps(past));
        CHECK("core dumps keep the segments", !left_out_of_dumps((uintptr_t)blocks[0]));
    } else {
        CHECK("with HEAPLAB_SMALL_RANGE=0, no read-only reservation follows the segments", !reserved);
    }

    CHECK("free of an address in the range where no segment is aborts with one line",
          tu_dies_with(free_in_range, "heaplab: free(): invalid pointer 0x"));
    CHECK("realloc of an address in the range where no segment is aborts naming realloc()",
          tu_dies_with(realloc_in_range, "heaplab: realloc(): invalid pointer 0x"));
    CHECK("malloc_usable_size of an address in the range where no segment is aborts naming it",
          tu_dies_with(usable_in_range, "heaplab: malloc_usable_size(): invalid pointer 0x"));

    int intact = 1;
    for (int i = 0; i < BLOCKS; i++)
        for (int k = 0; k < BLOCK; k += 97)
            intact &= ((unsigned char *)blocks[i])[k] == (i & 0xff);
    CHECK("every block keeps its bytes", intact);
    CHECK("hl_check clean and stats balanced with the blocks live", balanced());

    hl_stats_t before, after;
    hl_stats(&before);
    for (int i = 0; i < BLOCKS; i++)
        hl_free(blocks[i]);
    hl_trim();
    hl_stats(&after);
    CHECK("hl_trim gives empty segments back", after.os_unmap_count > before.os_unmap_count);
    CHECK("hl_check clean and stats balanced after the trim", balanced());
    /* the last block's segment is the newest: given back, not kept */
    stale = blocks[BLOCKS - 1];
    CHECK("free of a block in a segment given back aborts with one line (no fault)",
          tu_dies_with(free_stale, "heaplab: free(): invalid pointer 0x"));

    for (int i = 0; i < BLOCKS; i++)
        blocks[i] = hl_malloc(BLOCK);
    if (range)
        CHECK("segments made after a trim take the range's slots again", all_in_one_range() &&
                                                                          range_of(blocks[0]) == range_of(stale));
    for (int i = 0; i < BLOCKS; i++)
        hl_free(blocks[i]);
    CHECK("hl_check clean and stats balanced at the end", balanced());
    return tu_finish();
}
