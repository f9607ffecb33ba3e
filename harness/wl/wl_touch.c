/* wl_touch(): make memory really resident by writing to it. */
#include "workload.h"

#include <string.h>

/* The API promises one byte per 4 KiB, whatever the page size: on larger
 * pages it touches some pages more than once, which costs little. */
enum { WL_TOUCH_STRIDE = 4096 };

const char *const wl_touch_names[] = {"none", "first", "pages", "all", NULL};

void wl_touch(void *p, size_t n, int all)
{
    if (!p || n == 0)
        return;
    if (all) {
        memset(p, WL_TOUCH_BYTE, n);
        return;
    }
    /* volatile: the writes are the point, the compiler must keep them */
    volatile unsigned char *bytes = p;
    for (size_t i = 0; i < n; i += WL_TOUCH_STRIDE)
        bytes[i] = WL_TOUCH_BYTE;
    bytes[n - 1] = WL_TOUCH_BYTE;
}
