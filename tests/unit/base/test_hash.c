/* Unit tests of base/hash: icd_map with millions of keys, collisions, iteration, stability. */
#include <stdlib.h>
#include <time.h>

#include "base/hash.h"
#include "test.h"

/* Key i as 8 little-endian bytes plus (for odd i) a variable-length tail, so keys of many
 * lengths share the table. */
static size_t make_key(uint64_t i, uint8_t *buf)
{
    for (int b = 0; b < 8; b++)
        buf[b] = (uint8_t)(i >> (8 * b));
    size_t extra = (i & 1) ? (size_t)(i % 23) : 0;
    for (size_t b = 0; b < extra; b++)
        buf[8 + b] = (uint8_t)('a' + (i + b) % 26);
    return 8 + extra;
}

static void test_millions(void)
{
    const uint64_t n = 1000000;
    icd_error err;
    icd_map *m;
    CHECK(icd_map_new(&m, 0, &err) == 0); /* start small: exercises every resize */
    uint8_t key[64];
    int bad = 0;
    for (uint64_t i = 0; i < n; i++) {
        size_t len = make_key(i, key);
        uint64_t *v;
        bool ins;
        if (icd_map_upsert(m, key, len, icd_hash_bytes(key, len), &v, &ins, &err) != 0 || !ins)
            bad++;
        else
            *v = i * 3 + 1;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(icd_map_count(m), n);
    /* Every key is found with its value; inserting again finds the old entry. */
    bad = 0;
    for (uint64_t i = 0; i < n; i++) {
        size_t len = make_key(i, key);
        uint64_t h = icd_hash_bytes(key, len);
        uint64_t *v = icd_map_find(m, key, len, h);
        if (!v || *v != i * 3 + 1) bad++;
        if (i % 97 == 0) {
            bool ins = true;
            if (icd_map_upsert(m, key, len, h, &v, &ins, &err) != 0 || ins || *v != i * 3 + 1)
                bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(icd_map_count(m), n);
    /* Absent keys: beyond the range, and present keys with one byte more or less. */
    bad = 0;
    for (uint64_t i = n; i < n + 100000; i++) {
        size_t len = make_key(i, key);
        if (icd_map_find(m, key, len, icd_hash_bytes(key, len))) bad++;
        len = make_key(i - n, key);
        if (icd_map_find(m, key, len - 1, icd_hash_bytes(key, len - 1))) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    /* Iteration is insertion order and gives back the keys' bytes. */
    bad = 0;
    for (uint64_t i = 0; i < n; i += 1009) {
        icd_map_item it = icd_map_at(m, (size_t)i);
        size_t len = make_key(i, key);
        if (it.len != len || memcmp(it.key, key, len) || *it.value != i * 3 + 1) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(icd_map_at(m, (size_t)n).key == NULL);
    /* Compact: well under 64 bytes per key (keys average 13 bytes here). */
    size_t mem = icd_map_memory(m);
    CHECK(mem / n < 64);
    printf("1M keys: %zu bytes (%.1f per key)\n", mem, (double)mem / (double)n);
    icd_map_free(m);
}

static void test_collisions_and_stability(void)
{
    icd_error err;
    icd_map *m;
    CHECK(icd_map_new(&m, 4, &err) == 0);
    /* Every key with the same hash: correctness rests on the key comparison alone. */
    uint64_t *first = NULL;
    for (uint32_t i = 0; i < 3000; i++) {
        uint64_t *v;
        CHECK(icd_map_upsert(m, &i, sizeof i, 42, &v, NULL, &err) == 0);
        *v = i;
        if (i == 0) first = v;
    }
    /* Value pointers survive every resize that followed. */
    CHECK(first == icd_map_find(m, &(uint32_t){0}, 4, 42));
    int bad = 0;
    for (uint32_t i = 0; i < 3000; i++) {
        uint64_t *v = icd_map_find(m, &i, sizeof i, 42);
        if (!v || *v != i) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    uint32_t absent = 3000;
    CHECK(icd_map_find(m, &absent, 4, 42) == NULL);
    /* Same bytes, different hash: a different key as far as the map knows (the caller's
     * hash must be consistent), so not found. */
    uint32_t k = 7;
    CHECK(icd_map_find(m, &k, 4, 43) == NULL);
    icd_map_free(m);
}

static void test_small_cases(void)
{
    icd_error err;
    icd_map *m;
    CHECK(icd_map_new(&m, 0, &err) == 0);
    CHECK(icd_map_find(m, "", 0, icd_hash_bytes("", 0)) == NULL);
    CHECK(icd_map_put(m, "", 0, icd_hash_bytes("", 0), 5, &err) == 0);
    CHECK(icd_map_put(m, "a", 1, icd_hash_bytes("a", 1), 6, &err) == 0);
    CHECK(icd_map_put(m, "a", 1, icd_hash_bytes("a", 1), 7, &err) == 0); /* overwrite */
    CHECK_EQ_INT(icd_map_count(m), 2);
    uint64_t *v = icd_map_find(m, "", 0, icd_hash_bytes("", 0));
    CHECK(v && *v == 5);
    v = icd_map_find(m, "a", 1, icd_hash_bytes("a", 1));
    CHECK(v && *v == 7);
    /* Pointer values round-trip. */
    int x = 0;
    CHECK(icd_map_put(m, "p", 1, icd_hash_bytes("p", 1), icd_map_from_ptr(&x), &err) == 0);
    v = icd_map_find(m, "p", 1, icd_hash_bytes("p", 1));
    CHECK(v && icd_map_to_ptr(*v) == &x);
    /* A key longer than a key chunk gets its own chunk. */
    size_t big = 300 * 1024;
    char *bk = malloc(big);
    memset(bk, 'z', big);
    CHECK(icd_map_put(m, bk, big, icd_hash_bytes(bk, big), 9, &err) == 0);
    v = icd_map_find(m, bk, big, icd_hash_bytes(bk, big));
    CHECK(v && *v == 9);
    free(bk);
    icd_map_item it = icd_map_at(m, 0);
    CHECK(it.len == 0 && *it.value == 5);
    /* Integer mixing spreads consecutive integers. */
    CHECK(icd_hash_u64(1) != icd_hash_u64(2));
    CHECK((icd_hash_u64(1) >> 32) != (icd_hash_u64(2) >> 32));
    icd_map_free(m);
}

/* Memory follows content: a map of one file path (what a position delete file that
 * references one data file builds) holds about 1 KiB, and value pointers stay valid while
 * the pages grow from 16 entries to full pages (entries 0 .. 40,000 cross every growing
 * page and two full ones). */
static void test_memory_follows_content(void)
{
    icd_error err;
    icd_map *m;
    CHECK(icd_map_new(&m, 0, &err) == 0);
    const char *path = "s3://bucket/warehouse/db/t/data/00000-0-0f6c.parquet";
    CHECK(icd_map_put(m, path, strlen(path), icd_hash_bytes(path, strlen(path)), 1, &err) == 0);
    size_t one = icd_map_memory(m);
    printf("one-key map: %zu bytes\n", one);
    CHECK(one < 2048);
    icd_map_free(m);
    CHECK(icd_map_new(&m, 0, &err) == 0);
    enum { N = 40000 };
    static uint64_t *vals[N];
    int bad = 0;
    for (uint32_t i = 0; i < N; i++) {
        bool ins;
        if (icd_map_upsert(m, &i, sizeof i, icd_hash_u64(i), &vals[i], &ins, &err) || !ins) bad++;
        *vals[i] = i + 7;
    }
    for (uint32_t i = 0; i < N; i++) {
        uint64_t *v = icd_map_find(m, &i, sizeof i, icd_hash_u64(i));
        icd_map_item it = icd_map_at(m, i);
        if (v != vals[i] || *v != i + 7 || it.value != v || it.len != sizeof i ||
            memcmp(it.key, &i, sizeof i))
            bad++;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(icd_map_memory(m) / N < 64);
    icd_map_free(m);
}

TEST_MAIN(TEST(test_millions), TEST(test_collisions_and_stability), TEST(test_small_cases),
          TEST(test_memory_follows_content))
