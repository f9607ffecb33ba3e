/* Unit checks of the runner's small parts: the PRNG, the JSON writer,
 * parameter resolution, and the RSS reader. */
#include "json_writer.h"
#include "measure.h"
#include "params.h"
#include "workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"

enum { DRAWS = 200000, SMALL_RANGE = 7, LOG_LO = 16, LOG_HI = 1 << 20 };

static void rng_same_seed_same_sequence(void)
{
    wl_rng a, b, c;
    wl_rng_seed(&a, 1);
    wl_rng_seed(&b, 1);
    wl_rng_seed(&c, 2);
    int differs = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t x = wl_rng_next(&a);
        CHECK(x == wl_rng_next(&b), "same seed gave different values at draw %d", i);
        differs |= x != wl_rng_next(&c);
    }
    CHECK(differs, "seeds 1 and 2 gave the same 100 values");
}

static void rng_seed_zero_is_usable(void)
{
    wl_rng r;
    wl_rng_seed(&r, 0);
    uint64_t or_all = 0;
    for (int i = 0; i < 8; i++)
        or_all |= wl_rng_next(&r);
    CHECK(or_all != 0, "seed 0 produced only zeros");
}

static void rng_range_stays_inside_and_covers(void)
{
    wl_rng r;
    wl_rng_seed(&r, 7);
    int seen[SMALL_RANGE] = {0};
    for (int i = 0; i < DRAWS; i++) {
        uint64_t v = wl_rng_range(&r, 10, 10 + SMALL_RANGE - 1);
        CHECK(v >= 10 && v < 10 + SMALL_RANGE, "range gave %llu", (unsigned long long)v);
        if (v >= 10 && v < 10 + SMALL_RANGE)
            seen[v - 10]++;
    }
    /* each of 7 values expects ~28,571 of 200,000 draws; a quarter of that
     * would mean a broken generator, not bad luck */
    for (int k = 0; k < SMALL_RANGE; k++)
        CHECK(seen[k] > DRAWS / SMALL_RANGE / 4, "value %d drawn %d times", 10 + k, seen[k]);
    CHECK(wl_rng_range(&r, 5, 5) == 5, "range of one value");
    uint64_t full = wl_rng_range(&r, 0, UINT64_MAX);
    (void)full; /* the whole range must not divide by zero or hang */
}

static void rng_logrange_is_log_uniform(void)
{
    wl_rng r;
    wl_rng_seed(&r, 11);
    /* octaves [16,32), [32,64), ... up to 2^20: log-uniform gives each about
     * the same share; uniform would put almost all draws in the top one */
    enum { OCTAVES = 16 };
    int per_octave[OCTAVES + 1] = {0};
    for (int i = 0; i < DRAWS; i++) {
        uint64_t v = wl_rng_logrange(&r, LOG_LO, LOG_HI);
        CHECK(v >= LOG_LO && v <= LOG_HI, "logrange gave %llu", (unsigned long long)v);
        int octave = 0;
        for (uint64_t x = v / LOG_LO; x > 1; x >>= 1)
            octave++;
        if (octave <= OCTAVES)
            per_octave[octave]++;
    }
    for (int k = 0; k < OCTAVES; k++)
        CHECK(per_octave[k] > DRAWS / OCTAVES / 2, "octave %d drawn %d times", k,
              per_octave[k]);
    CHECK(wl_rng_logrange(&r, 100, 100) == 100, "logrange of one value");
}

/* Writes with the JSON writer into a memory stream and returns the text. */
static char *json_text(void (*fill)(json_writer *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    json_writer j;
    json_init(&j, f);
    fill(&j);
    fclose(f);
    return buf;
}

static void fill_escapes(json_writer *j)
{
    json_object_begin(j);
    json_kv_string(j, "s", "q\"b\\n\nt\tc\x01");
    json_kv_double(j, "nan", NAN);
    json_kv_double(j, "inf", INFINITY);
    json_kv_double(j, "third", 1.0 / 3.0);
    json_kv_double(j, "tenth", 0.1);
    json_kv_string(j, "none", NULL);
    json_key(j, "list");
    json_array_begin(j);
    json_int(j, -1);
    json_uint(j, 18446744073709551615ULL);
    json_bool(j, 1);
    json_array_end(j);
    json_object_end(j);
}

static void json_escapes_and_nulls(void)
{
    char *text = json_text(fill_escapes);
    const char *want = "{\"s\":\"q\\\"b\\\\n\\nt\\tc\\u0001\",\"nan\":null,\"inf\":null,"
                       "\"third\":0.33333333333333331,\"tenth\":0.1,\"none\":null,"
                       "\"list\":[-1,18446744073709551615,true]}";
    CHECK(strcmp(text, want) == 0, "JSON text\n  got  %s\n  want %s", text, want);
    free(text);
}

static const workload param_workload = {
    .name = "w",
    .params = {{"pairs", 1000, 10, 1, 5000, "pairs"},
               {"size", 64, 0, 8, 4096, "bytes"},
               {NULL, 0, 0, 0, 0, NULL}},
};

static void params_defaults_quick_and_overrides(void)
{
    long long v[WL_MAX_PARAMS];
    char err[256];
    CHECK(params_count(&param_workload) == 2, "params_count");
    CHECK(params_resolve(&param_workload, 0, NULL, 0, v, err, sizeof err) == 0 && v[0] == 1000 &&
              v[1] == 64,
          "defaults");
    CHECK(params_resolve(&param_workload, 1, NULL, 0, v, err, sizeof err) == 0 && v[0] == 10 &&
              v[1] == 64,
          "quick sizes (quick 0 keeps the default)");
    const char *set[] = {"size=128", "pairs=5000", "size=4096"};
    CHECK(params_resolve(&param_workload, 1, set, 3, v, err, sizeof err) == 0 && v[0] == 5000 &&
              v[1] == 4096,
          "overrides, the last one winning");
}

static void params_refuse_with_the_range(void)
{
    long long v[WL_MAX_PARAMS];
    char err[256];
    const char *cases[][2] = {
        {"pairs=0", "'pairs' = '0' is not an integer in [1, 5000]"},
        {"pairs=5001", "'pairs' = '5001' is not an integer in [1, 5000]"},
        {"size=12k", "'size' = '12k' is not an integer in [8, 4096]"},
        {"size=", "'size' = '' is not an integer in [8, 4096]"},
        {"bogus=1", "unknown parameter 'bogus' for workload 'w' (parameters: pairs, size)"},
        {"pairs", "expected KEY=VALUE"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        err[0] = '\0';
        int rc = params_resolve(&param_workload, 0, &cases[i][0], 1, v, err, sizeof err);
        CHECK(rc == -1 && strstr(err, cases[i][1]), "'%s': rc %d, error '%s'", cases[i][0], rc,
              err);
        CHECK(!strchr(err, '\n'), "error is more than one line: '%s'", err);
    }
}

static void rss_follows_touched_memory(void)
{
    enum { MAPPED = 64 << 20 };
    long long before = measure_rss_bytes();
    CHECK(before > 0, "RSS not readable");
    unsigned char *p = mmap(NULL, MAPPED, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
    CHECK(p != MAP_FAILED, "mmap");
    if (p == MAP_FAILED)
        return;
    wl_touch(p, MAPPED, 0);
    long long after = measure_rss_bytes();
    /* every page was written, so all 64 MiB are resident now (half is a
     * margin for nothing: the kernel cannot skip written pages) */
    CHECK(after - before >= MAPPED / 2, "RSS grew by %lld after touching %d bytes",
          after - before, MAPPED);
    CHECK(measure_peak_rss_bytes() >= after, "VmHWM %lld below current RSS %lld",
          measure_peak_rss_bytes(), after);
    munmap(p, MAPPED);
    CHECK(measure_rss_bytes() < after, "RSS did not fall after munmap");
}

static void touch_writes_first_last_and_every_page(void)
{
    enum { LEN = 3 * 4096 + 10 };
    static unsigned char buf[LEN];
    wl_touch(buf, LEN, 0);
    CHECK(buf[0] && buf[4096] && buf[2 * 4096] && buf[3 * 4096] && buf[LEN - 1],
          "sparse touch missed a page or the last byte");
    CHECK(buf[1] == 0, "sparse touch wrote more than one byte per page");
    wl_touch(buf, LEN, 1);
    int all = 1;
    for (int i = 0; i < LEN; i++)
        all &= buf[i] != 0;
    CHECK(all, "touch with all = 1 left a byte unwritten");
}

int main(void)
{
    rng_same_seed_same_sequence();
    rng_seed_zero_is_usable();
    rng_range_stays_inside_and_covers();
    rng_logrange_is_log_uniform();
    json_escapes_and_nulls();
    params_defaults_quick_and_overrides();
    params_refuse_with_the_range();
    rss_follows_touched_memory();
    touch_writes_first_last_and_every_page();
    if (!failures)
        puts("runner units: every check holds");
    return failures ? 1 : 0;
}
