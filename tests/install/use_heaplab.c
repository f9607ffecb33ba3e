/* Built against an installed heaplab (pkg-config or find_package): the
 * hl_ API serves, counts and checks one block. */
#include <heaplab.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    char *p = hl_malloc(100);
    if (p == NULL)
        return 1;
    memset(p, 0x5a, 100);
    hl_stats_t s;
    hl_stats(&s);
    if (s.live < 100 || s.alloc_count < 1)
        return 2;
    hl_free(p);
    if (hl_check() != 0)
        return 3;
    printf("heaplab %s served hl_malloc\n", hl_version());
    return 0;
}
