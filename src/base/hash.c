/*
 * icd_map (see hash.h): open addressing over a compact slot index, a paged dense entry
 * array and packed key chunks. Equality deletes put millions of keys here and probe it
 * once per data row, so the probe path touches one slot cache line in the common case,
 * then one entry, then the key bytes only when the 32-bit tag and 32 more hash bits agree.
 */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "base/array.h"
#include "base/hash.h"

/* Entry pages double from 16 entries (384 B) to 16384 (384 KiB), then stay at that size,
 * and key chunks double from 256 B to 256 KiB: a map's memory follows its content (a map
 * of one key costs about 1 KiB, not the 640 KiB of one full page and chunk), while big
 * maps still allocate in large blocks. Pages and chunks never move once allocated. */
#define FIRST_PAGE_BITS 4u /* the first page holds 16 entries */
#define PAGE_BITS 14u      /* full pages: 16384 entries (384 KiB) */
#define PAGE_SIZE (1u << PAGE_BITS)
#define GROW_PAGES (PAGE_BITS - FIRST_PAGE_BITS + 1u) /* pages 0..10: 16, 32, ..., 16384 */
/* entries held by the growing pages: 16 + 32 + ... + 16384 */
#define GROW_ENTRIES (((size_t)1 << (PAGE_BITS + 1u)) - ((size_t)1 << FIRST_PAGE_BITS))
#define FIRST_KEY_CHUNK 256u
#define KEY_CHUNK (256u * 1024u)
#define MIN_SLOTS 16u
#define MAX_ENTRIES 0xFFFFFFFEu /* entry number + 1 must fit the slot's low 32 bits */

typedef struct map_entry {
    const uint8_t *key;
    uint32_t len;
    uint32_t hash_lo; /* low 32 bits of the hash: a second filter before memcmp */
    uint64_t value;
} map_entry;

typedef struct key_chunk {
    struct key_chunk *next;
    size_t size;
    uint8_t data[];
} key_chunk;

struct icd_map {
    uint64_t *slots; /* 0 = empty, else (hash >> 32) << 32 | (entry number + 1) */
    size_t mask;     /* slot count - 1 (a power of two, at most 2^32) */
    size_t count;
    map_entry **pages;
    size_t npages, pages_cap;
    key_chunk *chunks;
    uint8_t *kp; /* free space in the newest chunk */
    size_t kleft;
    size_t chunk_size; /* size of the newest chunk (0 before the first) */
    size_t key_bytes;  /* bytes of all key chunks */
};

uint64_t icd_hash_bytes(const void *p, size_t n)
{
    return XXH3_64bits(p, n);
}

uint64_t icd_hash_u64(uint64_t v)
{
    /* The MurmurHash3 64-bit finaliser: every input bit affects every output bit. */
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdULL;
    v ^= v >> 33;
    v *= 0xc4ceb9fe1a85ec53ULL;
    v ^= v >> 33;
    return v;
}

/* The page holding entry i and i's place in it. */
static inline size_t page_of(size_t i, size_t *offset)
{
    if (i < GROW_ENTRIES) {
        size_t j = i + ((size_t)1 << FIRST_PAGE_BITS);
        unsigned p = 63u - (unsigned)__builtin_clzll((unsigned long long)j); /* floor(log2 j) */
        *offset = j - ((size_t)1 << p);
        return p - FIRST_PAGE_BITS;
    }
    size_t k = i - GROW_ENTRIES;
    *offset = k & (PAGE_SIZE - 1);
    return GROW_PAGES + (k >> PAGE_BITS);
}

static inline size_t page_size(size_t page)
{
    return page < GROW_PAGES ? (size_t)1 << (FIRST_PAGE_BITS + page) : PAGE_SIZE;
}

static inline map_entry *entry_at(const icd_map *m, size_t i)
{
    size_t off;
    size_t page = page_of(i, &off);
    return &m->pages[page][off];
}

static size_t slots_for(size_t expected)
{
    size_t n = MIN_SLOTS;
    /* Keep the load at or below 3/4 after `expected` inserts. */
    while (n < ((size_t)1 << 32) && n / 4 * 3 < expected)
        n *= 2;
    return n;
}

int icd_map_new(icd_map **out, size_t expected, icd_error *err)
{
    *out = NULL;
    icd_map *m = calloc(1, sizeof *m);
    if (!m) return icd_fail_nomem(err);
    size_t n = slots_for(expected);
    m->slots = calloc(n, sizeof *m->slots);
    if (!m->slots) {
        free(m);
        return icd_fail_nomem(err);
    }
    m->mask = n - 1;
    *out = m;
    return 0;
}

void icd_map_free(icd_map *m)
{
    if (!m) return;
    for (size_t i = 0; i < m->npages; i++)
        free(m->pages[i]);
    free(m->pages);
    for (key_chunk *c = m->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(m->slots);
    free(m);
}

size_t icd_map_count(const icd_map *m)
{
    return m->count;
}

size_t icd_map_memory(const icd_map *m)
{
    size_t entries = 0;
    for (size_t p = 0; p < m->npages; p++)
        entries += page_size(p);
    return sizeof *m + (m->mask + 1) * sizeof *m->slots + m->pages_cap * sizeof *m->pages +
           entries * sizeof(map_entry) + m->key_bytes;
}

/* Looks `key` up. Returns the entry or NULL; `*slot` is where the probe stopped (the empty
 * slot a new key goes into). */
static map_entry *probe(const icd_map *m, const void *key, size_t len, uint64_t hash, size_t *slot)
{
    uint32_t tag = (uint32_t)(hash >> 32);
    uint32_t lo = (uint32_t)hash;
    size_t i = tag & m->mask;
    for (;;) {
        uint64_t s = m->slots[i];
        if (s == 0) {
            *slot = i;
            return NULL;
        }
        if ((uint32_t)(s >> 32) == tag) {
            map_entry *e = entry_at(m, (size_t)(uint32_t)s - 1);
            if (e->hash_lo == lo && e->len == len && (len == 0 || !memcmp(e->key, key, len)))
                return e;
        }
        i = (i + 1) & m->mask;
    }
}

uint64_t *icd_map_find(const icd_map *m, const void *key, size_t len, uint64_t hash)
{
    size_t slot;
    map_entry *e = probe(m, key, len, hash, &slot);
    return e ? &e->value : NULL;
}

/* Doubles the index. Slots carry the bits that choose their home (tag & mask), so the
 * rebuild never touches entries or keys. */
static int grow_index(icd_map *m, icd_error *err)
{
    size_t n = (m->mask + 1) * 2;
    if (n > ((size_t)1 << 32))
        return icd_fail(err, ICD_ENOMEM, NULL, -1, "hash table is full (%zu keys)", m->count);
    uint64_t *slots = calloc(n, sizeof *slots);
    if (!slots) return icd_fail_nomem(err);
    size_t mask = n - 1;
    for (size_t i = 0; i <= m->mask; i++) {
        uint64_t s = m->slots[i];
        if (!s) continue;
        size_t j = (uint32_t)(s >> 32) & mask;
        while (slots[j])
            j = (j + 1) & mask;
        slots[j] = s;
    }
    free(m->slots);
    m->slots = slots;
    m->mask = mask;
    return 0;
}

static const uint8_t *store_key(icd_map *m, const void *key, size_t len)
{
    static const uint8_t empty[1] = {0};
    if (len == 0) return empty;
    if (m->kleft < len) {
        size_t size = !m->chunk_size              ? FIRST_KEY_CHUNK
                      : m->chunk_size < KEY_CHUNK ? 2 * m->chunk_size
                                                  : KEY_CHUNK;
        m->chunk_size = size;
        if (size < len) size = len;
        key_chunk *c = malloc(sizeof *c + size);
        if (!c) return NULL;
        c->size = size;
        c->next = m->chunks;
        m->chunks = c;
        m->kp = c->data;
        m->kleft = size;
        m->key_bytes += sizeof *c + size;
    }
    uint8_t *p = m->kp;
    memcpy(p, key, len);
    m->kp += len;
    m->kleft -= len;
    return p;
}

static map_entry *new_entry(icd_map *m)
{
    size_t off;
    size_t page = page_of(m->count, &off);
    if (page == m->npages) {
        if (ICD_ARRAY_RESERVE(m->pages, m->pages_cap, m->npages + 1, 8)) return NULL;
        m->pages[m->npages] = malloc(page_size(page) * sizeof(map_entry));
        if (!m->pages[m->npages]) return NULL;
        m->npages++;
    }
    return &m->pages[page][off];
}

int icd_map_upsert(icd_map *m, const void *key, size_t len, uint64_t hash, uint64_t **value,
                   bool *inserted, icd_error *err)
{
    size_t slot;
    map_entry *e = probe(m, key, len, hash, &slot);
    if (inserted) *inserted = e == NULL;
    if (e) {
        *value = &e->value;
        return 0;
    }
    if (len > UINT32_MAX)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "hash key of %zu bytes is too long", len);
    if (m->count >= MAX_ENTRIES)
        return icd_fail(err, ICD_ENOMEM, NULL, -1, "hash table is full (%zu keys)", m->count);
    if (m->count + 1 > (m->mask + 1) / 4 * 3) {
        ICD_TRY(grow_index(m, err));
        probe(m, key, len, hash, &slot); /* the slot moved; the key is still absent */
    }
    e = new_entry(m);
    const uint8_t *k = e ? store_key(m, key, len) : NULL;
    if (!k) return icd_fail_nomem(err);
    e->key = k;
    e->len = (uint32_t)len;
    e->hash_lo = (uint32_t)hash;
    e->value = 0;
    m->count++;
    m->slots[slot] = (hash >> 32) << 32 | (uint64_t)m->count; /* entry number + 1 */
    *value = &e->value;
    return 0;
}

int icd_map_put(icd_map *m, const void *key, size_t len, uint64_t hash, uint64_t value,
                icd_error *err)
{
    uint64_t *v;
    ICD_TRY(icd_map_upsert(m, key, len, hash, &v, NULL, err));
    *v = value;
    return 0;
}

icd_map_item icd_map_at(const icd_map *m, size_t i)
{
    icd_map_item it = {NULL, 0, NULL};
    if (i >= m->count) return it;
    map_entry *e = entry_at(m, i);
    it.key = e->key;
    it.len = e->len;
    it.value = &e->value;
    return it;
}
