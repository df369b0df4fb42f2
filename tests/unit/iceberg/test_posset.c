/* Unit tests of iceberg/posset: adds, union, ranges, 64-bit positions, and the batch
 * filter against a brute-force reference on random data. */
#include <stdlib.h>

#include "iceberg/deletes/posset.h"
#include "test.h"

static uint64_t rng_state = 0x243F6A8885A308D3ULL;
static uint64_t rnd(void)
{
    /* xorshift64*: deterministic, so a failure reproduces. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_basic(void)
{
    icd_error err;
    ice_posset *s;
    CHECK(ice_posset_new(&s, &err) == 0);
    CHECK(ice_posset_is_empty(s));
    uint8_t sel[10];
    memset(sel, 1, sizeof sel);
    CHECK_EQ_INT(ice_posset_apply(s, 0, 10, sel), 0);
    CHECK(ice_posset_add(s, 5, &err) == 0);
    CHECK(ice_posset_add(s, 5, &err) == 0); /* duplicates count once */
    CHECK(ice_posset_add(s, 0, &err) == 0);
    CHECK(ice_posset_add(s, 4294967296ULL + 7, &err) == 0); /* beyond 2^32 */
    CHECK(ice_posset_add(s, 4294967295ULL, &err) == 0);
    CHECK_EQ_INT(ice_posset_cardinality(s), 4);
    CHECK(ice_posset_contains(s, 5));
    CHECK(!ice_posset_contains(s, 6));
    CHECK(ice_posset_contains(s, 4294967303ULL));
    CHECK(!ice_posset_contains(s, 7)); /* same low bits, other key */
    CHECK(ice_posset_add(s, (uint64_t)1 << 63, &err) == ICD_EINVALID);
    CHECK(strstr(err.message, "out of range") != NULL);
    /* A batch straddling the 2^32 boundary. */
    memset(sel, 1, sizeof sel);
    CHECK_EQ_INT(ice_posset_apply(s, 4294967290ULL, 10, sel), 1);
    for (int i = 0; i < 10; i++)
        CHECK_EQ_INT(sel[i], i == 5 ? 0 : 1);
    memset(sel, 1, sizeof sel);
    CHECK_EQ_INT(ice_posset_apply(s, 4294967296ULL, 10, sel), 1);
    CHECK_EQ_INT(sel[7], 0);
    uint64_t list[8];
    CHECK_EQ_INT(ice_posset_list(s, 0, list, 8), 4);
    CHECK(list[0] == 0 && list[1] == 5 && list[2] == 4294967295ULL && list[3] == 4294967303ULL);
    CHECK_EQ_INT(ice_posset_list(s, 6, list, 1), 1);
    CHECK(list[0] == 4294967295ULL);
    CHECK_EQ_INT(ice_posset_list(s, 4294967296ULL, list, 8), 1);
    CHECK_EQ_INT(ice_posset_count_range(s, 1, 4294967300ULL), 2);
    ice_posset_free(s);
}

static void test_ranges_and_union(void)
{
    icd_error err;
    ice_posset *a, *b;
    CHECK(ice_posset_new(&a, &err) == 0);
    CHECK(ice_posset_new(&b, &err) == 0);
    /* A range over three high keys. */
    uint64_t lo = 3 * 4294967296ULL - 100, hi = 4 * 4294967296ULL + 50;
    CHECK(ice_posset_add_range(a, lo, hi, &err) == 0);
    CHECK_EQ_INT(ice_posset_cardinality(a), hi - lo);
    CHECK(!ice_posset_contains(a, lo - 1));
    CHECK(ice_posset_contains(a, lo));
    CHECK(ice_posset_contains(a, hi - 1));
    CHECK(!ice_posset_contains(a, hi));
    CHECK(ice_posset_add_range(a, 10, 10, &err) == 0); /* empty range */
    CHECK(ice_posset_add_range(a, 0, ((uint64_t)1 << 63) + 1, &err) == ICD_EINVALID);
    uint64_t pos[] = {1, 2, 3, 4 * 4294967296ULL + 49, 4 * 4294967296ULL + 60};
    CHECK(ice_posset_add_many(b, pos, 5, &err) == 0);
    CHECK(ice_posset_union(a, b, &err) == 0);
    CHECK_EQ_INT(ice_posset_cardinality(a), hi - lo + 4);
    /* Fully deleted batch: everything cleared, count = n. */
    uint8_t sel[300];
    memset(sel, 1, sizeof sel);
    CHECK_EQ_INT(ice_posset_apply(a, lo, 300, sel), 300);
    int ones = 0;
    for (int i = 0; i < 300; i++)
        ones += sel[i];
    CHECK_EQ_INT(ones, 0);
    /* Bitmap variant over the same batch plus one row before it. */
    uint64_t words[5];
    memset(words, 0xff, sizeof words);
    CHECK_EQ_INT(ice_posset_apply_bits(a, lo - 1, 300, words), 299);
    CHECK(words[0] == 1); /* only row lo - 1 survives */
    CHECK(words[1] == 0 && words[2] == 0 && words[3] == 0);
    CHECK(words[4] == ~(uint64_t)0 << (300 - 256)); /* bits past n untouched */
    ice_posset_free(a);
    ice_posset_free(b);
}

/* Checks every query of `s` against the sorted, deduplicated reference ref[0..m). */
static void verify(const ice_posset *s, const uint64_t *ref, size_t m, uint64_t base, uint64_t span)
{
    CHECK_EQ_INT(ice_posset_cardinality(s), m);
    /* Batches of random size covering the span and a margin. */
    uint8_t *sel = malloc(9000);
    uint64_t *words = malloc(9000 / 8 + 8);
    size_t r = 0; /* index in ref of the first position >= batch start */
    int bad = 0;
    for (uint64_t first = base > 100 ? base - 100 : 0; first < base + span + 100;) {
        size_t len = 1 + rnd() % 8999;
        memset(sel, 1, len);
        memset(words, 0xff, (len + 63) / 64 * 8);
        size_t got = ice_posset_apply(s, first, len, sel);
        size_t gotb = ice_posset_apply_bits(s, first, len, words);
        while (r < m && ref[r] < first)
            r++;
        size_t expect = 0, k = r;
        for (size_t i = 0; i < len; i++) {
            int deleted = k < m && ref[k] == first + i;
            if (deleted) {
                k++;
                expect++;
            }
            int bit = (int)(words[i / 64] >> (i % 64) & 1);
            if (sel[i] != !deleted || bit != !deleted) bad++;
        }
        if (got != expect || gotb != expect) bad++;
        if (ice_posset_count_range(s, first, first + len) != expect) bad++;
        first += len;
    }
    CHECK_EQ_INT(bad, 0);
    /* Membership of every reference position and of a neighbour. */
    bad = 0;
    for (size_t i = 0; i < m; i++) {
        if (!ice_posset_contains(s, ref[i])) bad++;
        if (ref[i] + 1 != (i + 1 < m ? ref[i + 1] : 0) && ice_posset_contains(s, ref[i] + 1)) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    /* Listing gives the reference order. */
    uint64_t list[64];
    size_t l = ice_posset_list(s, 0, list, 64);
    CHECK_EQ_INT(l, m < 64 ? m : 64);
    CHECK(!memcmp(list, ref, l * sizeof *list));
    if (m > 2) {
        size_t mid = m / 2;
        l = ice_posset_list(s, ref[mid] - (ref[mid] > ref[mid - 1] + 1), list, 64);
        CHECK_EQ_INT(l, m - mid < 64 ? m - mid : 64);
        CHECK(!memcmp(list, ref + mid, l * sizeof *list));
    }
    free(sel);
    free(words);
}

/* Brute force: random positions around a few high keys, random batches, against a sorted
 * reference array. */
static void test_apply_random(void)
{
    icd_error err;
    for (int round = 0; round < 12; round++) {
        ice_posset *s;
        CHECK(ice_posset_new(&s, &err) == 0);
        size_t n = 1 + rnd() % 20000;
        uint64_t *ref = malloc(n * sizeof *ref);
        uint64_t span = (round % 3 == 0) ? 30000 : (round % 3 == 1) ? 300000 : 5000000;
        uint64_t base = (round & 4) ? 4294967296ULL * (rnd() % 3) - span / 2 : 0;
        if (base > ((uint64_t)1 << 62)) base = 0;
        for (size_t i = 0; i < n; i++)
            ref[i] = base + rnd() % span;
        /* Half the rounds add sorted (the position-delete order), half unsorted. */
        if (round & 1) qsort(ref, n, sizeof *ref, cmp_u64);
        CHECK(ice_posset_add_many(s, ref, n, &err) == 0);
        if (round % 4 == 3)
            CHECK(ice_posset_add_range(s, base + span / 3, base + span / 3 + 5000, &err) == 0);
        qsort(ref, n, sizeof *ref, cmp_u64);
        /* Dedupe, then add the range to the reference. */
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (m == 0 || ref[m - 1] != ref[i]) ref[m++] = ref[i];
        if (round % 4 == 3) {
            ref = realloc(ref, (m + 5000) * sizeof *ref);
            for (uint64_t p = base + span / 3; p < base + span / 3 + 5000; p++)
                ref[m++] = p;
            qsort(ref, m, sizeof *ref, cmp_u64);
            size_t k = 0;
            for (size_t i = 0; i < m; i++)
                if (k == 0 || ref[k - 1] != ref[i]) ref[k++] = ref[i];
            m = k;
        }
        verify(s, ref, m, base, span);
        /* The frozen (portable, read-in-place) form answers the same. */
        CHECK(ice_posset_freeze(s, &err) == 0);
        verify(s, ref, m, base, span);
        /* Adding after freezing thaws the key; adding existing positions changes nothing. */
        if (m) CHECK(ice_posset_add_many(s, ref, m < 100 ? m : 100, &err) == 0);
        verify(s, ref, m, base, span);
        free(ref);
        ice_posset_free(s);
    }
}

/* Memory follows the deletes: a handful of positions spread over 2^40 rows stays small. */
static void test_sparse_far(void)
{
    icd_error err;
    ice_posset *s;
    CHECK(ice_posset_new(&s, &err) == 0);
    for (uint64_t i = 0; i < 256; i++)
        CHECK(ice_posset_add(s, i << 32 | (i * 7919), &err) == 0);
    CHECK_EQ_INT(ice_posset_cardinality(s), 256);
    uint8_t sel[16];
    memset(sel, 1, sizeof sel);
    CHECK_EQ_INT(ice_posset_apply(s, ((uint64_t)200 << 32) + 200 * 7919 - 8, 16, sel), 1);
    CHECK_EQ_INT(sel[8], 0);
    ice_posset_free(s);
}

/* Frozen bitmap containers with full words, partial words and isolated bits, compared
 * with the building form position by position. */
static void test_frozen_bitmap_words(void)
{
    icd_error err;
    ice_posset *a, *b;
    CHECK(ice_posset_new(&a, &err) == 0);
    CHECK(ice_posset_new(&b, &err) == 0);
    for (int k = 0; k < 2; k++) {
        ice_posset *s = k ? b : a;
        uint64_t hi = (uint64_t)k << 32; /* the second set lives above 2^32 */
        CHECK(ice_posset_add_range(s, hi + 3, hi + 5000, &err) == 0);
        for (uint64_t p = 10001; p < 65536; p += 17)
            CHECK(ice_posset_add(s, hi + p, &err) == 0);
        CHECK(ice_posset_add_range(s, hi + 70000, hi + 70100, &err) == 0);
    }
    ice_posset *f;
    CHECK(ice_posset_new(&f, &err) == 0);
    CHECK(ice_posset_union(f, a, &err) == 0);
    CHECK(ice_posset_union(f, b, &err) == 0);
    CHECK(ice_posset_freeze(f, &err) == 0);
    CHECK_EQ_INT(ice_posset_cardinality(f), ice_posset_cardinality(a) * 2);
    int bad = 0;
    uint8_t sel1[700], sel2[700];
    uint64_t w1[11], w2[11];
    for (int k = 0; k < 2; k++) {
        ice_posset *ref = k ? b : a;
        uint64_t hi = (uint64_t)k << 32;
        for (uint64_t first = hi; first < hi + 71000; first += 613) {
            memset(sel1, 1, sizeof sel1);
            memset(sel2, 1, sizeof sel2);
            memset(w1, 0xff, sizeof w1);
            memset(w2, 0xff, sizeof w2);
            size_t c1 = ice_posset_apply(ref, first, 700, sel1);
            size_t c2 = ice_posset_apply(f, first, 700, sel2);
            size_t c3 = ice_posset_apply_bits(ref, first, 700, w1);
            size_t c4 = ice_posset_apply_bits(f, first, 700, w2);
            if (c1 != c2 || c1 != c3 || c1 != c4 || memcmp(sel1, sel2, sizeof sel1) ||
                memcmp(w1, w2, sizeof w1))
                bad++;
            if (ice_posset_count_range(f, first, first + 700) != c1) bad++;
        }
        for (uint64_t p = hi; p < hi + 71000; p++)
            bad += ice_posset_contains(ref, p) != ice_posset_contains(f, p);
    }
    CHECK_EQ_INT(bad, 0);
    /* A batch inside the range is fully deleted (full bitmap words). */
    uint8_t sel[4096];
    memset(sel, 1, sizeof sel);
    CHECK_EQ_INT(ice_posset_apply(f, 64, 4096, sel), 4096);
    CHECK(sel[0] == 0 && sel[4095] == 0);
    /* A frozen set as the source of a union. */
    ice_posset *g;
    CHECK(ice_posset_new(&g, &err) == 0);
    CHECK(ice_posset_add(g, 1, &err) == 0);
    CHECK(ice_posset_union(g, f, &err) == 0);
    CHECK_EQ_INT(ice_posset_cardinality(g), ice_posset_cardinality(f) + 1);
    ice_posset_free(g);
    ice_posset_free(a);
    ice_posset_free(b);
    ice_posset_free(f);
}

TEST_MAIN(TEST(test_basic), TEST(test_ranges_and_union), TEST(test_apply_random),
          TEST(test_sparse_far), TEST(test_frozen_bitmap_words))
