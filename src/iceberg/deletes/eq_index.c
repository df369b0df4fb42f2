/*
 * The equality-delete key index (see eq_index.h for the layout and the API).
 *
 * Hash bits: the top P bits pick the partition; the low 32 bits pick the home slot
 * (multiply-shift range reduction, so tables need not be powers of two and stay close to
 * their load factor); bits 24..55 pick the Bloom block and the low 32 bits, multiplied by
 * eight odd constants, pick one bit in each word of the block; the high 32 bits are the
 * tag of a generic slot. The hash (icd_hash_short) mixes every bit into all 64, so the
 * fields are independent enough.
 *
 * Keys wait in their partition's bucket (chunks of length-prefixed keys) until the
 * partition is built; the bucket is freed as soon as its table exists, so a build holds
 * the keys about twice at the peak, never more.
 *
 * Full-size chunks are carved from slabs of SLAB_BYTES, each holding the chunks of one
 * group of partitions (a sixteenth of them); a group's slabs are unmapped when its last
 * partition is built. Returning memory by the slab keeps the peak near one copy of the
 * keys plus a group's share while costing a few dozen munmap calls, where one mapping per
 * chunk cost one each (a TLB flush apiece: 1,026 calls, 0.29 s, for 5M keys). From a
 * group's third slab on, a slab is one huge page, and a big region is whole huge pages
 * (base/bigmem.h): filling 20M long keys took 51,000 page faults, about 1 s of system
 * time, and takes 1,900.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/bigmem.h"
#include "base/bits.h"
#include "base/hash.h"
#include "iceberg/deletes/eq_index.h"

#define MAX_PART_BITS 10u     /* at most 1024 partitions */
#define KEYS_PER_PART 16384u  /* target keys per partition: its table stays in L2 */
#define BLOOM_MIN_KEYS 65536u /* smaller indexes fit the caches: no filter */
#define FIRST_CHUNK 256u
#define MAX_CHUNK (65536u - 64u) /* with the header: 64 KiB, 16 pages */
#define MAX_KEY (1u << 30)
#define HUGE_MIN (4u << 20) /* indexes from 4 MiB on get their own mapping (huge pages) */
#define LONG_LEN 0xFFu      /* length byte of a key of 255 bytes or more (u32 follows) */

typedef struct chunk {
    struct chunk *next;
    uint32_t used, cap;
    bool in_slab; /* carved from its group's slab (full-size chunks) */
    uint8_t data[];
} chunk;

#define SLAB_BYTES ((size_t)2 << 20)
#define GROUP_BITS 4u /* at most 16 groups of partitions */
_Static_assert(SLAB_BYTES % ((sizeof(chunk) + MAX_CHUNK + 63) & ~(size_t)63) == 0,
               "full-size chunks fill a slab exactly");

/* A slab's header lives outside it: the slab is then exactly 32 full-size chunks (each
 * 64 KiB with its header). Inside, it pushed the 32nd chunk of a group into a slab of its
 * own -- a whole huge page zeroed for one chunk, 32 MiB a builder at 5M keys. */
typedef struct slab {
    struct slab *next;
    uint8_t *mem;
    size_t used; /* bytes carved */
} slab;

typedef struct group {
    slab *slabs;   /* the current one first */
    size_t nslabs; /* mapped so far */
    size_t left;   /* partitions not built yet (under the builder's mu) */
} group;

/* A group's slabs from this one on are huge pages: the last slab of a group is partly
 * filled, and a huge page counts whole in the RSS, so small indexes (a few slabs a group,
 * and one builder per loading thread) keep 4 KiB pages: 1M long keys on two threads took
 * 34 MiB, then 82 MiB with every slab huge. A builder that expects at least
 * HUGE_GROUP_KEYS keys a group (2 MiB at 8 bytes a key or more) has them all huge: its
 * partly filled last slabs are then at most about half of its memory, and the two first
 * slabs of 16 groups in 4 KiB pages were 16,000 faults at 5M keys (~10 us each on our VMs:
 * 0.15-0.4 s of system time; 5M long keys on one thread 1.03 -> 0.85 s, RSS 101 -> 116
 * MiB, on two 99 -> 149 MiB). */
#define HUGE_SLAB_FROM 3u
#define HUGE_GROUP_KEYS (SLAB_BYTES / 8)

typedef struct bucket {
    chunk *head, *tail;
    /* The tail's free room. Its `used` is kept here while keys are added (flush_tail
     * writes it back): an add then touches the bucket and the bytes it writes, not the
     * tail's header too -- with a thousand partitions that header was a cache miss a key. */
    uint8_t *wp, *wend;
    size_t nkeys, nfixed;   /* keys, and those of the fixed form */
    size_t bytes, oddbytes; /* entry bytes of all keys, of the keys not of the fixed form */
    uint32_t next_cap;
} bucket;

typedef struct part {
    uint8_t *mem; /* its part of the index's region */
    size_t off;   /* mem - region */
    uint32_t *bloom;
    uint32_t nblocks; /* 0 = no filter */
    uint32_t nwords;  /* fixed table */
    uint64_t *words;  /* 0 = empty; the key word 0 is has_zero */
    uint64_t *slots;  /* generic table: 0 = empty, else tag << 32 | (arena offset + 1) */
    uint32_t nslots;
    bool has_zero;
    const uint8_t *arena;
    size_t bytes;
} part;

struct ice_eq_index {
    part *parts;
    unsigned pbits;
    bool fixed;     /* the fixed-width table is used */
    bool bloom;     /* every partition has a filter */
    uint32_t flen;  /* its key length (8..16) */
    uint8_t pfx[8]; /* and the first flen - 8 bytes every such key has */
    size_t count;
    size_t memory;
    uint8_t *region; /* the partitions' memory, one allocation */
    size_t region_bytes;
    bool mapped; /* region is an mmap */
};

struct ice_eq_builder {
    ice_eq_index *ix;
    bucket *buckets;
    size_t nparts;
    group *groups;
    unsigned gshift;      /* partition p is in group p >> gshift */
    uint32_t first_chunk; /* size of a bucket's first chunk */
    size_t huge_from;     /* a group's slabs from this one on are huge pages (1-based) */
    size_t added;
    bool have_form;     /* flen/pfx set from the first key of 8..16 bytes */
    bool form_conflict; /* merged builders saw different forms: no fixed table */
    uint32_t flen;
    uint8_t pfx[8];
    size_t nfixed;
    bool sealed, bloom, finished;
    atomic_size_t next; /* next partition to claim */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t done; /* partitions built (or failed), under mu */
    int rc;
    icd_error err;
};

static const uint32_t SALT[8] = {0x47b6137bu, 0x44974d91u, 0x8824ad5bu, 0xa2b7289du,
                                 0x705495c7u, 0x2df1424bu, 0x9efc4947u, 0x5c6bfb31u};

uint64_t ice_eq_hash(const void *key, size_t len)
{
    return icd_hash_short(key, len); /* keys are mostly 9 bytes (a tag and a long) */
}

static inline uint32_t reduce(uint32_t x, uint32_t n)
{
    return (uint32_t)(((uint64_t)x * n) >> 32);
}

static inline size_t part_of(const ice_eq_index *ix, uint64_t h)
{
    return ix->pbits ? (size_t)(h >> (64u - ix->pbits)) : 0;
}

static inline bool form_matches(uint32_t flen, const uint8_t *pfx, const uint8_t *key, size_t len)
{
    if (len != flen) return false;
    if (flen == 9) return key[0] == pfx[0]; /* the common case: one tag byte, 8 value bytes */
    return flen == 8 || memcmp(key, pfx, flen - 8) == 0;
}

static inline uint64_t key_word(const uint8_t *key, size_t len)
{
    return icd_load_le64(key + len - 8);
}

static inline size_t entry_size(size_t len)
{
    return (len < LONG_LEN ? 1 : 5) + len;
}

static inline uint8_t *put_entry(uint8_t *p, const void *key, size_t len)
{
    if (len < LONG_LEN) {
        *p++ = (uint8_t)len;
    } else {
        *p++ = LONG_LEN;
        uint32_t n = (uint32_t)len;
        memcpy(p, &n, 4); /* native order: read back by get_entry only */
        p += 4;
    }
    memcpy(p, key, len);
    return p + len;
}

static inline const uint8_t *get_entry(const uint8_t *p, size_t *len)
{
    if (*p != LONG_LEN) {
        *len = *p;
        return p + 1;
    }
    uint32_t n;
    memcpy(&n, p + 1, 4);
    *len = n;
    return p + 5;
}

/* ---- builder ------------------------------------------------------------------------- */

int ice_eq_builder_new(ice_eq_builder **out, size_t expected, icd_error *err)
{
    *out = NULL;
    unsigned pbits = 0;
    while (pbits < MAX_PART_BITS && ((size_t)KEYS_PER_PART << pbits) < expected)
        pbits++;
    ice_eq_builder *b = calloc(1, sizeof *b);
    if (!b) return icd_fail_nomem(err);
    b->nparts = (size_t)1 << pbits;
    /* big builders start with full-size chunks (from slabs): untouched pages cost
     * nothing, and the buckets' memory goes back to the system as partitions are built */
    b->first_chunk = expected >= BLOOM_MIN_KEYS ? MAX_CHUNK : FIRST_CHUNK;
    b->buckets = calloc(b->nparts, sizeof *b->buckets);
    b->gshift = pbits > GROUP_BITS ? pbits - GROUP_BITS : 0;
    size_t ngroups = b->nparts >> b->gshift;
    b->groups = calloc(ngroups, sizeof *b->groups);
    for (size_t g = 0; b->groups && g < ngroups; g++)
        b->groups[g].left = (size_t)1 << b->gshift;
    b->huge_from = expected / ngroups >= HUGE_GROUP_KEYS ? 1 : HUGE_SLAB_FROM;
    b->ix = calloc(1, sizeof *b->ix);
    if (b->ix) b->ix->parts = calloc(b->nparts, sizeof *b->ix->parts);
    if (!b->buckets || !b->groups || !b->ix || !b->ix->parts) {
        if (b->ix) free(b->ix->parts);
        free(b->ix);
        free(b->buckets);
        free(b->groups);
        free(b);
        return icd_fail_nomem(err);
    }
    b->ix->pbits = pbits;
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    icd_error_clear(&b->err);
    atomic_init(&b->next, 0);
    *out = b;
    return 0;
}

/* Frees a bucket's heap chunks (those in slabs go with their group's slabs). */
static void free_bucket(bucket *bk)
{
    for (chunk *c = bk->head, *n; c; c = n) {
        n = c->next;
        if (!c->in_slab) free(c);
    }
    bk->head = bk->tail = NULL;
    bk->wp = bk->wend = NULL;
}

/* The tail chunk's `used`, from the bucket's write position. */
static void flush_tail(bucket *bk)
{
    if (bk->tail) bk->tail->used = (uint32_t)(bk->wp - bk->tail->data);
}

static void free_slabs(group *g)
{
    for (slab *s = g->slabs, *n; s; s = n) {
        n = s->next;
        icd_bigmem_unmap(s->mem, SLAB_BYTES);
        free(s);
    }
    g->slabs = NULL;
}

/* A full-size chunk (bytes, header included) from the slabs of partition p's group. */
static chunk *slab_chunk(ice_eq_builder *b, size_t p, size_t bytes)
{
    group *g = &b->groups[p >> b->gshift];
    slab *s = g->slabs;
    if (!s || SLAB_BYTES - s->used < bytes) {
        if (!(s = malloc(sizeof *s))) return NULL;
        if (!(s->mem = icd_bigmem_map(SLAB_BYTES, g->nslabs + 1 >= b->huge_from))) {
            free(s);
            return NULL;
        }
        g->nslabs++;
        s->next = g->slabs;
        s->used = 0;
        g->slabs = s;
    }
    chunk *c = (chunk *)(s->mem + s->used);
    s->used += (bytes + 63) & ~(size_t)63;
    return c;
}

int ice_eq_builder_add(ice_eq_builder *b, const void *key, size_t len, icd_error *err)
{
    if (len > MAX_KEY)
        return icd_fail(err, ICD_EINVALID, NULL, -1, "equality delete key of %zu bytes is too long",
                        len);
    if (!b->have_form && len >= 8 && len <= 16) {
        b->have_form = true;
        b->flen = (uint32_t)len;
        memcpy(b->pfx, key, len - 8);
    }
    uint64_t h = ice_eq_hash(key, len);
    size_t p = part_of(b->ix, h);
    bucket *bk = &b->buckets[p];
    size_t es = entry_size(len);
    if (!bk->tail || (size_t)(bk->wend - bk->wp) < es) {
        uint32_t cap = bk->next_cap ? bk->next_cap : b->first_chunk;
        bk->next_cap = cap < MAX_CHUNK / 2 ? cap * 2 : MAX_CHUNK;
        if (cap < es) cap = (uint32_t)es;
        /* Full-size chunks come from slabs, unmapped group by group as partitions are
         * built, so their memory goes back to the system (the heap would keep it): the
         * region fills as the buckets empty (see the top of the file). */
        bool in_slab = cap == MAX_CHUNK;
        chunk *c = in_slab ? slab_chunk(b, p, sizeof *c + cap) : malloc(sizeof *c + cap);
        if (!c) return icd_fail_nomem(err);
        flush_tail(bk);
        c->in_slab = in_slab;
        c->next = NULL;
        c->used = 0;
        c->cap = cap;
        if (bk->tail)
            bk->tail->next = c;
        else
            bk->head = c;
        bk->tail = c;
        bk->wp = c->data;
        bk->wend = c->data + cap;
    }
    put_entry(bk->wp, key, len);
    bk->wp += es;
    /* The bucket's next line, fetched now: a bucket gets about one key in nparts, so the
     * line is written a few thousand adds later. Without it, every new bucket line was a
     * store miss; the misses filled the store buffer and stalled the adds (20M pair keys,
     * one thread: 6.33 to 5.72 s; ice_eq_builder_add 17 to 12 % of the samples). Baseline
     * x86-64 has no prefetchw: a plain prefetch brings a line that no other core holds in
     * the exclusive state, ready to be written. The address may lie past the chunk: a
     * prefetch does not fault, and it is formed as an integer, not as a pointer out of
     * the chunk's bounds. */
    __builtin_prefetch((const void *)((uintptr_t)bk->wp + 64), 1);
    bk->nkeys++;
    bk->bytes += es;
    if (b->have_form && form_matches(b->flen, b->pfx, key, len)) {
        bk->nfixed++;
        b->nfixed++;
    } else {
        bk->oddbytes += es;
    }
    b->added++;
    return 0;
}

size_t ice_eq_builder_added(const ice_eq_builder *b)
{
    return b->added;
}

int ice_eq_builder_merge(ice_eq_builder *into, ice_eq_builder *from, icd_error *err)
{
    if (into->nparts != from->nparts || into->sealed || from->sealed)
        return icd_fail(err, ICD_EINTERNAL, NULL, -1, "equality index builders do not match");
    /* The fixed form is the first key of 8..16 bytes; builders that saw different ones
     * count their keys against different forms: then no key uses the fixed table. */
    if (from->have_form && into->have_form &&
        (from->flen != into->flen || memcmp(from->pfx, into->pfx, from->flen - 8)))
        into->form_conflict = true;
    if (from->have_form && !into->have_form) {
        into->have_form = true;
        into->flen = from->flen;
        memcpy(into->pfx, from->pfx, sizeof into->pfx);
    }
    into->form_conflict |= from->form_conflict;
    for (size_t p = 0; p < into->nparts; p++) {
        bucket *a = &into->buckets[p], *f = &from->buckets[p];
        if (!f->head) continue;
        flush_tail(a);
        flush_tail(f);
        if (a->tail)
            a->tail->next = f->head;
        else
            a->head = f->head;
        a->tail = f->tail;
        a->wp = f->wp;
        a->wend = f->wend;
        a->nkeys += f->nkeys;
        a->nfixed += f->nfixed;
        a->bytes += f->bytes;
        a->oddbytes += f->oddbytes;
        if (f->next_cap > a->next_cap) a->next_cap = f->next_cap;
        f->head = f->tail = NULL;
        f->wp = f->wend = NULL;
    }
    for (size_t g = 0; g < (into->nparts >> into->gshift); g++) { /* their slabs follow */
        slab **end = &into->groups[g].slabs;
        while (*end)
            end = &(*end)->next;
        *end = from->groups[g].slabs;
        into->groups[g].nslabs += from->groups[g].nslabs;
        from->groups[g].slabs = NULL;
    }
    into->added += from->added;
    into->nfixed += from->nfixed;
    ice_eq_builder_free(from);
    return 0;
}

/* Slots for n keys: the fixed-width table at load <= 0.5 (a miss is decided in ~2.5 slots
 * of one cache line; 16 bytes a key), the generic one at load <= 0.7 (its slots only lead
 * to the interned keys, which a hit reads anyway: memory counts more there). */
static size_t table_size(size_t n, bool fixed)
{
    if (!n) return 0;
    return fixed ? 2 * n + 1 : n + n * 3 / 7 + 1;
}

/* The sizes of partition p's parts; false when a part would not fit its 32-bit counts. */
typedef struct part_sizes {
    size_t nblocks, nwords, nslots, abytes, zeroed, total;
} part_sizes;

static bool sizes_of(const ice_eq_builder *b, size_t p, part_sizes *z)
{
    const bucket *bk = &b->buckets[p];
    size_t nfix = b->ix->fixed ? bk->nfixed : 0;
    z->abytes = b->ix->fixed ? bk->oddbytes : bk->bytes;
    z->nwords = table_size(nfix, true);
    z->nslots = table_size(bk->nkeys - nfix, false);
    /* with a filter, every partition has one (an empty one rejects every key) */
    z->nblocks = b->bloom ? (bk->nkeys + 31) / 32 + !bk->nkeys : 0;
    z->zeroed = z->nblocks * 32 + z->nwords * 8 + z->nslots * 8;
    z->total = (z->zeroed + z->abytes + 63) & ~(size_t)63;
    return z->nwords <= UINT32_MAX && z->nslots <= UINT32_MAX && z->nblocks <= UINT32_MAX &&
           z->abytes < UINT32_MAX;
}

/* One region for all partitions: random probes over a big index then stay within a few
 * huge pages (where the system has them) instead of missing the TLB on every key. */
static int alloc_region(ice_eq_index *ix, size_t bytes)
{
    if (!bytes) return 0;
    if (bytes >= HUGE_MIN) {
        ix->region = icd_bigmem_map(bytes, true); /* (filled whole) */
        if (!ix->region) return -1;
        ix->region_bytes = bytes;
        ix->mapped = true;
        return 0;
    }
    ix->region = aligned_alloc(64, bytes);
    ix->region_bytes = bytes;
    return ix->region ? 0 : -1;
}

void ice_eq_builder_seal(ice_eq_builder *b)
{
    if (b->sealed) return;
    ice_eq_index *ix = b->ix;
    /* The fixed table pays when nearly every key has the fixed form (a null key or two
     * go to the generic table of their partition). */
    ix->fixed =
        b->have_form && !b->form_conflict && b->nfixed > 0 && b->nfixed >= b->added - b->added / 8;
    ix->flen = b->flen;
    memcpy(ix->pfx, b->pfx, sizeof ix->pfx);
    b->bloom = ix->bloom = b->added >= BLOOM_MIN_KEYS;
    b->sealed = true;
    size_t total = 0;
    for (size_t p = 0; p < b->nparts; p++) {
        flush_tail(&b->buckets[p]);
        part_sizes z;
        if (!sizes_of(b, p, &z)) {
            b->rc = icd_fail(&b->err, ICD_ENOMEM, NULL, -1,
                             "equality delete index partition too large (%zu keys)",
                             b->buckets[p].nkeys);
            break;
        }
        ix->parts[p].off = total;
        total += z.total;
    }
    if (!b->rc && alloc_region(ix, total)) b->rc = icd_fail_nomem(&b->err);
    if (b->rc) { /* nothing to build: finish reports the error */
        atomic_store(&b->next, b->nparts);
        b->done = b->nparts;
        return;
    }
    for (size_t p = 0; p < b->nparts && ix->region; p++) /* no region: no keys at all */
        ix->parts[p].mem = ix->region + ix->parts[p].off;
}

static void bloom_set(uint32_t *block, uint64_t h)
{
    uint32_t x = (uint32_t)h;
    for (int i = 0; i < 8; i++)
        block[i] |= 1u << ((x * SALT[i]) >> 27);
}

static inline bool bloom_test(const uint32_t *block, uint64_t h)
{
    uint32_t x = (uint32_t)h;
    uint32_t miss = 0;
    for (int i = 0; i < 8; i++)
        miss |= ~block[i] & (1u << ((x * SALT[i]) >> 27));
    return miss == 0;
}

static inline const uint32_t *bloom_block(const part *pt, uint64_t h)
{
    return pt->bloom + 8 * (size_t)reduce((uint32_t)(h >> 24), pt->nblocks);
}

/* Whether the len bytes at a and b are equal: keys of 8 to 32 bytes (a string key is a
 * tag, a length and the bytes) by overlapping 8-byte words, without a call. */
static inline bool key_equal(const uint8_t *a, const uint8_t *b, size_t len)
{
    if (len < 8 || len > 32) return memcmp(a, b, len) == 0;
    uint64_t x = icd_load_le64(a) ^ icd_load_le64(b);
    x |= icd_load_le64(a + len - 8) ^ icd_load_le64(b + len - 8);
    if (len > 16) {
        x |= icd_load_le64(a + 8) ^ icd_load_le64(b + 8);
        x |= icd_load_le64(a + len - 16) ^ icd_load_le64(b + len - 16);
    }
    return x == 0;
}

/* Whether generic slot i holds `key` (its interned bytes). */
static inline bool slot_holds(const part *pt, uint32_t i, const uint8_t *key, size_t len)
{
    size_t l2;
    const uint8_t *k2 = get_entry(pt->arena + (uint32_t)pt->slots[i] - 1, &l2);
    return l2 == len && key_equal(k2, key, len);
}

static int build_part(ice_eq_builder *b, size_t p, size_t *count, icd_error *err)
{
    (void)err; /* sizes and memory were checked when sealing */
    ice_eq_index *ix = b->ix;
    bucket *bk = &b->buckets[p];
    part *pt = &ix->parts[p];
    part_sizes z;
    sizes_of(b, p, &z);
    if (!z.total) { /* no key and no filter: the partition stays empty */
        *count = 0;
        return 0;
    }
    if (z.zeroed && !ix->mapped) memset(pt->mem, 0, z.zeroed); /* a fresh mapping is zero */
    size_t bloom_bytes = z.nblocks * 32, words_bytes = z.nwords * 8;
    size_t nblocks = z.nblocks;
    pt->bloom = (uint32_t *)pt->mem;
    pt->nblocks = (uint32_t)z.nblocks;
    pt->words = (uint64_t *)(pt->mem + bloom_bytes);
    pt->nwords = (uint32_t)z.nwords;
    pt->slots = (uint64_t *)(pt->mem + bloom_bytes + words_bytes);
    pt->nslots = (uint32_t)z.nslots;
    uint8_t *arena = pt->mem + z.zeroed, *ap = arena;
    pt->arena = arena;
    pt->bytes = z.total;
    size_t n = 0;
    for (const chunk *c = bk->head; c; c = c->next) {
        const uint8_t *q = c->data, *end = c->data + c->used;
        while (q < end) {
            size_t len;
            const uint8_t *key = get_entry(q, &len);
            const uint8_t *entry = q;
            q = key + len;
            uint64_t h = ice_eq_hash(key, len);
            if (nblocks) bloom_set((uint32_t *)bloom_block(pt, h), h);
            if (ix->fixed && form_matches(ix->flen, ix->pfx, key, len)) {
                uint64_t w = key_word(key, len);
                if (w == 0) {
                    n += !pt->has_zero;
                    pt->has_zero = true;
                    continue;
                }
                uint32_t i = reduce((uint32_t)h, pt->nwords);
                while (pt->words[i] && pt->words[i] != w)
                    i = i + 1 == pt->nwords ? 0 : i + 1;
                if (!pt->words[i]) {
                    pt->words[i] = w;
                    n++;
                }
                continue;
            }
            uint32_t tag = (uint32_t)(h >> 32);
            uint32_t i = reduce((uint32_t)h, pt->nslots);
            for (;;) {
                uint64_t s = pt->slots[i];
                if (!s) {
                    pt->slots[i] = (uint64_t)tag << 32 | (uint64_t)(ap - arena + 1);
                    size_t es = (size_t)(key + len - entry);
                    memcpy(ap, entry, es);
                    ap += es;
                    n++;
                    break;
                }
                if ((uint32_t)(s >> 32) == tag && slot_holds(pt, i, key, len))
                    break; /* duplicate */
                i = i + 1 == pt->nslots ? 0 : i + 1;
            }
        }
    }
    free_bucket(bk);
    *count = n;
    return 0;
}

void ice_eq_builder_help(ice_eq_builder *b)
{
    if (!b->sealed) return;
    for (;;) {
        size_t p = atomic_fetch_add(&b->next, 1);
        if (p >= b->nparts) return;
        icd_error err;
        icd_error_clear(&err);
        size_t count = 0;
        int rc = build_part(b, p, &count, &err);
        pthread_mutex_lock(&b->mu);
        if (rc && !b->rc) {
            b->rc = rc;
            b->err = err;
        }
        b->ix->count += count;
        b->ix->memory += b->ix->parts[p].bytes;
        group *g = &b->groups[p >> b->gshift], done_group = {0};
        if (--g->left == 0) { /* no key of the group is read any more */
            done_group.slabs = g->slabs;
            g->slabs = NULL;
        }
        if (++b->done == b->nparts) pthread_cond_broadcast(&b->cv);
        pthread_mutex_unlock(&b->mu);
        free_slabs(&done_group);
    }
}

int ice_eq_builder_finish(ice_eq_builder *b, ice_eq_index **out, icd_error *err)
{
    *out = NULL;
    if (b->finished) return icd_fail(err, ICD_EINTERNAL, NULL, -1, "equality index built twice");
    ice_eq_builder_seal(b);
    ice_eq_builder_help(b);
    pthread_mutex_lock(&b->mu);
    while (b->done < b->nparts)
        pthread_cond_wait(&b->cv, &b->mu);
    int rc = b->rc;
    if (rc) *err = b->err;
    pthread_mutex_unlock(&b->mu);
    b->finished = true;
    if (rc) return rc;
    ice_eq_index *ix = b->ix;
    b->ix = NULL;
    ix->memory += sizeof *ix + b->nparts * sizeof *ix->parts;
    *out = ix;
    return 0;
}

void ice_eq_builder_free(ice_eq_builder *b)
{
    if (!b) return;
    for (size_t p = 0; p < b->nparts; p++)
        free_bucket(&b->buckets[p]);
    free(b->buckets);
    for (size_t g = 0; g < (b->nparts >> b->gshift); g++)
        free_slabs(&b->groups[g]);
    free(b->groups);
    if (b->ix) {
        b->ix->memory = 0;
        ice_eq_index_free(b->ix);
    }
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    free(b);
}

/* ---- probing --------------------------------------------------------------------------- */

/* From generic slot i on: the first slot with the tag, or UINT32_MAX when an empty slot
 * comes first (a table always has one: load <= 0.7). */
static inline uint32_t tag_slot(const part *pt, uint32_t tag, uint32_t i)
{
    for (;;) {
        uint64_t s = pt->slots[i];
        if (!s) return UINT32_MAX;
        if ((uint32_t)(s >> 32) == tag) return i;
        i = i + 1 == pt->nslots ? 0 : i + 1;
    }
}

/* Whether the generic table holds `key`, probing from slot i on. */
static inline bool generic_contains(const part *pt, const uint8_t *key, size_t len, uint32_t tag,
                                    uint32_t i)
{
    for (;;) {
        i = tag_slot(pt, tag, i);
        if (i == UINT32_MAX) return false;
        if (slot_holds(pt, i, key, len)) return true;
        i = i + 1 == pt->nslots ? 0 : i + 1;
    }
}

static inline bool part_contains(const ice_eq_index *ix, const part *pt, const uint8_t *key,
                                 size_t len, uint64_t h)
{
    if (ix->fixed && form_matches(ix->flen, ix->pfx, key, len)) {
        uint64_t w = key_word(key, len);
        if (w == 0) return pt->has_zero;
        if (!pt->nwords) return false;
        uint32_t i = reduce((uint32_t)h, pt->nwords);
        for (;;) {
            uint64_t s = pt->words[i];
            if (s == w) return true;
            if (!s) return false;
            i = i + 1 == pt->nwords ? 0 : i + 1;
        }
    }
    if (!pt->nslots) return false;
    return generic_contains(pt, key, len, (uint32_t)(h >> 32), reduce((uint32_t)h, pt->nslots));
}

bool ice_eq_index_contains(const ice_eq_index *ix, const void *key, size_t len, uint64_t hash)
{
    const part *pt = &ix->parts[part_of(ix, hash)];
    if (pt->nblocks && !bloom_test(bloom_block(pt, hash), hash)) return false;
    return part_contains(ix, pt, key, len, hash);
}

/* Where the probe of a key will look first (for prefetching). */
static inline const void *home_of(const ice_eq_index *ix, const part *pt, const uint8_t *key,
                                  size_t len, uint64_t h)
{
    if (ix->fixed && form_matches(ix->flen, ix->pfx, key, len))
        return pt->nwords ? (const void *)&pt->words[reduce((uint32_t)h, pt->nwords)] : NULL;
    return pt->nslots ? (const void *)&pt->slots[reduce((uint32_t)h, pt->nslots)] : NULL;
}

#define BLOCK 1024u /* keys hashed ahead */
#define AHEAD 12u   /* prefetch distance, in keys */
#define SAMPLE 256u /* keys probed through the filter before deciding to skip it */

size_t ice_eq_index_remove_batch(const ice_eq_index *ix, const uint8_t *keys, const uint32_t *offs,
                                 size_t n, uint8_t *sel)
{
    if (ix->count == 0) return 0;
    size_t removed = 0;
    /* The filter pays when most keys miss; when most of them hit, it only adds a line to
     * fetch per key. Decide from the first keys of the batch. */
    bool filter = ix->bloom;
    size_t tested = 0, passed = 0;
    uint32_t idx[BLOCK];
    uint64_t hs[BLOCK];
    const part *pts[BLOCK];
    const void *home[BLOCK];
    uint32_t pj[BLOCK], pat[BLOCK]; /* generic keys left for step 3: j and tag slot */
    const bool fixed = ix->fixed;
    const uint32_t flen = ix->flen;
    uint8_t pfx[8];
    memcpy(pfx, ix->pfx, sizeof pfx);
    for (size_t base = 0; base < n; base += BLOCK) {
        size_t end = base + BLOCK < n ? base + BLOCK : n;
        size_t m = 0;
        for (size_t i = base; i < end; i++) {
            if (!sel[i]) continue;
            idx[m] = (uint32_t)i;
            hs[m++] = ice_eq_hash(keys + offs[i], offs[i + 1] - offs[i]);
        }
        if (filter) { /* 1. the filter, prefetched AHEAD keys ahead; keep the keys that pass */
            for (size_t j = 0; j < m && j < AHEAD; j++)
                __builtin_prefetch(bloom_block(&ix->parts[part_of(ix, hs[j])], hs[j]));
            size_t m2 = 0;
            for (size_t j = 0; j < m; j++) {
                if (j + AHEAD < m)
                    __builtin_prefetch(
                        bloom_block(&ix->parts[part_of(ix, hs[j + AHEAD])], hs[j + AHEAD]));
                uint64_t h = hs[j];
                if (!bloom_test(bloom_block(&ix->parts[part_of(ix, h)], h), h)) continue;
                idx[m2] = idx[j];
                hs[m2++] = h;
            }
            tested += m;
            passed += m2;
            m = m2;
            if (tested >= SAMPLE && passed * 4 > tested) filter = false;
        }
        /* 2. the tables: each key's partition and first slot worked out once, the slots
         * prefetched AHEAD keys ahead; a key of the fixed form is looked for inline; for
         * any other key, the first slot with its tag is found (the slots are in cache by
         * then) and the interned key it leads to prefetched */
        for (size_t j = 0; j < m; j++) {
            size_t i = idx[j];
            const part *pt = &ix->parts[part_of(ix, hs[j])];
            pts[j] = pt;
            home[j] = home_of(ix, pt, keys + offs[i], offs[i + 1] - offs[i], hs[j]);
        }
        for (size_t j = 0; j < m && j < AHEAD; j++)
            if (home[j]) __builtin_prefetch(home[j]);
        size_t npend = 0;
        for (size_t j = 0; j < m; j++) {
            if (j + AHEAD < m && home[j + AHEAD]) __builtin_prefetch(home[j + AHEAD]);
            size_t i = idx[j];
            const uint8_t *key = keys + offs[i];
            size_t len = offs[i + 1] - offs[i];
            const part *pt = pts[j];
            bool hit = false;
            if (fixed && form_matches(flen, pfx, key, len)) {
                uint64_t w = key_word(key, len);
                if (w == 0) {
                    hit = pt->has_zero;
                } else if (!pt->nwords) {
                    hit = false;
                } else { /* linear probing from the home slot */
                    const uint64_t *q = home[j], *qend = pt->words + pt->nwords;
                    for (;;) {
                        uint64_t sw = *q;
                        if (sw == w || !sw) {
                            hit = sw == w;
                            break;
                        }
                        if (++q == qend) q = pt->words;
                    }
                }
            } else if (pt->nslots) {
                uint32_t at = tag_slot(pt, (uint32_t)(hs[j] >> 32),
                                       (uint32_t)((const uint64_t *)home[j] - pt->slots));
                if (at != UINT32_MAX) { /* 3. compared below, once its key is near */
                    __builtin_prefetch(pt->arena + (uint32_t)pt->slots[at] - 1);
                    pj[npend] = (uint32_t)j;
                    pat[npend++] = at;
                }
            }
            if (hit) {
                sel[i] = 0;
                removed++;
            }
        }
        /* 3. the generic keys whose tag was found: the interned key compared, and on the
         * rare mismatch (two keys with one tag) the probe goes on */
        for (size_t k = 0; k < npend; k++) {
            size_t j = pj[k], i = idx[j];
            const uint8_t *key = keys + offs[i];
            size_t len = offs[i + 1] - offs[i];
            const part *pt = pts[j];
            uint32_t at = pat[k];
            if (slot_holds(pt, at, key, len) ||
                generic_contains(pt, key, len, (uint32_t)(hs[j] >> 32),
                                 at + 1 == pt->nslots ? 0 : at + 1)) {
                sel[i] = 0;
                removed++;
            }
        }
    }
    return removed;
}

size_t ice_eq_index_count(const ice_eq_index *ix)
{
    return ix->count;
}

size_t ice_eq_index_memory(const ice_eq_index *ix)
{
    return ix->memory;
}

void ice_eq_index_free(ice_eq_index *ix)
{
    if (!ix) return;
    if (ix->mapped)
        icd_bigmem_unmap(ix->region, ix->region_bytes);
    else
        free(ix->region);
    free(ix->parts);
    free(ix);
}
