/*
 * ice_eq_index against a trivial reference (a sorted array of the distinct keys, binary
 * search): random key sets in every layout the index chooses (fixed-width table, generic
 * table, both in one index, with and without the Bloom filter, one or many partitions),
 * duplicates, empty keys, keys of 255+ bytes, null key columns in the reader's canonical
 * form (a 0x00 byte) next to the value 0, single and batch probes of present and absent
 * keys, keys whose tags collide, and builds shared by several threads.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/deletes/eq_index.h"
#include "test.h"

typedef struct key {
    uint8_t b[300];
    size_t len;
} key;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int cmp_key(const void *pa, const void *pb)
{
    const key *a = pa, *b = pb;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->b, b->b, n);
    if (c) return c;
    return a->len < b->len ? -1 : a->len > b->len;
}

/* The reference: sorted distinct keys. */
typedef struct ref {
    key *v;
    size_t n;
} ref;

static ref ref_build(const key *keys, size_t n)
{
    ref r = {malloc((n ? n : 1) * sizeof(key)), 0};
    memcpy(r.v, keys, n * sizeof(key));
    qsort(r.v, n, sizeof(key), cmp_key);
    for (size_t i = 0; i < n; i++)
        if (!r.n || cmp_key(&r.v[r.n - 1], &r.v[i])) r.v[r.n++] = r.v[i];
    return r;
}

static bool ref_has(const ref *r, const key *k)
{
    return bsearch(k, r->v, r->n, sizeof(key), cmp_key) != NULL;
}

/* Key makers, in the reader's canonical form: 0x01 + 8 bytes for a long, 0x00 for null,
 * 0x01 + u32 length + bytes for a string. */
static key k_long(uint64_t v)
{
    key k = {{1}, 9};
    memcpy(k.b + 1, &v, 8);
    return k;
}

static key k_null(void)
{
    key k = {{0}, 1};
    return k;
}

static void put_str(key *k, const char *s, size_t n)
{
    uint32_t l = (uint32_t)n;
    k->b[k->len++] = 1;
    memcpy(k->b + k->len, &l, 4);
    memcpy(k->b + k->len + 4, s, n);
    k->len += 4 + n;
}

static key k_str(uint64_t v)
{
    char s[40];
    int n = snprintf(s, sizeof s, "user-%llu", (unsigned long long)v);
    key k = {{0}, 0};
    put_str(&k, s, (size_t)n);
    return k;
}

static key k_pair(uint64_t a, uint64_t b, bool null_b)
{
    key k = k_long(a);
    if (null_b)
        k.b[k.len++] = 0;
    else {
        char s[24];
        int n = snprintf(s, sizeof s, "%llu", (unsigned long long)b);
        put_str(&k, s, (size_t)n);
    }
    return k;
}

typedef struct helper_arg {
    ice_eq_builder *b;
} helper_arg;

static void *helper(void *p)
{
    ice_eq_builder_help(((helper_arg *)p)->b);
    return NULL;
}

static ice_eq_index *build(const key *keys, size_t n, size_t expected, int threads)
{
    icd_error err;
    icd_error_clear(&err);
    ice_eq_builder *b;
    if (ice_eq_builder_new(&b, expected, &err)) return NULL;
    for (size_t i = 0; i < n; i++)
        if (ice_eq_builder_add(b, keys[i].b, keys[i].len, &err)) {
            ice_eq_builder_free(b);
            return NULL;
        }
    CHECK_EQ_INT(ice_eq_builder_added(b), n);
    pthread_t th[4];
    helper_arg ha = {b};
    ice_eq_builder_seal(b);
    for (int t = 1; t < threads; t++)
        pthread_create(&th[t], NULL, helper, &ha);
    ice_eq_index *ix = NULL;
    int rc = ice_eq_builder_finish(b, &ix, &err);
    for (int t = 1; t < threads; t++)
        pthread_join(th[t], NULL);
    CHECK_EQ_INT(rc, 0);
    ice_eq_builder_free(b);
    return ix;
}

/* Probes the index with every key of `probe` (single and batch) against the reference. */
static void check_probes(const ice_eq_index *ix, const ref *r, const key *probe, size_t n)
{
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += probe[i].len;
    uint8_t *buf = malloc(bytes + 1);
    uint32_t *offs = malloc((n + 1) * sizeof *offs);
    uint8_t *sel = malloc(n + 1);
    size_t o = 0, want_removed = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        offs[i] = (uint32_t)o;
        memcpy(buf + o, probe[i].b, probe[i].len);
        o += probe[i].len;
        sel[i] = (uint8_t)(i % 7 != 3); /* some rows already deselected */
        bool want = ref_has(r, &probe[i]);
        bool got = ice_eq_index_contains(ix, probe[i].b, probe[i].len,
                                         ice_eq_hash(probe[i].b, probe[i].len));
        if (want != got) bad++;
        if (want && sel[i]) want_removed++;
    }
    offs[n] = (uint32_t)o;
    CHECK_EQ_INT(bad, 0);
    uint8_t *before = malloc(n + 1);
    memcpy(before, sel, n);
    size_t removed = ice_eq_index_remove_batch(ix, buf, offs, n, sel);
    CHECK_EQ_INT(removed, want_removed);
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) {
        bool want = before[i] && !ref_has(r, &probe[i]);
        if ((sel[i] != 0) != want) wrong++;
    }
    CHECK_EQ_INT(wrong, 0);
    free(before);
    free(buf);
    free(offs);
    free(sel);
}

typedef key (*maker)(uint64_t);

/* n keys drawn from [0, domain) (so duplicates when domain < n), probes drawn from
 * [0, 2 * domain) (about half absent), plus extra keys mixed in. */
static void run_case(maker mk, size_t n, uint64_t domain, size_t expected, int threads,
                     const key *extra, size_t nextra)
{
    size_t total = n + nextra;
    key *keys = malloc((total ? total : 1) * sizeof *keys);
    for (size_t i = 0; i < n; i++)
        keys[i] = mk(rnd() % domain);
    for (size_t i = 0; i < nextra; i++) /* spread over the order */
        keys[n + i] = extra[i];
    for (size_t i = total; i > 1; i--) {
        size_t j = rnd() % i;
        key t = keys[i - 1];
        keys[i - 1] = keys[j];
        keys[j] = t;
    }
    ref r = ref_build(keys, total);
    ice_eq_index *ix = build(keys, total, expected, threads);
    CHECK(ix != NULL);
    if (!ix) return;
    CHECK_EQ_INT(ice_eq_index_count(ix), r.n);
    size_t np = 2 * total + 16;
    key *probe = malloc(np * sizeof *probe);
    size_t m = 0;
    for (size_t i = 0; i < total; i++)
        probe[m++] = keys[i];
    while (m < np - nextra - 4)
        probe[m++] = mk(rnd() % (2 * domain + 1));
    for (size_t i = 0; i < nextra; i++)
        probe[m++] = extra[i];
    probe[m++] = k_null();
    probe[m++] = k_long(0);
    probe[m++] = (key){{0}, 0};
    probe[m++] = k_pair(1, 2, true);
    check_probes(ix, &r, probe, m);
    if (n >= 65536) CHECK(ice_eq_index_memory(ix) > 0);
    /* distinct single long keys (the fixed form): at most 24 bytes a key, all included */
    if (n >= 65536 && mk == k_long && domain >= 100 * (uint64_t)n && expected == n)
        CHECK(ice_eq_index_memory(ix) <= 24 * ice_eq_index_count(ix));
    ice_eq_index_free(ix);
    free(probe);
    free(keys);
    free(r.v);
}

static key k_pair_rand(uint64_t v)
{
    return k_pair(v % 1000, v / 1000, v % 13 == 0);
}

static void test_empty(void)
{
    ice_eq_index *ix = build(NULL, 0, 0, 1);
    CHECK(ix != NULL);
    if (!ix) return;
    CHECK_EQ_INT(ice_eq_index_count(ix), 0);
    key k = k_long(5);
    CHECK(!ice_eq_index_contains(ix, k.b, k.len, ice_eq_hash(k.b, k.len)));
    CHECK(!ice_eq_index_contains(ix, "", 0, ice_eq_hash("", 0)));
    uint8_t sel[1] = {1};
    uint32_t offs[2] = {0, 9};
    CHECK_EQ_INT(ice_eq_index_remove_batch(ix, k.b, offs, 1, sel), 0);
    CHECK_EQ_INT(sel[0], 1);
    ice_eq_index_free(ix);
    /* a builder freed without finishing */
    icd_error err;
    ice_eq_builder *b;
    CHECK_EQ_INT(ice_eq_builder_new(&b, 1000000, &err), 0);
    CHECK_EQ_INT(ice_eq_builder_add(b, k.b, k.len, &err), 0);
    ice_eq_builder_free(b);
}

static void test_null_and_zero(void)
{
    /* null matches null only; the value 0 matches 0 only */
    key only_null[1] = {k_null()};
    ref r = ref_build(only_null, 1);
    ice_eq_index *ix = build(only_null, 1, 0, 1);
    key probes[4] = {k_null(), k_long(0), k_long(1), {{0}, 0}};
    check_probes(ix, &r, probes, 4);
    ice_eq_index_free(ix);
    free(r.v);
    key zero[3] = {k_long(0), k_long(0), k_long(7)};
    r = ref_build(zero, 3);
    ix = build(zero, 3, 0, 1);
    CHECK_EQ_INT(ice_eq_index_count(ix), 2);
    check_probes(ix, &r, probes, 4);
    ice_eq_index_free(ix);
    free(r.v);
    /* two columns, second null vs second "0" */
    key pairs[2] = {k_pair(1, 0, true), k_pair(2, 0, false)};
    r = ref_build(pairs, 2);
    ix = build(pairs, 2, 0, 1);
    key pp[4] = {k_pair(1, 0, true), k_pair(1, 0, false), k_pair(2, 0, false), k_pair(2, 0, true)};
    check_probes(ix, &r, pp, 4);
    ice_eq_index_free(ix);
    free(r.v);
}

static void test_fixed_small(void)
{
    /* tiny domain: many duplicates, one table, crowded probe runs */
    run_case(k_long, 1000, 50, 0, 1, NULL, 0);
    run_case(k_long, 5000, 100000, 0, 1, NULL, 0);
}

static void test_fixed_with_odd_keys(void)
{
    /* a null key and an empty key among long keys: the fixed table plus a generic one */
    key extra[3] = {k_null(), {{0}, 0}, k_long(0)};
    run_case(k_long, 3000, 10000, 0, 1, extra, 3);
    run_case(k_long, 3000, 10000, 100000, 1, extra, 3);
}

static void test_mixed_generic(void)
{
    /* more than 1/8 of the keys not of the fixed form: everything generic */
    key extra[600];
    for (size_t i = 0; i < 600; i++)
        extra[i] = i % 2 ? k_str(i) : k_null();
    run_case(k_long, 2000, 5000, 0, 1, extra, 600);
}

static void test_strings_and_pairs(void)
{
    run_case(k_str, 20000, 15000, 0, 1, NULL, 0);
    run_case(k_pair_rand, 20000, 30000, 20000, 1, NULL, 0);
    /* long keys: 255 bytes and more */
    key extra[4];
    for (size_t i = 0; i < 4; i++) {
        extra[i].len = 0;
        char s[290];
        memset(s, 'a' + (int)i, sizeof s);
        put_str(&extra[i], s, 250 + i * 10);
    }
    run_case(k_str, 500, 400, 0, 1, extra, 4);
}

static void test_large_bloom_partitions(void)
{
    /* over the Bloom threshold, many partitions, built by several threads */
    run_case(k_long, 120000, 90000, 120000, 1, NULL, 0);
    run_case(k_long, 120000, 1u << 30, 120000, 3, NULL, 0);
    key extra[2] = {k_null(), k_long(0)};
    run_case(k_str, 100000, 1u << 20, 100000, 2, extra, 2);
    run_case(k_pair_rand, 100000, 1u << 20, 100000, 4, NULL, 0);
    /* a wrong hint: one partition holding everything */
    run_case(k_long, 80000, 1u << 30, 0, 2, NULL, 0);
    /* 32 partitions in 16 groups of 2, whose slabs go when their 2nd is built, by
     * threads that finish partitions in any order */
    run_case(k_long, 300000, 1u << 30, 300000, 3, NULL, 0);
}

static void test_word_collisions(void)
{
    /* fixed-form keys whose last 8 bytes agree but whose prefix differs from the first
     * key's: they must not be taken for one another */
    key keys[4];
    for (int i = 0; i < 4; i++) {
        keys[i] = k_long(42);
        keys[i].b[0] = (uint8_t)(1 + (i == 3 ? 1 : 0));
    }
    keys[1] = k_long(43);
    keys[2] = k_long(44);
    ref r = ref_build(keys, 4);
    ice_eq_index *ix = build(keys, 4, 0, 1);
    key probes[4] = {k_long(42), keys[3], k_long(45), k_null()};
    probes[2].b[0] = 2;
    check_probes(ix, &r, probes, 4);
    ice_eq_index_free(ix);
    free(r.v);
}

/* Two generic keys with one 32-bit tag and one home slot (found by a birthday search over
 * 600,000 keys: about 14 such pairs): a probe meets the other key's slot first, compares
 * its bytes, and must go on to the next slot -- to find the key, or to miss. */
typedef struct tagged {
    uint64_t h;
    uint32_t i;
} tagged;

static int cmp_tagged(const void *pa, const void *pb)
{
    const tagged *a = pa, *b = pb;
    return (a->h > b->h) - (a->h < b->h);
}

static key k_text(uint32_t i)
{
    key k = {{0}, 20};
    snprintf((char *)k.b, sizeof k.b, "tag-collision-%06u", i); /* 20 bytes: generic */
    return k;
}

static void test_tag_collisions(void)
{
    size_t n = 600000, pairs = 0;
    tagged *t = malloc(n * sizeof *t);
    for (uint32_t i = 0; i < n; i++) {
        key k = k_text(i);
        t[i] = (tagged){ice_eq_hash(k.b, k.len), i};
    }
    qsort(t, n, sizeof *t, cmp_tagged);
    for (size_t i = 1; i < n && pairs < 4; i++) {
        uint64_t a = t[i - 1].h, b = t[i].h;
        /* one tag; one home slot of the 3 that two keys get */
        if (a >> 32 != b >> 32 || ((a & 0xffffffffu) * 3) >> 32 != ((b & 0xffffffffu) * 3) >> 32)
            continue;
        pairs++;
        key y = k_text(t[i - 1].i), x = k_text(t[i].i);
        key both[2] = {y, x}; /* y first: it takes the home slot, x the next one */
        ref r = ref_build(both, 2);
        ice_eq_index *ix = build(both, 2, 0, 1);
        key probes[3] = {x, y, k_text((uint32_t)n)};
        check_probes(ix, &r, probes, 3);
        ice_eq_index_free(ix);
        free(r.v);
        r = ref_build(&y, 1); /* only y: x meets y's slot, then an empty one */
        ix = build(&y, 1, 0, 1);
        check_probes(ix, &r, probes, 3);
        ice_eq_index_free(ix);
        free(r.v);
    }
    CHECK(pairs > 0); /* (the search is deterministic: the hash is fixed) */
    free(t);
}

/* Keys spread over several builders (a delete file read in slices), merged. */
static void merged_case(const key *keys, size_t n, size_t nb, size_t expected)
{
    icd_error err;
    icd_error_clear(&err);
    ice_eq_builder *b[4];
    for (size_t j = 0; j < nb; j++)
        CHECK_EQ_INT(ice_eq_builder_new(&b[j], expected, &err), 0);
    for (size_t i = 0; i < n; i++)
        CHECK_EQ_INT(ice_eq_builder_add(b[rnd() % nb], keys[i].b, keys[i].len, &err), 0);
    for (size_t j = 1; j < nb; j++)
        CHECK_EQ_INT(ice_eq_builder_merge(b[0], b[j], &err), 0);
    CHECK_EQ_INT(ice_eq_builder_added(b[0]), n);
    ice_eq_index *ix = NULL;
    CHECK_EQ_INT(ice_eq_builder_finish(b[0], &ix, &err), 0);
    ice_eq_builder_free(b[0]);
    if (!ix) return;
    ref r = ref_build(keys, n);
    CHECK_EQ_INT(ice_eq_index_count(ix), r.n);
    key *probe = malloc(2 * n * sizeof *probe);
    for (size_t i = 0; i < n; i++) {
        probe[2 * i] = keys[i];
        probe[2 * i + 1] = keys[i];
        probe[2 * i + 1].b[probe[2 * i + 1].len - 1] ^= 0x5a; /* mostly absent */
    }
    check_probes(ix, &r, probe, 2 * n);
    free(probe);
    free(r.v);
    ice_eq_index_free(ix);
}

static void test_merge(void)
{
    size_t n = 90000;
    key *keys = malloc(n * sizeof *keys);
    for (size_t i = 0; i < n; i++)
        keys[i] = i % 1000 == 0 ? k_null() : k_long(rnd() % 70000);
    merged_case(keys, n, 3, n);
    /* builders that saw different fixed forms (a 9-byte key with another first byte
     * first): no fixed table, still every key */
    keys[0] = k_long(5);
    keys[0].b[0] = 7;
    merged_case(keys, 200, 2, 200);
    merged_case(keys, n, 4, 0);
    for (size_t i = 0; i < 5000; i++)
        keys[i] = k_pair_rand(rnd() % 9000);
    merged_case(keys, 5000, 2, 5000);
    free(keys);
    /* builders of 32 partitions in 16 groups: the slabs of each group move with its keys */
    n = 300000;
    keys = malloc(n * sizeof *keys);
    for (size_t i = 0; i < n; i++)
        keys[i] = k_long(rnd() % 250000);
    merged_case(keys, n, 3, n);
    free(keys);
    /* mismatched partition counts are refused */
    icd_error err;
    ice_eq_builder *a, *b;
    CHECK_EQ_INT(ice_eq_builder_new(&a, 0, &err), 0);
    CHECK_EQ_INT(ice_eq_builder_new(&b, 10000000, &err), 0);
    CHECK(ice_eq_builder_merge(a, b, &err) != 0);
    ice_eq_builder_free(a);
    ice_eq_builder_free(b);
}

TEST_MAIN({"empty", test_empty}, {"null_and_zero", test_null_and_zero},
          {"fixed_small", test_fixed_small}, {"fixed_with_odd_keys", test_fixed_with_odd_keys},
          {"mixed_generic", test_mixed_generic}, {"strings_and_pairs", test_strings_and_pairs},
          {"large_bloom_partitions", test_large_bloom_partitions},
          {"word_collisions", test_word_collisions}, {"tag_collisions", test_tag_collisions},
          {"merge", test_merge})
