/* Streaming JSON writer: see json_writer.h. */
#include "json_writer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Doubles print with the fewest digits that read back to the same value;
 * 17 significant digits always round-trip an IEEE-754 double. */
enum { DOUBLE_SHORT_DIGITS = 15, DOUBLE_EXACT_DIGITS = 17 };

void json_init(json_writer *j, FILE *out)
{
    memset(j, 0, sizeof *j);
    j->out = out;
}

/* Writes the comma that separates this item from the previous one. */
static void before_item(json_writer *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->has_items[j->depth])
        fputc(',', j->out);
    j->has_items[j->depth] = 1;
}

static void open_container(json_writer *j, char bracket)
{
    before_item(j);
    fputc(bracket, j->out);
    if (j->depth + 1 >= JSON_MAX_DEPTH) {
        /* a programming error in the runner, not bad input */
        fputs("json_writer: nesting deeper than JSON_MAX_DEPTH\n", stderr);
        abort();
    }
    j->depth++;
    j->has_items[j->depth] = 0;
}

static void close_container(json_writer *j, char bracket)
{
    fputc(bracket, j->out);
    j->depth--;
}

void json_object_begin(json_writer *j) { open_container(j, '{'); }
void json_object_end(json_writer *j) { close_container(j, '}'); }
void json_array_begin(json_writer *j) { open_container(j, '['); }
void json_array_end(json_writer *j) { close_container(j, ']'); }

static void write_escaped(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        case '\b': fputs("\\b", out); break;
        case '\f': fputs("\\f", out); break;
        default:
            /* JSON forbids raw control characters inside strings */
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

void json_key(json_writer *j, const char *key)
{
    before_item(j);
    write_escaped(j->out, key);
    fputc(':', j->out);
    j->after_key = 1;
}

void json_string(json_writer *j, const char *s)
{
    if (!s) {
        json_null(j);
        return;
    }
    before_item(j);
    write_escaped(j->out, s);
}

void json_double(json_writer *j, double v)
{
    if (!isfinite(v)) {
        json_null(j);
        return;
    }
    before_item(j);
    char buf[64];
    snprintf(buf, sizeof buf, "%.*g", DOUBLE_SHORT_DIGITS, v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, sizeof buf, "%.*g", DOUBLE_EXACT_DIGITS, v);
    fputs(buf, j->out);
}

void json_int(json_writer *j, long long v)
{
    before_item(j);
    fprintf(j->out, "%lld", v);
}

void json_uint(json_writer *j, unsigned long long v)
{
    before_item(j);
    fprintf(j->out, "%llu", v);
}

void json_bool(json_writer *j, int v)
{
    before_item(j);
    fputs(v ? "true" : "false", j->out);
}

void json_null(json_writer *j)
{
    before_item(j);
    fputs("null", j->out);
}

void json_kv_string(json_writer *j, const char *key, const char *s)
{
    json_key(j, key);
    json_string(j, s);
}

void json_kv_double(json_writer *j, const char *key, double v)
{
    json_key(j, key);
    json_double(j, v);
}

void json_kv_int(json_writer *j, const char *key, long long v)
{
    json_key(j, key);
    json_int(j, v);
}

void json_kv_uint(json_writer *j, const char *key, unsigned long long v)
{
    json_key(j, key);
    json_uint(j, v);
}

void json_kv_bool(json_writer *j, const char *key, int v)
{
    json_key(j, key);
    json_bool(j, v);
}

void json_kv_null(json_writer *j, const char *key)
{
    json_key(j, key);
    json_null(j);
}
