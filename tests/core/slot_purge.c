/* heaplab core test: what goes back with a small span that has no live
 * block left is its pages and the slot records its class wrote, nothing
 * more and nothing less.
 *  - a class with few blocks a span (1 KiB: 128 bytes of slots each) gives
 *    each span back in one system call: the part of the span's slot
 *    reserve its class never wrote is not given back again (a call that
 *    returns nothing);
 *  - the smallest class (16 B: 8 KiB of slots a span) gets every page its
 *    slots were written on back (mincore), the last one included.
 * Single-threaded, so each range is its own madvise call. */
#include <stdint.h>
#include <sys/mman.h>

#include "heaplab.h"
#include "testutil.h"

/* The small segment's layout, from core/internal.h: 4 MiB segments of
 * 64 KiB pages; after a header and a 512-byte bitmap per page, the slot
 * reserve of page p (8 KiB, one 16-bit record per 16-byte block, and a
 * cache line) starts at SLOTS_OFFSET + p * SLOTS_STRIDE. */
#define SEG_BYTES ((uintptr_t)4 << 20)
#define PAGE_SHIFT 16
#define SLOTS_OFFSET ((uintptr_t)8192 + 64 * 512)
#define SLOTS_STRIDE ((uintptr_t)8192 + 64)
#define OS_PAGE ((uintptr_t)4096)

#define SPAN_BYTES ((size_t)64 << 10)
#define SPANS 32
#define FEW_SIZE 1024u
#define FEW_BLOCKS (SPANS * SPAN_BYTES / FEW_SIZE)
#define TINY_SIZE 16u
#define TINY_BLOCKS (SPANS * SPAN_BYTES / TINY_SIZE)

static void *blocks[TINY_BLOCKS];

/* n blocks of `size`, each written, then all freed and given back;
 * records in pages[] (up to max) the 64 KiB pages the blocks were on, as
 * they change, and returns how many */
static size_t round_trip(size_t size, size_t n, uintptr_t *pages, size_t max)
{
    size_t npages = 0;
    for (size_t i = 0; i < n; i++) {
        blocks[i] = hl_malloc(size);
        ((volatile char *)blocks[i])[0] = 1;
        uintptr_t page = (uintptr_t)blocks[i] >> PAGE_SHIFT << PAGE_SHIFT;
        if (npages < max && (npages == 0 || pages[npages - 1] != page))
            pages[npages++] = page;
    }
    for (size_t i = 0; i < n; i++)
        hl_free(blocks[i]);
    hl_thread_flush();
    hl_trim();
    return npages;
}

static size_t purge_calls(void)
{
    hl_stats_t s;
    hl_stats(&s);
    return s.purge_count;
}

int main(void)
{
    /* mapped and resident before anything is measured: the segments, the
     * thread's cache region, the stores */
    round_trip(FEW_SIZE, FEW_BLOCKS, NULL, 0);
    size_t before = purge_calls();
    round_trip(FEW_SIZE, FEW_BLOCKS, NULL, 0);
    size_t calls = purge_calls() - before;
    printf("info %d spans of 1 KiB blocks given back in %zu system calls\n", SPANS, calls);
    CHECK("spans of a class with few slots go back one system call each (not two)",
          calls >= SPANS / 2 && calls <= SPANS + SPANS / 4);

    /* a live block of another class keeps the segment mapped through the
     * trims (an empty one is unmapped whole, which would say nothing) */
    void *keep = hl_malloc(48);
    /* the spans the 16-byte blocks were carved from: one page each */
    static uintptr_t spans[2 * SPANS];
    size_t nspans = round_trip(TINY_SIZE, TINY_BLOCKS, spans, 2 * SPANS);
    /* whole OS pages of each span's slot reserve that hold written slots */
    size_t pages = 0, resident = 0, unmapped = 0;
    for (size_t k = 0; k < nspans; k++) {
        uintptr_t seg = spans[k] & ~(SEG_BYTES - 1);
        uintptr_t first = seg + SLOTS_OFFSET + ((spans[k] - seg) >> PAGE_SHIFT) * SLOTS_STRIDE;
        uintptr_t written_end = first + SPAN_BYTES / TINY_SIZE * 2;
        uintptr_t reserve_end = first + SLOTS_STRIDE;
        for (uintptr_t p = (first + OS_PAGE - 1) & ~(OS_PAGE - 1); p + OS_PAGE <= reserve_end && p < written_end;
             p += OS_PAGE) {
            unsigned char v = 0;
            pages++;
            if (mincore((void *)p, OS_PAGE, &v) != 0)
                unmapped++;
            else if (v & 1)
                resident++;
        }
    }
    printf("info %zu spans of 16-byte blocks: %zu of %zu whole pages of their slots still resident, %zu unmapped\n",
           nspans, resident, pages, unmapped);
    CHECK("the segment of the freed spans is still mapped (a live block in it)", unmapped == 0);
    CHECK("every whole page of slots the smallest class wrote goes back with its span", pages > 0 && resident == 0);
    hl_free(keep);
    CHECK("hl_check passes", hl_check() == 0);
    return tu_finish();
}
