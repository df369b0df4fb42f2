/*
 * ORC files built in memory (orc_build.h) and read back through the public reader API:
 * every type and encoding with nulls, timestamps around the epoch, decimals, nested types,
 * stripe skipping with row positions, statistics, and corrupt or truncated tails and
 * streams (clear errors, never crashes). Expected values come from the vectors' own
 * construction (and the ORC specification's examples), not from the reader.
 */
#include <stdio.h>

#include "base/buf.h"
#include "formats/orc/orc.h"
#include "formats/orc/orc_json.h"
#include "formats/orc/orc_memfile.h"
#include "orc_build.h"
#include "test.h"

enum {
    K_BOOL = 0,
    K_BYTE,
    K_SHORT,
    K_INT,
    K_LONG,
    K_FLOAT,
    K_DOUBLE,
    K_STRING,
    K_BINARY,
    K_TS,
    K_LIST,
    K_MAP,
    K_STRUCT,
    K_UNION,
    K_DECIMAL,
    K_DATE,
    K_VARCHAR,
    K_CHAR,
    K_TS_INSTANT
};
enum { PRESENT = 0, DATA = 1, LENGTH = 2, DICT = 3, SECONDARY = 5 };

static int open_mem(const uint8_t *p, size_t n, orc_file **f, icd_error *err)
{
    icd_file *file;
    ICD_TRY(orc_memfile_open(&file, "mem.orc", p, n, err));
    return orc_file_open_file(f, file, true, NULL, err);
}

/* Reads the whole file as "ROWSTART:{json}\n" per row (row_start of the batch). */
static int read_all(const uint8_t *p, size_t n, size_t batch_rows,
                    bool (*keep)(void *, const orc_file *, size_t), char **text, icd_error *err)
{
    orc_file *f;
    ICD_TRY(open_mem(p, n, &f, err));
    orc_read_opts o = {0};
    o.batch_rows = batch_rows;
    o.keep_stripe = keep;
    orc_reader *r;
    int rc = orc_reader_open(&r, f, &o, err);
    icd_buf b = ICD_BUF_INIT;
    orc_batch *bt;
    while (!rc && (rc = orc_reader_next(r, &bt, err)) > 0) {
        for (size_t i = 0; i < bt->n; i++) {
            icd_buf_printf(&b, "%llu:", (unsigned long long)(bt->row_start + i));
            orc_json_row(&b, bt, i, 9);
            icd_buf_putc(&b, '\n');
        }
        rc = 0;
    }
    if (rc > 0) rc = 0;
    orc_reader_free(r);
    orc_file_free(f);
    *text = icd_buf_detach(&b);
    if (!*text) *text = strdup("");
    return rc;
}

/* ---- struct<a:int, b:string (dictionary), c:boolean> with nulls ---- */

static const uint32_t abc_subs[] = {1, 2, 3};
static const char *abc_names[] = {"a", "b", "c"};
/* a: present 1,0,1,1,1; values 1,-2,3,100 (zigzag 2,3,6,200) DIRECT w=8 */
static const uint8_t a_present[] = {0xff, 0xb8};
static const uint8_t a_data[] = {0x4e, 0x03, 2, 3, 6, 200};
/* b: the spec's dictionary example: DICTIONARY_DATA "CaliforniaFloridaNevada", LENGTH
 * [10, 7, 6], DATA [2, 0, 2, 0, 1] */
static const uint8_t b_dict[] = "CaliforniaFloridaNevada";
static const uint8_t b_len[] = {0x46, 0x02, 0xa7, 0x60};
static const uint8_t b_data[] = {0x42, 0x04, 0x88, 0x40};
/* c: true,false,true,true,false */
static const uint8_t c_data[] = {0xff, 0xb0};

static uint8_t *build_abc(int zlib, size_t *len)
{
    Orcpb__Type *types[4] = {tb_type(K_STRUCT, 3, abc_subs, abc_names, -1),
                             tb_type(K_INT, 0, NULL, NULL, 1), tb_type(K_STRING, 0, NULL, NULL, 2),
                             tb_type(K_BOOL, 0, NULL, NULL, 3)};
    tb_stream st[] = {{1, PRESENT, a_present, sizeof a_present},
                      {1, DATA, a_data, sizeof a_data},
                      {2, DATA, b_data, sizeof b_data},
                      {2, LENGTH, b_len, sizeof b_len},
                      {2, DICT, b_dict, 23},
                      {3, DATA, c_data, sizeof c_data}};
    uint32_t enc[] = {0, 2, 3, 0};
    uint32_t dict[] = {0, 0, 3, 0};
    tb_stripe s = {st, 6, enc, dict, 5, NULL};
    tb_spec spec = {zlib, types, 4, &s, 1, NULL, NULL, -1};
    return tb_build(&spec, len);
}

static void test_basic_types(void)
{
    const char *want = "0:{\"a\":1,\"b\":\"Nevada\",\"c\":true}\n"
                       "1:{\"a\":null,\"b\":\"California\",\"c\":false}\n"
                       "2:{\"a\":-2,\"b\":\"Nevada\",\"c\":true}\n"
                       "3:{\"a\":3,\"b\":\"California\",\"c\":true}\n"
                       "4:{\"a\":100,\"b\":\"Florida\",\"c\":false}\n";
    for (int zlib = 0; zlib <= 1; zlib++) {
        for (size_t br = 1; br <= 5; br += 2) {
            size_t len;
            uint8_t *p = build_abc(zlib, &len);
            char *text;
            icd_error err;
            icd_error_clear(&err);
            CHECK_EQ_INT(read_all(p, len, br, NULL, &text, &err), 0);
            CHECK_EQ_STR(text, want);
            free(text);
            free(p);
        }
    }
    /* schema and Iceberg ids */
    size_t len;
    uint8_t *p = build_abc(1, &len);
    orc_file *f;
    icd_error err;
    CHECK_EQ_INT(open_mem(p, len, &f, &err), 0);
    CHECK_EQ_INT(orc_file_rows(f), 5);
    CHECK_EQ_INT(orc_file_ncolumns(f), 4);
    CHECK(orc_file_find_field_id(f, 2) == orc_file_column(f, 2));
    CHECK(orc_file_find_name(f, "c") == orc_file_column(f, 3));
    CHECK(orc_file_find_name(f, "zz") == NULL);
    CHECK_EQ_STR(orc_file_column(f, 2)->name, "b");
    CHECK_EQ_INT(orc_file_column(f, 2)->kind, ORC_STRING);
    /* select one column by id */
    const orc_type *sel[] = {orc_file_find_field_id(f, 3)};
    orc_read_opts o = {0};
    o.columns = sel;
    o.ncolumns = 1;
    orc_reader *r;
    CHECK_EQ_INT(orc_reader_open(&r, f, &o, &err), 0);
    orc_batch *bt;
    CHECK_EQ_INT(orc_reader_next(r, &bt, &err), 1);
    CHECK_EQ_INT(bt->ncols, 1);
    CHECK_EQ_INT(bt->n, 5);
    CHECK(bt->cols[0].nulls == NULL);
    CHECK(bt->cols[0].i64[0] == 1 && bt->cols[0].i64[1] == 0 && bt->cols[0].i64[4] == 0);
    CHECK_EQ_INT(orc_reader_next(r, &bt, &err), 0);
    orc_reader_free(r);
    /* a nested column is not a valid selection */
    const orc_type *bad[] = {orc_file_root(f)};
    o.columns = bad;
    CHECK_EQ_INT(orc_reader_open(&r, f, &o, &err), ICD_EINVALID);
    orc_file_free(f);
    free(p);
}

/* ---- timestamps ---- */

static void test_timestamps(void)
{
    /* DATA = seconds since 2015-01-01 (RLE v1 signed), SECONDARY = nanos with the
     * trailing-zeros code (RLE v1 unsigned). */
    const int64_t base = 1420070400;
    int64_t secs[] = {0,
                      -base,         /* the epoch, 1000 ns = 0x0a */
                      -base - 1,     /* epoch -2 s + 0.5 s, stored truncated toward zero */
                      -base - 10,    /* epoch -10 s + 123 ns (below a ms: no adjustment) */
                      -base + 86400, /* 1970-01-02, 100000 ns = 0x0c */
                      1};
    int64_t nanos[] = {0, 0x0a, (5 << 3) | 7, 123 << 3, 0x0c, (999999999LL << 3)};
    uint8_t d[128], s2[128];
    size_t dl = tb_rle1(d, secs, 6, 1), sl = tb_rle1(s2, nanos, 6, 0);
    static const uint32_t subs[] = {1, 2};
    static const char *names[] = {"t", "tz"};
    Orcpb__Type *types[3] = {tb_type(K_STRUCT, 2, subs, names, -1),
                             tb_type(K_TS, 0, NULL, NULL, -1),
                             tb_type(K_TS_INSTANT, 0, NULL, NULL, -1)};
    tb_stream st[] = {
        {1, DATA, d, dl}, {1, SECONDARY, s2, sl}, {2, DATA, d, dl}, {2, SECONDARY, s2, sl}};
    uint32_t enc[] = {0, 0, 0};
    tb_stripe s = {st, 4, enc, NULL, 6, NULL};
    tb_spec spec = {0, types, 3, &s, 1, NULL, NULL, -1};
    size_t len;
    uint8_t *p = tb_build(&spec, &len);
    char *text;
    icd_error err;
    CHECK_EQ_INT(read_all(p, len, 100, NULL, &text, &err), 0);
    const char *want = "0:{\"t\":\"2015-01-01T00:00:00.000000000\",\"tz\":\"2015-01-01T00:00:00."
                       "000000000+00:00\"}\n"
                       "1:{\"t\":\"1970-01-01T00:00:00.000001000\",\"tz\":\"1970-01-01T00:00:00."
                       "000001000+00:00\"}\n"
                       "2:{\"t\":\"1969-12-31T23:59:58.500000000\",\"tz\":\"1969-12-31T23:59:58."
                       "500000000+00:00\"}\n"
                       "3:{\"t\":\"1969-12-31T23:59:50.000000123\",\"tz\":\"1969-12-31T23:59:50."
                       "000000123+00:00\"}\n"
                       "4:{\"t\":\"1970-01-02T00:00:00.000100000\",\"tz\":\"1970-01-02T00:00:00."
                       "000100000+00:00\"}\n"
                       "5:{\"t\":\"2015-01-01T00:00:01.999999999\",\"tz\":\"2015-01-01T00:00:01."
                       "999999999+00:00\"}\n";
    CHECK_EQ_STR(text, want);
    free(text);
    free(p);
    /* a UTC writer zone reads the same; another zone is refused for TIMESTAMP */
    s.tz = "UTC";
    p = tb_build(&spec, &len);
    CHECK_EQ_INT(read_all(p, len, 100, NULL, &text, &err), 0);
    CHECK_EQ_STR(text, want);
    free(text);
    free(p);
    s.tz = "America/Los_Angeles";
    p = tb_build(&spec, &len);
    CHECK_EQ_INT(read_all(p, len, 100, NULL, &text, &err), ICD_EUNSUPPORTED);
    CHECK(strstr(err.message, "America/Los_Angeles") != NULL && strstr(err.message, "'t'"));
    free(text);
    free(p);
    s.tz = NULL;
    /* nanos beyond a second are corrupt */
    int64_t badn[] = {0, 0, 0, 0, 0, 1000000000LL << 3};
    sl = tb_rle1(s2, badn, 6, 0);
    st[1].len = st[3].len = sl;
    p = tb_build(&spec, &len);
    CHECK_EQ_INT(read_all(p, len, 100, NULL, &text, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "SECONDARY") != NULL);
    free(text);
    free(p);
}

/* ---- decimals, floats, dates, binary, small ints ---- */

static void test_scalars(void)
{
    /* decimal(10,2): (12345, scale 2), (-5, scale 0), (15, scale 3: rounds half up),
     * null; decimal(38,6): 10^30 + 1 at scale 6, -1 at scale 6 */
    uint8_t dec_data[64], dec_sc[32], w_data[64], w_sc[32];
    size_t n = 0;
    n += tb_svarint(dec_data + n, 12345);
    n += tb_svarint(dec_data + n, -5);
    n += tb_svarint(dec_data + n, 15);
    size_t dn = n;
    int64_t scales[] = {2, 0, 3};
    size_t sn = tb_rle1(dec_sc, scales, 3, 1);
    /* 10^30 + 1 zigzag-encoded (2 * (10^30 + 1)) as a base-128 varint */
    uint8_t wide[] = {0x82, 0x80, 0x80, 0x80, 0xc8, 0xfa, 0xf6, 0xf4,
                      0x8c, 0xc1, 0xe6, 0xc9, 0xe5, 0xa7, 0x06};
    size_t wn = sizeof wide;
    memcpy(w_data, wide, wn);
    wn += tb_svarint(w_data + wn, -1);
    int64_t wscales[] = {6, 6};
    size_t wsn = tb_rle1(w_sc, wscales, 2, 1);
    /* float 1.5, double -0.25; date -1 and 19000; binary "\x00\xff"; tinyint -128;
     * smallint 32767; bigint INT64_MIN */
    uint8_t fl[] = {0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x00, 0x00};
    uint8_t db[] = {0, 0, 0, 0, 0, 0, 0xd0, 0xbf, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f};
    int64_t dates[] = {-1, 19000};
    uint8_t date_d[16];
    size_t daten = tb_rle1(date_d, dates, 2, 1);
    uint8_t bin_d[] = {0x00, 0xff, 'h', 'i'};
    int64_t blens[] = {2, 2};
    uint8_t bin_l[8];
    size_t binl = tb_rle1(bin_l, blens, 2, 0);
    uint8_t tiny[] = {0xfe, 0x80, 0x7f};
    int64_t shorts[] = {32767, -32768};
    uint8_t sh[16];
    size_t shn = tb_rle1(sh, shorts, 2, 1);
    int64_t longs[] = {INT64_MIN, INT64_MAX};
    uint8_t lo[32];
    size_t lon = tb_rle1(lo, longs, 2, 1);
    /* decimal column: row 3 null in a 4-row stripe; others 2 rows: use 4 rows with a
     * PRESENT stream everywhere else marking rows 2-3 null */
    uint8_t pres_dec[] = {0xff, 0xe0}; /* 1,1,1,0 */
    uint8_t pres_two[] = {0xff, 0xc0}; /* 1,1,0,0 */
    static const uint32_t subs[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    static const char *names[] = {"d", "w", "f", "g", "dt", "bin", "ti", "sh", "lo"};
    Orcpb__Type *types[10] = {
        tb_type(K_STRUCT, 9, subs, names, -1), tb_type(K_DECIMAL, 0, NULL, NULL, -1),
        tb_type(K_DECIMAL, 0, NULL, NULL, -1), tb_type(K_FLOAT, 0, NULL, NULL, -1),
        tb_type(K_DOUBLE, 0, NULL, NULL, -1),  tb_type(K_DATE, 0, NULL, NULL, -1),
        tb_type(K_BINARY, 0, NULL, NULL, -1),  tb_type(K_BYTE, 0, NULL, NULL, -1),
        tb_type(K_SHORT, 0, NULL, NULL, -1),   tb_type(K_LONG, 0, NULL, NULL, -1)};
    types[1]->has_precision = types[1]->has_scale = 1;
    types[1]->precision = 10;
    types[1]->scale = 2;
    types[2]->has_precision = types[2]->has_scale = 1;
    types[2]->precision = 38;
    types[2]->scale = 6;
    tb_stream st[] = {
        {1, PRESENT, pres_dec, 2}, {1, DATA, dec_data, dn},   {1, SECONDARY, dec_sc, sn},
        {2, PRESENT, pres_two, 2}, {2, DATA, w_data, wn},     {2, SECONDARY, w_sc, wsn},
        {3, PRESENT, pres_two, 2}, {3, DATA, fl, 8},          {4, PRESENT, pres_two, 2},
        {4, DATA, db, 16},         {5, PRESENT, pres_two, 2}, {5, DATA, date_d, daten},
        {6, PRESENT, pres_two, 2}, {6, DATA, bin_d, 4},       {6, LENGTH, bin_l, binl},
        {7, PRESENT, pres_two, 2}, {7, DATA, tiny, 3},        {8, PRESENT, pres_two, 2},
        {8, DATA, sh, shn},        {9, PRESENT, pres_two, 2}, {9, DATA, lo, lon}};
    uint32_t enc[10] = {0};
    tb_stripe s = {st, sizeof st / sizeof st[0], enc, NULL, 4, NULL};
    tb_spec spec = {1, types, 10, &s, 1, NULL, NULL, -1};
    size_t len;
    uint8_t *p = tb_build(&spec, &len);
    char *text;
    icd_error err;
    icd_error_clear(&err);
    int rc = read_all(p, len, 3, NULL, &text, &err);
    CHECK_EQ_INT(rc, 0);
    if (rc) fprintf(stderr, "%s\n", err.message);
    const char *want =
        "0:{\"d\":\"123.45\",\"w\":\"1000000000000000000000000.000001\",\"f\":1.5,\"g\":-0.25,"
        "\"dt\":\"1969-12-31\",\"bin\":\"AP8=\",\"ti\":-128,\"sh\":32767,\"lo\":-"
        "9223372036854775808}\n"
        "1:{\"d\":\"-5.00\",\"w\":\"-0.000001\",\"f\":0.0,\"g\":\"Infinity\",\"dt\":\"2022-01-08\","
        "\"bin\":\"aGk=\",\"ti\":127,\"sh\":-32768,\"lo\":9223372036854775807}\n"
        "2:{\"d\":\"0.02\",\"w\":null,\"f\":null,\"g\":null,\"dt\":null,\"bin\":null,\"ti\":null,"
        "\"sh\":null,\"lo\":null}\n"
        "3:{\"d\":null,\"w\":null,\"f\":null,\"g\":null,\"dt\":null,\"bin\":null,\"ti\":null,"
        "\"sh\":null,\"lo\":null}\n";
    CHECK_EQ_STR(text, want);
    free(text);
    free(p);
}

/* ---- nested: struct<s:struct<x:int>, l:list<int>, m:map<string,int>> ---- */

static void test_nested(void)
{
    /* 4 rows. s: present 1,0,1,1; x (only for the 3 present structs): present 1,1,0 ->
     * values 7, 8. l: present 1,1,0,1, lengths 2,0,1 -> items 1,2,3 with item 2 null
     * (items present 1,0,1: values 1,3). m: no PRESENT, lengths 1,0,0,2 -> keys
     * "a","b","c", values 10,null,30 */
    uint8_t s_pres[] = {0xff, 0xb0};
    uint8_t x_pres[] = {0xff, 0xc0};
    int64_t xv[] = {7, 8};
    uint8_t x_data[16];
    size_t xn = tb_rle1(x_data, xv, 2, 1);
    uint8_t l_pres[] = {0xff, 0xd0};
    int64_t ll[] = {2, 0, 1};
    uint8_t l_len[16];
    size_t lln = tb_rle1(l_len, ll, 3, 0);
    uint8_t li_pres[] = {0xff, 0xa0};
    int64_t liv[] = {1, 3};
    uint8_t li_data[16];
    size_t lin = tb_rle1(li_data, liv, 2, 1);
    int64_t ml[] = {1, 0, 0, 2};
    uint8_t m_len[16];
    size_t mln = tb_rle1(m_len, ml, 4, 0);
    uint8_t mk_data[] = "abc";
    int64_t mkl[] = {1, 1, 1};
    uint8_t mk_len[16];
    size_t mkln = tb_rle1(mk_len, mkl, 3, 0);
    uint8_t mv_pres[] = {0xff, 0xa0};
    int64_t mvv[] = {10, 30};
    uint8_t mv_data[16];
    size_t mvn = tb_rle1(mv_data, mvv, 2, 1);
    /* ids: 0 root, 1 s, 2 x, 3 l, 4 item, 5 m, 6 key, 7 value */
    static const uint32_t root_subs[] = {1, 3, 5};
    static const char *root_names[] = {"s", "l", "m"};
    static const uint32_t s_subs[] = {2};
    static const char *s_names[] = {"x"};
    static const uint32_t l_subs[] = {4};
    static const uint32_t m_subs[] = {6, 7};
    Orcpb__Type *types[8] = {tb_type(K_STRUCT, 3, root_subs, root_names, -1),
                             tb_type(K_STRUCT, 1, s_subs, s_names, 10),
                             tb_type(K_INT, 0, NULL, NULL, 11),
                             tb_type(K_LIST, 1, l_subs, NULL, 12),
                             tb_type(K_INT, 0, NULL, NULL, 13),
                             tb_type(K_MAP, 2, m_subs, NULL, 14),
                             tb_type(K_STRING, 0, NULL, NULL, 15),
                             tb_type(K_INT, 0, NULL, NULL, 16)};
    tb_stream st[] = {{1, PRESENT, s_pres, 2},   {2, PRESENT, x_pres, 2},  {2, DATA, x_data, xn},
                      {3, PRESENT, l_pres, 2},   {3, LENGTH, l_len, lln},  {4, PRESENT, li_pres, 2},
                      {4, DATA, li_data, lin},   {5, LENGTH, m_len, mln},  {6, DATA, mk_data, 3},
                      {6, LENGTH, mk_len, mkln}, {7, PRESENT, mv_pres, 2}, {7, DATA, mv_data, mvn}};
    uint32_t enc[8] = {0};
    tb_stripe s = {st, sizeof st / sizeof st[0], enc, NULL, 4, NULL};
    tb_spec spec = {0, types, 8, &s, 1, NULL, NULL, -1};
    size_t len;
    uint8_t *p = tb_build(&spec, &len);
    char *text;
    icd_error err;
    icd_error_clear(&err);
    for (size_t br = 1; br <= 4; br += 3) {
        CHECK_EQ_INT(read_all(p, len, br, NULL, &text, &err), 0);
        const char *want =
            "0:{\"s\":{\"x\":7},\"l\":[1,null],\"m\":[{\"key\":\"a\",\"value\":10}]}\n"
            "1:{\"s\":null,\"l\":[],\"m\":[]}\n"
            "2:{\"s\":{\"x\":8},\"l\":null,\"m\":[]}\n"
            "3:{\"s\":{\"x\":null},\"l\":[3],\"m\":[{\"key\":\"b\",\"value\":null},{\"key\":\"c\","
            "\"value\":30}]}\n";
        CHECK_EQ_STR(text, want);
        free(text);
    }
    /* field ids of nested fields */
    orc_file *f;
    CHECK_EQ_INT(open_mem(p, len, &f, &err), 0);
    CHECK(orc_file_find_field_id(f, 16) == orc_file_column(f, 7));
    CHECK(orc_file_column(f, 7)->parent == orc_file_column(f, 5));
    orc_file_free(f);
    free(p);
}

/* ---- stripes: skipping keeps row positions; statistics ---- */

static bool skip_first(void *ctx, const orc_file *f, size_t stripe)
{
    (void)ctx;
    (void)f;
    return stripe != 0;
}

static void test_stripes_and_stats(void)
{
    int64_t v1[] = {1, 2, 3}, v2[] = {40, 50};
    uint8_t d1[16], d2[16];
    size_t n1 = tb_rle1(d1, v1, 3, 1), n2 = tb_rle1(d2, v2, 2, 1);
    static const uint32_t subs[] = {1};
    static const char *names[] = {"v"};
    Orcpb__Type *types[2] = {tb_type(K_STRUCT, 1, subs, names, -1),
                             tb_type(K_LONG, 0, NULL, NULL, 1)};
    tb_stream s1[] = {{1, DATA, d1, n1}}, s2[] = {{1, DATA, d2, n2}};
    uint32_t enc[2] = {0, 0};
    tb_stripe stripes[] = {{s1, 1, enc, NULL, 3, NULL}, {s2, 1, enc, NULL, 2, NULL}};
    /* stripe statistics: min/max per stripe */
    Orcpb__IntegerStatistics is[2];
    Orcpb__ColumnStatistics cs[2][2];
    Orcpb__ColumnStatistics *csp[2][2];
    Orcpb__StripeStatistics ss[2];
    Orcpb__StripeStatistics *ssp[2];
    int64_t mins[] = {1, 40}, maxs[] = {3, 50};
    for (int k = 0; k < 2; k++) {
        orcpb__integer_statistics__init(&is[k]);
        is[k].has_minimum = is[k].has_maximum = 1;
        is[k].minimum = mins[k];
        is[k].maximum = maxs[k];
        for (int c = 0; c < 2; c++) {
            orcpb__column_statistics__init(&cs[k][c]);
            cs[k][c].has_numberofvalues = 1;
            cs[k][c].numberofvalues = k ? 2 : 3;
            cs[k][c].has_hasnull = 1;
            csp[k][c] = &cs[k][c];
        }
        cs[k][1].intstatistics = &is[k];
        orcpb__stripe_statistics__init(&ss[k]);
        ss[k].n_colstats = 2;
        ss[k].colstats = csp[k];
        ssp[k] = &ss[k];
    }
    Orcpb__Metadata md;
    orcpb__metadata__init(&md);
    md.n_stripestats = 2;
    md.stripestats = ssp;
    tb_spec spec = {1, types, 2, stripes, 2, &md, NULL, -1};
    size_t len;
    uint8_t *p = tb_build(&spec, &len);
    char *text;
    icd_error err;
    CHECK_EQ_INT(read_all(p, len, 2, NULL, &text, &err), 0);
    CHECK_EQ_STR(text, "0:{\"v\":1}\n1:{\"v\":2}\n2:{\"v\":3}\n3:{\"v\":40}\n4:{\"v\":50}\n");
    free(text);
    CHECK_EQ_INT(read_all(p, len, 2, skip_first, &text, &err), 0);
    CHECK_EQ_STR(text, "3:{\"v\":40}\n4:{\"v\":50}\n");
    free(text);
    orc_file *f;
    CHECK_EQ_INT(open_mem(p, len, &f, &err), 0);
    CHECK_EQ_INT(orc_file_nstripes(f), 2);
    CHECK_EQ_INT(orc_file_stripe(f, 1)->first_row, 3);
    orc_stats st;
    orc_file_stripe_stats(f, 1, 1, &st);
    CHECK(st.present && st.kind == ORC_STATS_INT && st.has_min && st.min_i == 40 &&
          st.max_i == 50 && st.count == 2 && st.has_null_known && !st.has_null);
    orc_file_stripe_stats(f, 0, 1, &st);
    CHECK(st.min_i == 1 && st.max_i == 3);
    orc_file_stripe_stats(f, 2, 1, &st);
    CHECK(!st.present);
    orc_file_column_stats(f, 1, &st);
    CHECK(!st.present);
    orc_file_free(f);
    free(p);
    /* footer row count that disagrees with the stripes */
    spec.rows_override = 7;
    p = tb_build(&spec, &len);
    CHECK_EQ_INT(open_mem(p, len, &f, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "7 rows") != NULL);
    free(p);
}

/* ---- corrupt and truncated input ---- */

static void test_corrupt_tails(void)
{
    icd_error err;
    orc_file *f;
    size_t len;
    uint8_t *good = build_abc(1, &len);
    uint8_t *p = malloc(len + 16);

    CHECK_EQ_INT(open_mem(good, 3, &f, &err), ICD_ECORRUPT); /* too small */
    CHECK(strstr(err.message, "too small") != NULL);
    memcpy(p, good, len);
    p[0] = 'X';
    CHECK_EQ_INT(open_mem(p, len, &f, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "magic") != NULL);
    memcpy(p, good, len);
    p[len - 1] = 0; /* postscript length 0 */
    CHECK_EQ_INT(open_mem(p, len, &f, &err), ICD_ECORRUPT);
    memcpy(p, good, len);
    p[len - 1] = 255; /* longer than the file allows? the file is > 255 bytes: misparse */
    CHECK(open_mem(p, len, &f, &err) < 0);
    /* every truncation of the file fails cleanly */
    for (size_t cut = 0; cut < len; cut++) {
        int rc = open_mem(good, cut, &f, &err);
        CHECK(rc < 0);
        if (rc == 0) orc_file_free(f);
    }
    /* every single-byte corruption of the tail either fails cleanly or reads */
    size_t pslen = good[len - 1];
    for (size_t i = len - 1 - pslen - 40; i < len - 1; i++) {
        memcpy(p, good, len);
        p[i] ^= 0x5a;
        char *text = NULL;
        int rc = read_all(p, len, 2, NULL, &text, &err);
        CHECK(rc <= 0);
        if (rc < 0) CHECK(err.message[0] != '\0');
        free(text);
    }
    free(p);
    free(good);
}

static void test_corrupt_streams(void)
{
    icd_error err;
    char *text;
    /* DATA of 'a' cut short */
    Orcpb__Type *types[4] = {tb_type(K_STRUCT, 3, abc_subs, abc_names, -1),
                             tb_type(K_INT, 0, NULL, NULL, 1), tb_type(K_STRING, 0, NULL, NULL, 2),
                             tb_type(K_BOOL, 0, NULL, NULL, 3)};
    tb_stream st[] = {{1, PRESENT, a_present, sizeof a_present},
                      {1, DATA, a_data, sizeof a_data - 1},
                      {2, DATA, b_data, sizeof b_data},
                      {2, LENGTH, b_len, sizeof b_len},
                      {2, DICT, b_dict, 23},
                      {3, DATA, c_data, sizeof c_data}};
    uint32_t enc[] = {0, 2, 3, 0};
    uint32_t dict[] = {0, 0, 3, 0};
    tb_stripe s = {st, 6, enc, dict, 5, NULL};
    tb_spec spec = {0, types, 4, &s, 1, NULL, NULL, -1};
    size_t len;
    uint8_t *p = tb_build(&spec, &len);
    CHECK_EQ_INT(read_all(p, len, 10, NULL, &text, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "column 1 'a'") != NULL && strstr(err.message, "DATA") != NULL);
    CHECK_EQ_STR(err.file, "mem.orc");
    CHECK(err.offset > 0);
    free(text);
    free(p);
    st[1].len = sizeof a_data;
    /* dictionary id out of range: dictionary of 2 entries */
    dict[2] = 2;
    uint8_t len2[] = {0x46, 0x01, 0xa7};
    st[3].data = len2;
    st[3].len = sizeof len2;
    p = tb_build(&spec, &len);
    CHECK_EQ_INT(read_all(p, len, 10, NULL, &text, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "dictionary id 2") != NULL);
    free(text);
    free(p);
    st[3].data = b_len;
    st[3].len = sizeof b_len;
    dict[2] = 3;
    /* dictionary lengths beyond DICTIONARY_DATA */
    st[4].len = 20;
    p = tb_build(&spec, &len);
    CHECK_EQ_INT(read_all(p, len, 10, NULL, &text, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "DICTIONARY_DATA") != NULL);
    free(text);
    free(p);
    st[4].len = 23;
    /* a missing stream */
    spec.stripes = &(tb_stripe){st, 5, enc, dict, 5, NULL}; /* drops c's DATA */
    p = tb_build(&spec, &len);
    CHECK_EQ_INT(read_all(p, len, 10, NULL, &text, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "missing") != NULL && strstr(err.message, "'c'") != NULL);
    free(text);
    free(p);
    spec.stripes = &s;
    /* an unsupported encoding kind for an int */
    enc[1] = 3;
    p = tb_build(&spec, &len);
    CHECK_EQ_INT(read_all(p, len, 10, NULL, &text, &err), ICD_EUNSUPPORTED);
    CHECK(strstr(err.message, "encoding") != NULL);
    free(text);
    free(p);
    enc[1] = 2;
    /* a union column: unsupported, naming the column */
    static const uint32_t usubs[] = {1};
    static const char *unames[] = {"u"};
    static const uint32_t uvar[] = {2};
    Orcpb__Type *ut[3] = {tb_type(K_STRUCT, 1, usubs, unames, -1),
                          tb_type(K_UNION, 1, uvar, NULL, -1), tb_type(K_INT, 0, NULL, NULL, -1)};
    uint32_t uenc[3] = {0};
    tb_stripe us = {NULL, 0, uenc, NULL, 1, NULL};
    tb_spec uspec = {0, ut, 3, &us, 1, NULL, NULL, -1};
    p = tb_build(&uspec, &len);
    CHECK_EQ_INT(read_all(p, len, 10, NULL, &text, &err), ICD_EUNSUPPORTED);
    CHECK(strstr(err.message, "'u'") != NULL && strstr(err.message, "union") != NULL);
    free(text);
    free(p);
    /* types that do not form a tree: a subtype pointing back to the root */
    static const uint32_t loop[] = {0};
    Orcpb__Type *lt[1] = {tb_type(K_STRUCT, 1, loop, unames, -1)};
    tb_spec lspec = {0, lt, 1, &us, 1, NULL, NULL, -1};
    p = tb_build(&lspec, &len);
    orc_file *f;
    CHECK_EQ_INT(open_mem(p, len, &f, &err), ICD_ECORRUPT);
    CHECK(strstr(err.message, "subtype") != NULL);
    free(p);
}

/* A direct string column whose values are all empty: its DATA stream holds no bytes
 * (compressed, no chunk at all), so the values point at no data. Found by fuzz_orc
 * under UBSan (a zero offset applied to a null pointer). */
static void test_empty_strings(void)
{
    static const uint32_t subs[] = {1};
    static const char *names[] = {"s"};
    static const uint8_t zeros[] = {0x00, 0x00, 0x00}; /* RLE v1: run of 3 zeros */
    for (int zlib = 0; zlib <= 1; zlib++) {
        Orcpb__Type *types[2] = {tb_type(K_STRUCT, 1, subs, names, -1),
                                 tb_type(K_STRING, 0, NULL, NULL, 1)};
        tb_stream st[] = {{1, DATA, (const uint8_t *)"", 0}, {1, LENGTH, zeros, sizeof zeros}};
        uint32_t enc[] = {0, 0};
        tb_stripe s = {st, 2, enc, NULL, 3, NULL};
        tb_spec spec = {zlib, types, 2, &s, 1, NULL, NULL, -1};
        size_t len;
        uint8_t *p = tb_build(&spec, &len);
        icd_error err;
        char *text;
        CHECK_EQ_INT(read_all(p, len, 10, NULL, &text, &err), 0);
        CHECK_EQ_STR(text, "0:{\"s\":\"\"}\n1:{\"s\":\"\"}\n2:{\"s\":\"\"}\n");
        free(text);
        free(p);
    }
}

TEST_MAIN(TEST(test_basic_types), TEST(test_timestamps), TEST(test_scalars), TEST(test_nested),
          TEST(test_stripes_and_stats), TEST(test_corrupt_tails), TEST(test_corrupt_streams),
          TEST(test_empty_strings))
