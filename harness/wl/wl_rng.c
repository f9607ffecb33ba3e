/* The workload PRNG: xoshiro256** (Blackman & Vigna), its state filled by
 * splitmix64 so that any 64-bit seed, 0 included, gives a good state. */
#include "workload.h"

#include <math.h>

/* splitmix64's increment and mixing constants, and xoshiro256**'s
 * multipliers, shift and rotations, as published by their authors. */
#define SPLITMIX_GAMMA 0x9e3779b97f4a7c15ULL
#define SPLITMIX_MIX1 0xbf58476d1ce4e5b9ULL
#define SPLITMIX_MIX2 0x94d049bb133111ebULL
enum { SPLITMIX_SHIFT1 = 30, SPLITMIX_SHIFT2 = 27, SPLITMIX_SHIFT3 = 31 };
enum { XOSHIRO_MUL1 = 5, XOSHIRO_MUL2 = 9, XOSHIRO_ROT1 = 7, XOSHIRO_SHIFT = 17,
       XOSHIRO_ROT2 = 45 };
/* a double in [0, 1) from the top 53 bits */
enum { DOUBLE_MANTISSA_BITS = 53 };

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += SPLITMIX_GAMMA);
    z = (z ^ (z >> SPLITMIX_SHIFT1)) * SPLITMIX_MIX1;
    z = (z ^ (z >> SPLITMIX_SHIFT2)) * SPLITMIX_MIX2;
    return z ^ (z >> SPLITMIX_SHIFT3);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void wl_rng_seed(wl_rng *r, uint64_t seed)
{
    uint64_t state = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&state);
}

uint64_t wl_rng_next(wl_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * XOSHIRO_MUL1, XOSHIRO_ROT1) * XOSHIRO_MUL2;
    uint64_t t = s[1] << XOSHIRO_SHIFT;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], XOSHIRO_ROT2);
    return result;
}

uint64_t wl_rng_range(wl_rng *r, uint64_t lo, uint64_t hi)
{
    if (hi <= lo)
        return lo;
    uint64_t span = hi - lo + 1;
    if (span == 0) /* the whole 64-bit range */
        return wl_rng_next(r);
    /* Lemire's multiply-shift with rejection: unbiased, usually one
     * multiplication and no division */
    unsigned __int128 m = (unsigned __int128)wl_rng_next(r) * span;
    uint64_t low = (uint64_t)m;
    if (low < span) {
        uint64_t threshold = -span % span;
        while (low < threshold) {
            m = (unsigned __int128)wl_rng_next(r) * span;
            low = (uint64_t)m;
        }
    }
    return lo + (uint64_t)(m >> 64);
}

uint64_t wl_rng_logrange(wl_rng *r, uint64_t lo, uint64_t hi)
{
    if (lo < 1)
        lo = 1;
    if (hi <= lo)
        return lo;
    double u = (double)(wl_rng_next(r) >> (64 - DOUBLE_MANTISSA_BITS)) /
               (double)(1ULL << DOUBLE_MANTISSA_BITS);
    /* log-uniform over the real interval [lo, hi + 1), then floored: every
     * integer in [lo, hi] is reachable and each octave is equally likely */
    double x = floor((double)lo * pow(((double)hi + 1.0) / (double)lo, u));
    if (x < (double)lo)
        return lo;
    if (x > (double)hi)
        return hi;
    return (uint64_t)x;
}
