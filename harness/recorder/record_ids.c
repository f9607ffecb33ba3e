/* Block ids by address: see record.h. A hash table sharded by address,
 * each shard open-addressed with linear probing and backward-shift
 * deletion (no tombstones), grown by doubling into a fresh mapping. Its
 * memory comes from mmap, never from the traced allocator. */
#include "record.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

enum { SHARD_BITS = 6, SHARDS = 1 << SHARD_BITS, SHARD_START_SLOTS = 1 << 12 };

typedef struct slot {
    uintptr_t key; /* 0 = empty */
    uint64_t id;
} slot;

/* Invariant: used < capacity / 2, capacity a power of two; every key sits
 * at or after its home slot with no empty slot between (linear probing). */
typedef struct shard {
    pthread_mutex_t lock;
    slot *slots;
    size_t capacity;
    size_t used;
    char pad[64 - sizeof(pthread_mutex_t) % 64];
} shard;

static shard shards[SHARDS];
static atomic_uint_fast64_t next_id = 1;

/* Where a block goes, chosen to keep the program's own locality: a
 * program touches blocks it allocated together, and a table that scatters
 * them costs a cache miss per call (with a few hundred thousand blocks
 * live, most of the recorder's time). The shard is the 64 KiB stretch the
 * block starts in; the slot is its 16-byte granule with the shard's bits
 * taken out, so neighbouring blocks sit in neighbouring slots, offset by
 * the address's top bits so that mappings far apart do not start on the
 * same slots. */
enum { GRANULE_SHIFT = 4, STRETCH_SHIFT = 16 };

static shard *shard_of(uintptr_t p)
{
    return &shards[(p >> STRETCH_SHIFT) & (SHARDS - 1)];
}

static uint64_t slot_hash(uintptr_t p)
{
    uint64_t in_stretch = (p >> GRANULE_SHIFT) & ((1u << (STRETCH_SHIFT - GRANULE_SHIFT)) - 1);
    uint64_t stretch = p >> (STRETCH_SHIFT + SHARD_BITS);
    uint64_t local = stretch << (STRETCH_SHIFT - GRANULE_SHIFT) | in_stretch;
    return local + (uint64_t)(p >> 32) * 0x9e3779b97f4a7c15ull;
}

static slot *map_slots(size_t n)
{
    void *m = mmap(NULL, n * sizeof(slot), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

static void put(slot *slots, size_t capacity, uintptr_t key, uint64_t id, uint64_t h)
{
    size_t mask = capacity - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        if (slots[i].key == 0 || slots[i].key == key) {
            slots[i].key = key;
            slots[i].id = id;
            return;
        }
    }
}

/* noinline: the slow path of an insertion, once per doubling */
__attribute__((noinline)) static int grow(shard *s)
{
    size_t capacity = s->capacity ? s->capacity * 2 : SHARD_START_SLOTS;
    slot *fresh = map_slots(capacity);
    if (!fresh)
        return -1;
    for (size_t i = 0; i < s->capacity; i++)
        if (s->slots[i].key)
            put(fresh, capacity, s->slots[i].key, s->slots[i].id, slot_hash(s->slots[i].key));
    if (s->slots)
        munmap(s->slots, s->capacity * sizeof(slot));
    s->slots = fresh;
    s->capacity = capacity;
    return 0;
}

void rec_ids_init(void)
{
    for (int i = 0; i < SHARDS; i++)
        pthread_mutex_init(&shards[i].lock, NULL);
}

static uint64_t insert(const void *p, uint64_t id)
{
    uintptr_t key = (uintptr_t)p;
    uint64_t h = slot_hash(key);
    shard *s = shard_of(key);
    pthread_mutex_lock(&s->lock);
    if ((s->used + 1) * 2 > s->capacity && grow(s) != 0) {
        pthread_mutex_unlock(&s->lock);
        return 0; /* out of memory for the map: the block goes unrecorded */
    }
    size_t mask = s->capacity - 1;
    size_t i = h & mask;
    while (s->slots[i].key != 0 && s->slots[i].key != key)
        i = (i + 1) & mask;
    /* a key already there is a block whose free we never saw: replace it */
    if (s->slots[i].key == 0)
        s->used++;
    s->slots[i].key = key;
    s->slots[i].id = id;
    pthread_mutex_unlock(&s->lock);
    return id;
}

uint64_t rec_ids_add(const void *p)
{
    return insert(p, atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed));
}

void rec_ids_restore(const void *p, uint64_t id)
{
    if (id)
        (void)insert(p, id);
}

static uint64_t find(shard *s, uintptr_t key, uint64_t h, int remove)
{
    if (!s->capacity)
        return 0;
    size_t mask = s->capacity - 1;
    size_t i = h & mask;
    while (s->slots[i].key != key) {
        if (s->slots[i].key == 0)
            return 0;
        i = (i + 1) & mask;
    }
    uint64_t id = s->slots[i].id;
    if (!remove)
        return id;
    /* backward shift: pull later entries of the run into the hole when
     * their home slot is at or before it */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; s->slots[j].key != 0; j = (j + 1) & mask) {
        size_t home = slot_hash(s->slots[j].key) & mask;
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            s->slots[hole] = s->slots[j];
            hole = j;
        }
    }
    s->slots[hole].key = 0;
    s->used--;
    return id;
}

uint64_t rec_ids_take(const void *p, int remove)
{
    uintptr_t key = (uintptr_t)p;
    uint64_t h = slot_hash(key);
    shard *s = shard_of(key);
    pthread_mutex_lock(&s->lock);
    uint64_t id = find(s, key, h, remove);
    pthread_mutex_unlock(&s->lock);
    return id;
}

void rec_ids_lock_all(void)
{
    for (int i = 0; i < SHARDS; i++)
        pthread_mutex_lock(&shards[i].lock);
}

void rec_ids_unlock_all(void)
{
    for (int i = SHARDS - 1; i >= 0; i--)
        pthread_mutex_unlock(&shards[i].lock);
}
