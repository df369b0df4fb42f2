/* Unit tests of druid/rows/row.c: Druid input rows from every Iceberg value type, map-key
 * stringification, __time extraction, and maxParseExceptions accounting. Every row is
 * also checked to be valid JSON with jansson. */
#include <math.h>
#include <stdlib.h>

#include <jansson.h>

#include "druid/rows/row.h"
#include "test.h"

#define DAY 86400000LL
#define JUN1 (19875 * DAY) /* 2024-06-01T00:00:00Z */

typedef struct fixture {
    dr_timestamp_spec ts;
    dr_row_writer *w;
    icd_buf out;
    icd_error err;
} fixture;

static void setup(fixture *f, const char *column, const char *format, const char *missing)
{
    memset(f, 0, sizeof *f);
    CHECK_EQ_INT(dr_timestamp_spec_init(&f->ts, column, format, missing, JUN1, &f->err), 0);
    CHECK_EQ_INT(dr_row_writer_new(&f->w, &f->ts, &f->err), 0);
    CHECK_EQ_INT(dr_row_set_source(f->w, "/wh/t/data/00000-0.data", &f->err), 0);
}

static void teardown(fixture *f)
{
    dr_row_writer_free(f->w);
    dr_timestamp_spec_clear(&f->ts);
    icd_buf_free(&f->out);
}

/* Ends the row, checks it is valid JSON and returns its text. */
static const char *finish(fixture *f)
{
    icd_buf_clear(&f->out);
    int rc = dr_row_end(f->w, &f->out, &f->err);
    CHECK_EQ_INT(rc, 0);
    if (rc) {
        fprintf(stderr, "  %s\n", f->err.message);
        return "";
    }
    json_error_t je;
    /* NaN and +-Infinity are Jackson's non-numeric numbers (ALLOW_NON_NUMERIC_NUMBERS):
     * jansson, strict JSON, checks the rest with them replaced by 0 */
    icd_buf strict = ICD_BUF_INIT;
    for (size_t i = 0; i < f->out.len;) {
        const char *p = f->out.data + i;
        size_t k = !strncmp(p, "-Infinity", 9)  ? 9
                   : !strncmp(p, "Infinity", 8) ? 8
                   : !strncmp(p, "NaN", 3)      ? 3
                                                : 0;
        bool value = i > 0 && strchr(":,[", f->out.data[i - 1]);
        if (k && value) {
            icd_buf_putc(&strict, '0');
            i += k;
        } else {
            icd_buf_putc(&strict, *p);
            i++;
        }
    }
    json_t *v = json_loadb(strict.data, strict.len, JSON_DECODE_INT_AS_REAL, &je);
    icd_buf_free(&strict);
    CHECK(v != NULL);
    if (!v) fprintf(stderr, "  invalid JSON: %s (%s)\n", f->out.data, je.text);
    json_decref(v);
    return f->out.data;
}

#define FIELD(w, name) dr_row_field(w, name, strlen(name))

static void test_scalars(void)
{
    fixture f;
    setup(&f, "ts", "auto", NULL);
    dr_row_writer *w = f.w;
    dr_row_begin(w, 0);
    FIELD(w, "b");
    dr_row_bool(w, true);
    FIELD(w, "i");
    dr_row_long(w, -42);
    FIELD(w, "l");
    dr_row_long(w, INT64_MIN);
    FIELD(w, "f");
    dr_row_float(w, 1.1f);
    FIELD(w, "d");
    dr_row_double(w, 0.1);
    FIELD(w, "nan");
    dr_row_double(w, NAN);
    FIELD(w, "inf");
    dr_row_float(w, -INFINITY);
    FIELD(w, "dec");
    dr_row_decimal_i64(w, 12340, 2);
    FIELD(w, "dneg");
    dr_row_decimal_i64(w, -5, 3);
    FIELD(w, "date");
    dr_row_date(w, 19875);
    FIELD(w, "old");
    dr_row_date(w, -1);
    FIELD(w, "ts");
    dr_row_timestamp(w, 1717200000123456LL, 6, true);
    FIELD(w, "tsn");
    dr_row_timestamp(w, -1, 9, false);
    FIELD(w, "s");
    dr_row_string(w, "h\xc3\xa9 \"q\"", 7);
    FIELD(w, "u");
    const uint8_t u[16] = {0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3,
                           0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00};
    dr_row_uuid(w, u);
    FIELD(w, "bin");
    dr_row_binary(w, (const uint8_t *)"abc", 3);
    FIELD(w, "empty");
    dr_row_binary(w, (const uint8_t *)"", 0);
    FIELD(w, "n");
    dr_row_null(w);
    CHECK_EQ_STR(
        finish(&f),
        "{\"__time\":1717200000123,\"b\":true,\"i\":-42,\"l\":-9223372036854775808,\"f\":1.1,"
        "\"d\":0.1,\"nan\":NaN,\"inf\":-Infinity,\"dec\":123.40,\"dneg\":-0.005,"
        "\"date\":\"2024-06-01\",\"old\":\"1969-12-31\",\"ts\":1717200000123,\"tsn\":-1,"
        "\"s\":\"h\xc3\xa9 \\\"q\\\"\",\"u\":\"123e4567-e89b-12d3-a456-426614174000\","
        "\"bin\":\"YWJj\",\"empty\":\"\",\"n\":null}");
    teardown(&f);
}

static void test_decimal_and_time(void)
{
    fixture f;
    setup(&f, "t", "millis", NULL);
    dr_row_writer *w = f.w;
    dr_row_begin(w, 3);
    FIELD(w, "t");
    dr_row_long(w, 0);
    /* 16-byte decimal: 2^64 with scale 0, and -(2^64) / 100 */
    uint8_t pos[16] = {0};
    pos[7] = 1;
    FIELD(w, "big");
    dr_row_decimal(w, pos, 16, 0);
    uint8_t neg[16];
    memset(neg, 0xff, 8);
    memset(neg + 8, 0, 8);
    FIELD(w, "bign");
    dr_row_decimal(w, neg, 16, 2);
    FIELD(w, "t1");
    dr_row_time(w, (14 * 3600 + 30 * 60) * 1000000LL);
    FIELD(w, "t2");
    dr_row_time(w, (14 * 3600 + 30 * 60 + 5) * 1000000LL);
    FIELD(w, "t3");
    dr_row_time(w, (14 * 3600 + 30 * 60) * 1000000LL + 123000);
    FIELD(w, "t4");
    dr_row_time(w, 1);
    CHECK_EQ_STR(
        finish(&f),
        "{\"__time\":0,\"t\":0,\"big\":18446744073709551616,\"bign\":-184467440737095516.16,"
        "\"t1\":\"14:30\",\"t2\":\"14:30:05\",\"t3\":\"14:30:00.123\",\"t4\":\"00:00:00.000001\"}");
    teardown(&f);
}

static void test_nested(void)
{
    fixture f;
    setup(&f, "ts", "auto", NULL);
    dr_row_writer *w = f.w;
    dr_row_begin(w, 0);
    FIELD(w, "ts");
    dr_row_string(w, "2024-06-01", 10);
    FIELD(w, "addr");
    dr_row_struct_begin(w);
    FIELD(w, "city");
    dr_row_string(w, "Paris", 5);
    FIELD(w, "zip");
    dr_row_long(w, 75001);
    FIELD(w, "geo");
    dr_row_list_begin(w);
    dr_row_double(w, 48.85);
    dr_row_double(w, 2.35);
    dr_row_list_end(w);
    dr_row_struct_end(w);
    FIELD(w, "tags");
    dr_row_list_begin(w);
    dr_row_string(w, "a", 1);
    dr_row_null(w);
    dr_row_struct_begin(w);
    FIELD(w, "x");
    dr_row_long(w, 1);
    dr_row_struct_end(w);
    dr_row_list_begin(w);
    dr_row_list_end(w);
    dr_row_list_end(w);
    FIELD(w, "empty");
    dr_row_struct_begin(w);
    dr_row_struct_end(w);
    CHECK_EQ_STR(finish(&f),
                 "{\"__time\":1717200000000,\"ts\":\"2024-06-01\",\"addr\":{\"city\":\"Paris\","
                 "\"zip\":75001,"
                 "\"geo\":[48.85,2.35]},\"tags\":[\"a\",null,{\"x\":1},[]],\"empty\":{}}");
    teardown(&f);
}

static void test_map_keys(void)
{
    fixture f;
    setup(&f, "ts", "auto", "2000-01-01T00:00:00Z");
    dr_row_writer *w = f.w;
    dr_row_begin(w, 0);
    FIELD(w, "m");
    dr_row_map_begin(w);
    dr_row_long(w, 5);
    dr_row_string(w, "five", 4);
    dr_row_double(w, 1e7);
    dr_row_double(w, NAN);
    dr_row_float(w, 0.5f);
    dr_row_bool(w, false);
    dr_row_date(w, 19875);
    dr_row_long(w, 1);
    dr_row_timestamp(w, 1717200000000000LL, 6, false);
    dr_row_long(w, 2);
    dr_row_decimal_i64(w, 1, 8); /* BigDecimal 1E-8 */
    dr_row_long(w, 3);
    dr_row_decimal_i64(w, 12345, 2);
    dr_row_long(w, 4);
    dr_row_bool(w, true);
    dr_row_map_begin(w); /* a map as a value */
    dr_row_string(w, "k", 1);
    dr_row_list_begin(w);
    dr_row_list_end(w);
    dr_row_map_end(w);
    dr_row_binary(w, (const uint8_t *)"\xff", 1);
    dr_row_long(w, 6);
    dr_row_struct_begin(w); /* a struct as a key: its JSON text */
    FIELD(w, "a");
    dr_row_long(w, 1);
    dr_row_struct_end(w);
    dr_row_string(w, "s", 1);
    dr_row_map_end(w);
    FIELD(w, "e");
    dr_row_map_begin(w);
    dr_row_map_end(w);
    CHECK_EQ_STR(finish(&f),
                 "{\"__time\":946684800000,\"m\":{\"5\":\"five\",\"1.0E7\":NaN,\"0.5\":false,"
                 "\"2024-06-01\":1,\"1717200000000\":2,\"1E-8\":3,\"123.45\":4,\"true\":{\"k\":[]},"
                 "\"/w==\":6,\"{\\\"a\\\":1}\":\"s\"},\"e\":{}}");
    teardown(&f);
}

static void test_time_column(void)
{
    fixture f;
    /* the timestamp column can come anywhere; __time is always first */
    setup(&f, "event_ts", "auto", NULL);
    dr_row_writer *w = f.w;
    dr_row_begin(w, 0);
    FIELD(w, "a");
    dr_row_long(w, 1);
    FIELD(w, "event_ts");
    dr_row_timestamp(w, 1717200000000000LL, 6, true);
    CHECK_EQ_STR(finish(&f), "{\"__time\":1717200000000,\"a\":1,\"event_ts\":1717200000000}");
    /* a source column named __time is replaced by the computed one */
    dr_row_begin(w, 1);
    FIELD(w, "__time");
    dr_row_struct_begin(w);
    FIELD(w, "x");
    dr_row_long(w, 9);
    dr_row_struct_end(w);
    FIELD(w, "event_ts");
    dr_row_date(w, 19875); /* a date column: Druid sees "2024-06-01" */
    FIELD(w, "b");
    dr_row_long(w, 2);
    CHECK_EQ_STR(finish(&f), "{\"__time\":1717200000000,\"event_ts\":\"2024-06-01\",\"b\":2}");
    /* a decimal timestamp column is a Number */
    dr_row_begin(w, 2);
    FIELD(w, "event_ts");
    dr_row_decimal_i64(w, 17172000000009, 1);
    CHECK_EQ_STR(finish(&f), "{\"__time\":1717200000000,\"event_ts\":1717200000000.9}");
    teardown(&f);

    setup(&f, "secs", "posix", NULL);
    w = f.w;
    dr_row_begin(w, 0);
    FIELD(w, "secs");
    dr_row_long(w, 1717200000);
    CHECK_EQ_STR(finish(&f), "{\"__time\":1717200000000,\"secs\":1717200000}");
    dr_row_begin(w, 1);
    FIELD(w, "secs");
    dr_row_double(w, 1717200000.75);
    CHECK_EQ_STR(finish(&f), "{\"__time\":1717200000000,\"secs\":1.71720000075E9}");
    teardown(&f);

    setup(&f, "d", "yyyy-MM-dd", NULL);
    w = f.w;
    dr_row_begin(w, 0);
    FIELD(w, "d");
    dr_row_date(w, 19875);
    CHECK_EQ_STR(finish(&f), "{\"__time\":1717200000000,\"d\":\"2024-06-01\"}");
    teardown(&f);
}

static void test_unparseable(void)
{
    fixture f;
    setup(&f, "ts", "auto", NULL);
    dr_row_writer *w = f.w;
    dr_parse_exceptions pe;
    dr_parse_exceptions_init(&pe, 1);
    icd_error err;
    /* 1: a column that is not a time */
    dr_row_begin(w, 7);
    FIELD(w, "ts");
    dr_row_string(w, "soon", 4);
    icd_buf_clear(&f.out);
    CHECK_EQ_INT(dr_row_end(w, &f.out, &f.err), ICD_EINVALID);
    CHECK_EQ_INT(f.out.len, 0);
    CHECK_EQ_STR(f.err.file, "/wh/t/data/00000-0.data");
    CHECK_EQ_STR(f.err.message, "row 7: Timestamp[soon] is unparseable! (Invalid format: \"soon\" "
                                "is malformed at \"soon\")");
    CHECK_EQ_INT(dr_parse_exceptions_add(&pe, &f.err, &err), 0);
    /* 2: no timestamp column at all, no missingValue */
    dr_row_begin(w, 8);
    FIELD(w, "x");
    dr_row_long(w, 1);
    CHECK_EQ_INT(dr_row_end(w, &f.out, &f.err), ICD_EINVALID);
    CHECK_EQ_STR(f.err.message, "row 8: Timestamp[null] is unparseable!");
    /* the second exception exceeds maxParseExceptions = 1 */
    CHECK_EQ_INT(dr_parse_exceptions_add(&pe, &f.err, &err), ICD_EINVALID);
    CHECK_EQ_INT(pe.count, 2);
    CHECK_EQ_STR(err.message, "Max parse exceptions[1] exceeded; last: /wh/t/data/00000-0.data: "
                              "row 8: Timestamp[null] is unparseable!");
    /* binary, boolean and struct values never parse as a time */
    dr_row_begin(w, 9);
    FIELD(w, "ts");
    dr_row_binary(w, (const uint8_t *)"\x01\x02", 2);
    CHECK_EQ_INT(dr_row_end(w, &f.out, &f.err), ICD_EINVALID);
    dr_row_begin(w, 10);
    FIELD(w, "ts");
    dr_row_bool(w, true);
    CHECK_EQ_INT(dr_row_end(w, &f.out, &f.err), ICD_EINVALID);
    dr_row_begin(w, 11);
    FIELD(w, "ts");
    dr_row_list_begin(w);
    dr_row_long(w, 1717200000000LL);
    dr_row_list_end(w);
    CHECK_EQ_INT(dr_row_end(w, &f.out, &f.err), ICD_EINVALID);
    CHECK_EQ_STR(f.err.message,
                 "row 11: Timestamp[[1717200000000]] is unparseable! "
                 "(Invalid format: \"[1717200000000]\" is malformed at \"[1717200000000]\")");
    /* the writer recovers for the next row */
    dr_row_begin(w, 12);
    FIELD(w, "ts");
    dr_row_long(w, 5);
    CHECK_EQ_STR(finish(&f), "{\"__time\":5,\"ts\":5}");
    teardown(&f);

    /* maxParseExceptions = 0 fails on the first; unlimited never fails */
    dr_parse_exceptions_init(&pe, 0);
    icd_error row = {0};
    CHECK_EQ_INT(dr_parse_exceptions_add(&pe, &row, &err), ICD_EINVALID);
    dr_parse_exceptions_init(&pe, INT64_MAX);
    for (int i = 0; i < 1000; i++)
        CHECK_EQ_INT(dr_parse_exceptions_add(&pe, &row, &err), 0);
}

static void test_misuse(void)
{
    fixture f;
    setup(&f, "ts", "auto", NULL);
    dr_row_writer *w = f.w;
    dr_row_begin(w, 0);
    dr_row_long(w, 1); /* no field name */
    CHECK_EQ_INT(dr_row_end(w, &f.out, &f.err), ICD_EINTERNAL);
    dr_row_begin(w, 1);
    FIELD(w, "a");
    dr_row_list_begin(w);
    CHECK_EQ_INT(dr_row_end(w, &f.out, &f.err), ICD_EINTERNAL); /* unclosed */
    dr_row_begin(w, 2);
    FIELD(w, "a");
    dr_row_map_begin(w);
    dr_row_long(w, 1);
    dr_row_map_end(w); /* a key without a value */
    CHECK_EQ_INT(dr_row_end(w, &f.out, &f.err), ICD_EINTERNAL);
    dr_row_begin(w, 3);
    FIELD(w, "a");
    dr_row_struct_end(w);
    CHECK_EQ_INT(dr_row_end(w, &f.out, &f.err), ICD_EINTERNAL);
    dr_row_begin(w, 4);
    FIELD(w, "a");
    for (int i = 0; i < 300; i++)
        dr_row_list_begin(w);
    CHECK_EQ_INT(dr_row_end(w, &f.out, &f.err), ICD_EINTERNAL);
    CHECK_EQ_INT(dr_row_end(w, &f.out, &f.err), ICD_EINTERNAL); /* end without begin */
    teardown(&f);
}

static void test_java_text_helpers(void)
{
    icd_buf b = ICD_BUF_INIT;
    const uint8_t one[1] = {1};
    dr_fmt_big_decimal(&b, one, 1, 6);
    CHECK_EQ_STR(b.data, "0.000001");
    icd_buf_clear(&b);
    dr_fmt_big_decimal(&b, one, 1, 7);
    CHECK_EQ_STR(b.data, "1E-7");
    icd_buf_clear(&b);
    const uint8_t m[2] = {0xff, 0x85}; /* -123 */
    dr_fmt_big_decimal(&b, m, 2, 10);
    CHECK_EQ_STR(b.data, "-1.23E-8");
    icd_buf_clear(&b);
    dr_fmt_local_time(&b, 0);
    CHECK_EQ_STR(b.data, "00:00");
    icd_buf_free(&b);
}

/* Values as Druid's Parquet reader (ParquetGroupConverter) gives them, for a .parquet
 * source; floating values keep their type through Jackson (Java's toString text). */
static void test_parquet_dialect(void)
{
    fixture f;
    setup(&f, "ts", "auto", NULL);
    dr_row_writer *w = f.w;
    /* the name tells nothing: the dialect is set from the file's format */
    CHECK_EQ_INT(dr_row_set_source(w, "/wh/t/data/00000-0.orc", &f.err), 0);
    CHECK_EQ_INT(dr_row_current_dialect(w), DR_ROW_GENERIC);
    dr_row_set_dialect(w, DR_ROW_PARQUET);
    CHECK_EQ_INT(dr_row_current_dialect(w), DR_ROW_PARQUET);
    dr_row_begin(w, 0);
    FIELD(w, "ts"); /* -1.5 ms in micros: truncated toward zero (-1), not floored (-2) */
    dr_row_timestamp(w, -1500, 6, true);
    FIELD(w, "tsn"); /* TIMESTAMP(NANOS) has no OriginalType: the raw long */
    dr_row_timestamp(w, 1717200000000000001LL, 9, false);
    FIELD(w, "date");
    dr_row_date(w, 19875);
    FIELD(w, "time");
    dr_row_time(w, 52200000001LL);
    FIELD(w, "dec_int"); /* INT32/INT64 decimal: the unscaled integer */
    dr_row_decimal_i64(w, 12340, 2);
    FIELD(w, "dec_fixed"); /* FIXED decimal: unscaled / 10^scale as a double */
    static const uint8_t be[] = {0xff, 0xcf, 0xc7}; /* -12345 */
    dr_row_decimal(w, be, sizeof be, 3);
    FIELD(w, "dec_wide"); /* more than 18 digits: exact */
    static const uint8_t wide[] = {0x01, 0, 0, 0, 0, 0, 0, 0, 0};
    dr_row_decimal(w, wide, sizeof wide, 2);
    FIELD(w, "u");
    static const uint8_t uuid[16] = {0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3,
                                     0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00};
    dr_row_uuid(w, uuid);
    FIELD(w, "f7"); /* an integral float >= 1e7 stays a float, not a JSON integer */
    dr_row_float(w, 1e7f);
    FIELD(w, "d15");
    dr_row_double(w, 1e15);
    FIELD(w, "pinf");
    dr_row_double(w, INFINITY);
    CHECK_EQ_STR(finish(&f), "{\"__time\":-1,\"ts\":-1,\"tsn\":1717200000000000001,"
                             "\"date\":1717200000000,\"time\":52200000001,\"dec_int\":12340,"
                             "\"dec_fixed\":-12.345,\"dec_wide\":184467440737095516.16,"
                             "\"u\":\"Ej5FZ+ibEtOkVkJmFBdAAA==\",\"f7\":1.0E7,\"d15\":1.0E15,"
                             "\"pinf\":Infinity}");
    /* binaryAsString: bytes as UTF-8 text, bad bytes as U+FFFD */
    dr_row_set_binary_as_string(w, true);
    dr_row_begin(w, 1);
    FIELD(w, "ts");
    dr_row_long(w, 5);
    FIELD(w, "b");
    dr_row_binary(w, (const uint8_t *)"h\xc3\xa9\xff", 4);
    CHECK_EQ_STR(finish(&f), "{\"__time\":5,\"ts\":5,\"b\":\"h\xc3\xa9\\ufffd\"}");
    teardown(&f);
}

/* Values as Druid's ORC reader (OrcStructConverter) and Avro reader (a GenericRecord
 * through AvroFlattenerMaker) give them, for .orc / .avro sources. */
static void test_orc_avro_dialects(void)
{
    fixture f;
    setup(&f, "ts", "auto", NULL);
    dr_row_writer *w = f.w;
    static const uint8_t uuid[16] = {0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3,
                                     0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00};
    static const uint8_t dec[] = {0xff, 0xcf, 0xc7}; /* -12345 */
    dr_row_set_dialect(w, DR_ROW_ORC);
    CHECK_EQ_INT(dr_row_current_dialect(w), DR_ROW_ORC);
    dr_row_begin(w, 0);
    FIELD(w, "ts"); /* OrcTimestamp.getTime(): millis, floor */
    dr_row_timestamp(w, -1500, 6, true);
    FIELD(w, "date"); /* DateTimes.utc(...): a DateTime, read as its text */
    dr_row_date(w, 19875);
    FIELD(w, "time"); /* Iceberg time in ORC is a long of micros */
    dr_row_time(w, 52200000001LL);
    FIELD(w, "dec"); /* HiveDecimal.doubleValue() */
    dr_row_decimal(w, dec, sizeof dec, 3);
    FIELD(w, "dec64");
    dr_row_decimal_i64(w, 12340, 2);
    FIELD(w, "u"); /* ORC binary: bytes */
    dr_row_uuid(w, uuid);
    FIELD(w, "l");
    dr_row_list_begin(w);
    dr_row_null(w);
    dr_row_date(w, 0);
    dr_row_list_end(w);
    CHECK_EQ_STR(finish(&f), "{\"__time\":-2,\"ts\":-2,\"date\":\"2024-06-01T00:00:00.000Z\","
                             "\"time\":52200000001,\"dec\":-12.345,\"dec64\":123.4,"
                             "\"u\":\"Ej5FZ+ibEtOkVkJmFBdAAA==\",\"l\":[null,"
                             "\"1970-01-01T00:00:00.000Z\"]}");
    dr_row_set_dialect(w, DR_ROW_AVRO);
    CHECK_EQ_INT(dr_row_current_dialect(w), DR_ROW_AVRO);
    dr_row_begin(w, 1);
    FIELD(w, "ts"); /* timestamp-micros without conversion: the raw long */
    dr_row_timestamp(w, 1717200000123456LL, 6, true);
    FIELD(w, "date"); /* the int of days */
    dr_row_date(w, 19875);
    FIELD(w, "time");
    dr_row_time(w, 52200000001LL);
    FIELD(w, "dec"); /* the fixed's bytes */
    dr_row_decimal(w, dec, sizeof dec, 3);
    FIELD(w, "u");
    dr_row_uuid(w, uuid);
    FIELD(w, "l"); /* transformValue drops the nulls of a list */
    dr_row_list_begin(w);
    dr_row_null(w);
    dr_row_long(w, 1);
    dr_row_null(w);
    dr_row_long(w, 2);
    dr_row_list_end(w);
    CHECK_EQ_STR(finish(&f), "{\"__time\":1717200000123456,\"ts\":1717200000123456,"
                             "\"date\":19875,\"time\":52200000001,\"dec\":\"/8/H\","
                             "\"u\":\"Ej5FZ+ibEtOkVkJmFBdAAA==\",\"l\":[1,2]}");
    CHECK_EQ_INT(dr_row_set_source(w, "/wh/t/data/x_data.0.parq", &f.err), 0);
    CHECK_EQ_INT(dr_row_current_dialect(w), DR_ROW_AVRO); /* a new name keeps the dialect */
    teardown(&f);
}

TEST_MAIN(TEST(test_parquet_dialect), TEST(test_orc_avro_dialects), TEST(test_scalars),
          TEST(test_decimal_and_time), TEST(test_nested), TEST(test_map_keys),
          TEST(test_time_column), TEST(test_unparseable), TEST(test_misuse),
          TEST(test_java_text_helpers))
