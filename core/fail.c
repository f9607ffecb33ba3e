/* heaplab core: the failure handler. Prints with write(2) only (the heap may
 * be the thing that is broken) and aborts. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEX_DIGITS (2 * sizeof(uintptr_t))

static void write_all(const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

/* "0x" + lowercase hex without leading zeros, into buf; returns length */
static size_t format_hex(char *buf, uintptr_t v)
{
    char tmp[HEX_DIGITS];
    size_t n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v & 0xf];
        v >>= 4;
    } while (v);
    buf[0] = '0';
    buf[1] = 'x';
    for (size_t i = 0; i < n; i++)
        buf[2 + i] = tmp[n - 1 - i];
    return n + 2;
}

static void write_line(const char *prefix, const char *msg, uintptr_t value, bool with_value)
{
    char line[256];
    size_t n = 0;
    size_t lp = strlen(prefix), lm = strlen(msg);
    if (lp + lm + HEX_DIGITS + 8 > sizeof line)
        lm = sizeof line - lp - HEX_DIGITS - 8;
    memcpy(line + n, prefix, lp);
    n += lp;
    memcpy(line + n, msg, lm);
    n += lm;
    if (with_value) {
        line[n++] = ' ';
        n += format_hex(line + n, value);
    }
    line[n++] = '\n';
    write_all(line, n);
}

_Noreturn void core_fail_pointer(const char *what, const void *p)
{
    write_line("heaplab: ", what, (uintptr_t)p, true);
    abort();
}

_Noreturn void core_fail(const char *msg)
{
    write_line("heaplab: ", msg, 0, false);
    abort();
}

void core_report(const char *msg, uintptr_t value)
{
    write_line("heaplab check: ", msg, value, true);
}
