/* heaplab core: small size classes and the span geometry of each. */
#include "internal.h"

struct size_class core_classes[NCLASSES];
_Atomic uint16_t core_bin_of[SMALL_MAX + 1];

/* A span's tail that no block fits in is waste. A bigger span is chosen only
 * when it cuts the wasted share by more than 1/SPAN_WASTE_DIVISOR of it. */
#define SPAN_WASTE_DIVISOR 64

static size_t class_size(unsigned cls)
{
    if (cls < TINY_CLASSES)
        return (size_t)(cls + 1) << CORE_ALIGN_SHIFT;
    unsigned rel = cls - TINY_CLASSES;
    unsigned e = 7 + rel / CLASSES_PER_DOUBLING;
    unsigned m = 8 + rel % CLASSES_PER_DOUBLING;
    return (size_t)(m + 1) << (e - 3);
}

void size_class_init(void)
{
    for (unsigned cls = 0; cls < NCLASSES; cls++) {
        size_t size = class_size(cls);
        /* the span size (1, 2 or 4 pages) that wastes the smallest share of
         * itself; the smaller span wins ties within 1/SPAN_WASTE_DIVISOR */
        unsigned pages = 1;
        for (unsigned k = 2; k <= SPAN_MAX_PAGES; k *= 2) {
            size_t span = k * PAGE_SIZE, best = pages * PAGE_SIZE;
            size_t waste = span % size, best_waste = best % size;
            if (waste * best + span / SPAN_WASTE_DIVISOR * best < best_waste * span)
                pages = k;
        }
        struct size_class *c = &core_classes[cls];
        c->size = (uint32_t)size;
        c->span_pages = (uint8_t)pages;
        c->span_shift = (uint8_t)(PAGE_SHIFT + __builtin_ctz(pages));
        c->capacity = (uint32_t)(pages * PAGE_SIZE / size);
        c->recip = (((uint64_t)1 << RECIP_SHIFT) + size - 1) / size;
        c->span_mask = ((uint64_t)1 << c->span_shift) - 1;
    }
    for (size_t size = 0; size <= SMALL_MAX; size++)
        atomic_store_explicit(&core_bin_of[size], (uint16_t)(size_to_class_slow(size) * BIN_BYTES), memory_order_relaxed);
}

unsigned class_for_aligned(size_t size, size_t align)
{
    if (align <= CORE_ALIGN)
        return size <= SMALL_MAX ? size_to_class(size) : NCLASSES;
    if (align > SMALL_ALIGN_MAX)
        return NCLASSES;
    size_t need = size < align ? align : size;
    if (need > SMALL_MAX)
        return NCLASSES;
    /* a block is aligned to `align` when its size is a multiple of it: the
     * span starts on a PAGE_SIZE boundary */
    for (unsigned cls = size_to_class(need); cls < NCLASSES; cls++)
        if (core_classes[cls].size % align == 0)
            return cls;
    return NCLASSES;
}
