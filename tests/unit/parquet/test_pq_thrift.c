/*
 * Thrift compact protocol reader: hand-built byte strings following the compact protocol
 * specification (field header = delta << 4 | type, zigzag varints, list header = size << 4
 * | element type with 0xF meaning "size follows as a varint", ...).
 */
#include "formats/parquet/thrift.h"
#include "test.h"

static pq_thrift rd(const uint8_t *p, size_t n, icd_error *err)
{
    pq_thrift r;
    icd_error_clear(err);
    pq_thrift_init(&r, p, n, "t.parquet", 100, "test", err);
    return r;
}

static void test_varints(void)
{
    icd_error err;
    /* 300 = 0xAC 0x02; zigzag: -1 -> 1, 1 -> 2, -64 -> 127, INT64_MIN -> all ones */
    const uint8_t a[] = {0xAC, 0x02, 0x01, 0x02, 0x7F, 0xFF, 0xFF, 0xFF,
                         0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
    pq_thrift r = rd(a, sizeof a, &err);
    uint64_t u;
    int64_t v;
    CHECK_EQ_INT(pq_thrift_varint(&r, &u), 0);
    CHECK_EQ_INT(u, 300);
    CHECK_EQ_INT(pq_thrift_i64(&r, &v), 0);
    CHECK_EQ_INT(v, -1);
    CHECK_EQ_INT(pq_thrift_i64(&r, &v), 0);
    CHECK_EQ_INT(v, 1);
    CHECK_EQ_INT(pq_thrift_i64(&r, &v), 0);
    CHECK_EQ_INT(v, -64);
    CHECK_EQ_INT(pq_thrift_i64(&r, &v), 0);
    CHECK(v == INT64_MIN);
    CHECK_EQ_INT(pq_thrift_pos(&r), sizeof a);
    /* reading past the end fails, naming the offset */
    CHECK_EQ_INT(pq_thrift_i64(&r, &v), ICD_ECORRUPT);
    CHECK_EQ_INT(err.offset, 100 + (int64_t)sizeof a);

    /* an 11-byte varint is corrupt; so is an i32 out of range */
    const uint8_t b[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    r = rd(b, sizeof b, &err);
    CHECK_EQ_INT(pq_thrift_varint(&r, &u), ICD_ECORRUPT);
    const uint8_t c[] = {0x80, 0x80, 0x80, 0x80, 0x20}; /* zigzag 2^33 -> 2^32 */
    int32_t i32;
    r = rd(c, sizeof c, &err);
    CHECK_EQ_INT(pq_thrift_i32(&r, &i32), ICD_ECORRUPT);
}

/* struct { 1: i32 = -2, 2: true, 3: binary "hi", 20 (long form): i64 = 5, 21: false } */
static const uint8_t S1[] = {0x15, 0x03, 0x11, 0x18, 0x02, 'h', 'i', 0x06, 0x28, 0x0A, 0x12, 0x00};

static void test_struct_fields(void)
{
    icd_error err;
    pq_thrift r = rd(S1, sizeof S1, &err);
    pq_tfield f;
    int16_t last = 0;
    CHECK_EQ_INT(pq_thrift_struct_begin(&r), 0);
    CHECK_EQ_INT(pq_thrift_field(&r, &last, &f), 0);
    CHECK_EQ_INT(f.id, 1);
    CHECK_EQ_INT(f.type, PQ_T_I32);
    int32_t v;
    CHECK_EQ_INT(pq_thrift_i32(&r, &v), 0);
    CHECK_EQ_INT(v, -2);
    CHECK_EQ_INT(pq_thrift_field(&r, &last, &f), 0);
    CHECK_EQ_INT(f.id, 2);
    bool bv = false;
    CHECK_EQ_INT(pq_thrift_bool_field(&r, &f, &bv), 0);
    CHECK(bv);
    CHECK_EQ_INT(pq_thrift_field(&r, &last, &f), 0);
    CHECK_EQ_INT(f.id, 3);
    const uint8_t *p;
    uint32_t n;
    CHECK_EQ_INT(pq_thrift_binary(&r, &p, &n), 0);
    CHECK_EQ_INT(n, 2);
    CHECK(p && p[0] == 'h' && p[1] == 'i');
    CHECK_EQ_INT(pq_thrift_field(&r, &last, &f), 0);
    CHECK_EQ_INT(f.id, 20);
    CHECK_EQ_INT(f.type, PQ_T_I64);
    int64_t v64;
    CHECK_EQ_INT(pq_thrift_i64(&r, &v64), 0);
    CHECK_EQ_INT(v64, 5);
    CHECK_EQ_INT(pq_thrift_field(&r, &last, &f), 0);
    CHECK_EQ_INT(f.id, 21);
    CHECK_EQ_INT(pq_thrift_bool_field(&r, &f, &bv), 0);
    CHECK(!bv);
    CHECK_EQ_INT(pq_thrift_field(&r, &last, &f), 0);
    CHECK_EQ_INT(f.type, PQ_T_STOP);
    pq_thrift_struct_end(&r);
    CHECK_EQ_INT(pq_thrift_pos(&r), sizeof S1);
}

/* Skipping a struct that holds a field of every type lands exactly after it. */
static void test_skip_every_type(void)
{
    const uint8_t s[] = {
        0x11,                                             /* 1: true */
        0x12,                                             /* 2: false */
        0x13, 0x7F,                                       /* 3: byte */
        0x14, 0x04,                                       /* 4: i16 */
        0x15, 0x04,                                       /* 5: i32 */
        0x16, 0xFF, 0x01,                                 /* 6: i64 */
        0x17, 1,    2,    3,    4,    5,   6,    7,    8, /* 7: double */
        0x18, 0x03, 'a',  'b',  'c',                      /* 8: binary */
        0x19, 0x25, 0x02, 0x04,                           /* 9: list<i32> of 2 */
        0x1A, 0x21, 0x01,                                 /* 10: set<bool> of 2 (one byte each) */
        0x00, 0x1B, 0x02, 0x85, 0x01, 'k', 0x02, 0x01, 'j', 0x04, /* 11: map<binary,i32> of 2 */
        0x1C, 0x15, 0x02, 0x00,                                   /* 12: struct { 1: i32 } */
        0x19, 0xF5, 0x10, /* 13: list<i32>, long form size 16 */
        1,    2,    3,    4,    5,    6,   7,    8,    9,   10,
        11,   12,   13,   14,   15,   16,  0x00, /* stop */
        0xEE                                     /* a byte after the struct */
    };
    icd_error err;
    pq_thrift r = rd(s, sizeof s, &err);
    CHECK_EQ_INT(pq_thrift_skip(&r, PQ_T_STRUCT), 0);
    CHECK_EQ_INT(pq_thrift_pos(&r), sizeof s - 1);
    CHECK_EQ_INT(r.depth, 0);

    /* the same walk field by field: field 10 is a set of 2 booleans */
    r = rd(s, sizeof s, &err);
    CHECK_EQ_INT(pq_thrift_struct_begin(&r), 0);
    int16_t last = 0;
    pq_tfield f;
    int fields = 0;
    for (;;) {
        CHECK_EQ_INT(pq_thrift_field(&r, &last, &f), 0);
        if (f.type == PQ_T_STOP || err.code) break;
        fields++;
        if (f.id == 10) {
            int et;
            uint32_t n;
            CHECK_EQ_INT(pq_thrift_list_begin(&r, &et, &n), 0);
            CHECK_EQ_INT(n, 2);
            bool b0 = false, b1 = true;
            CHECK_EQ_INT(pq_thrift_bool_elem(&r, &b0), 0);
            CHECK_EQ_INT(pq_thrift_bool_elem(&r, &b1), 0);
            CHECK(b0 && !b1);
            pq_thrift_container_end(&r);
        } else {
            CHECK_EQ_INT(pq_thrift_skip(&r, f.type), 0);
        }
    }
    CHECK_EQ_INT(fields, 13);
}

static void test_truncated(void)
{
    /* every proper prefix of S1 is a clean error, never an out-of-bounds read */
    for (size_t n = 0; n < sizeof S1; n++) {
        icd_error err;
        pq_thrift r = rd(S1, n, &err);
        CHECK_EQ_INT(pq_thrift_skip(&r, PQ_T_STRUCT), ICD_ECORRUPT);
        CHECK(err.message[0] != '\0');
        CHECK_EQ_STR(err.file, "t.parquet");
    }
    icd_error err;
    /* binary length beyond the buffer */
    const uint8_t b[] = {0x18, 0x10, 'a', 0x00};
    pq_thrift r = rd(b, sizeof b, &err);
    CHECK_EQ_INT(pq_thrift_skip(&r, PQ_T_STRUCT), ICD_ECORRUPT);
    /* a list claiming more elements than bytes left */
    const uint8_t l[] = {0x19, 0xF5, 0xFF, 0xFF, 0x03, 0x00};
    r = rd(l, sizeof l, &err);
    CHECK_EQ_INT(pq_thrift_skip(&r, PQ_T_STRUCT), ICD_ECORRUPT);
    /* list of doubles: 8 bytes each */
    const uint8_t d[] = {0x37, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2};
    r = rd(d, sizeof d, &err);
    CHECK_EQ_INT(pq_thrift_skip(&r, PQ_T_LIST), ICD_ECORRUPT);
    /* unknown field type 13 */
    const uint8_t u[] = {0x1D, 0x00};
    r = rd(u, sizeof u, &err);
    CHECK_EQ_INT(pq_thrift_skip(&r, PQ_T_STRUCT), ICD_ECORRUPT);
}

static void test_deep_nesting(void)
{
    /* 200 nested structs (field 1 of type struct each), then 200 stops */
    uint8_t buf[400];
    for (int i = 0; i < 200; i++) {
        buf[i] = 0x1C;
        buf[200 + i] = 0x00;
    }
    icd_error err;
    pq_thrift r = rd(buf, sizeof buf, &err);
    CHECK_EQ_INT(pq_thrift_skip(&r, PQ_T_STRUCT), ICD_ECORRUPT);
    CHECK(strstr(err.message, "nesting") != NULL);
    /* 30 levels are fine */
    uint8_t ok[61];
    for (int i = 0; i < 30; i++) {
        ok[i] = 0x1C;
        ok[30 + i] = 0x00;
    }
    ok[60] = 0x00;
    r = rd(ok, sizeof ok, &err);
    CHECK_EQ_INT(pq_thrift_skip(&r, PQ_T_STRUCT), 0);
    CHECK_EQ_INT(pq_thrift_pos(&r), sizeof ok);
    /* deep lists of lists are limited too */
    uint8_t lists[300];
    for (int i = 0; i < 300; i++)
        lists[i] = 0x19; /* list of 1 list */
    r = rd(lists, sizeof lists, &err);
    CHECK_EQ_INT(pq_thrift_skip(&r, PQ_T_LIST), ICD_ECORRUPT);
}

TEST_MAIN(TEST(test_varints), TEST(test_struct_fields), TEST(test_skip_every_type),
          TEST(test_truncated), TEST(test_deep_nesting))
