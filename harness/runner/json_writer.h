/* A small streaming JSON writer for the runner's documents.
 *
 * It writes straight to a FILE* and keeps only a fixed nesting stack, so
 * printing a document allocates nothing of its own. Commas are placed by the
 * writer; callers say what comes next (key, value, open, close). Numbers that
 * are not finite become null, as docs/schema.md asks. */
#ifndef HEAPLAB_JSON_WRITER_H
#define HEAPLAB_JSON_WRITER_H

#include <stdio.h>

enum { JSON_MAX_DEPTH = 16 };

typedef struct json_writer {
    FILE *out;
    int depth;
    /* has_items[d]: the container at depth d already holds an item, so the
     * next item needs a comma before it. */
    int has_items[JSON_MAX_DEPTH];
    /* A key was just written: the next value follows it without a comma. */
    int after_key;
} json_writer;

void json_init(json_writer *j, FILE *out);
void json_object_begin(json_writer *j);
void json_object_end(json_writer *j);
void json_array_begin(json_writer *j);
void json_array_end(json_writer *j);
void json_key(json_writer *j, const char *key);

void json_string(json_writer *j, const char *s);   /* NULL writes null */
void json_double(json_writer *j, double v);        /* non-finite writes null */
void json_int(json_writer *j, long long v);
void json_uint(json_writer *j, unsigned long long v);
void json_bool(json_writer *j, int v);
void json_null(json_writer *j);

/* key + value in one call, for the common flat members. */
void json_kv_string(json_writer *j, const char *key, const char *s);
void json_kv_double(json_writer *j, const char *key, double v);
void json_kv_int(json_writer *j, const char *key, long long v);
void json_kv_uint(json_writer *j, const char *key, unsigned long long v);
void json_kv_bool(json_writer *j, const char *key, int v);
void json_kv_null(json_writer *j, const char *key);

#endif
