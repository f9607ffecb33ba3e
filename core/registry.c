/* heaplab core: the segment registry.
 *
 * One byte per 4 MiB chunk of the 47-bit address space (32 MiB of zero
 * pages in .bss, resident only where a segment was ever registered). free()
 * reads it before touching any header, so a pointer heaplab never returned is
 * refused without a fault. */
#include "internal.h"

_Atomic uint8_t core_registry[REGISTRY_ENTRIES];

void registry_set(void *seg, enum seg_kind kind)
{
    uintptr_t a = (uintptr_t)seg;
    atomic_store_explicit(&core_registry[a >> SEG_SHIFT], (uint8_t)kind, memory_order_relaxed);
}
