/*
 * Unit tests of formats/avro: schema parsing, datum decoding (trees, skipping, projection,
 * lookups by name and field id), the container reader (every codec, multi-block files)
 * and its error paths on corrupt files. Files are built by the test writer in
 * icd_avro_writer.h; expected JSON was worked out by hand from the values written (dates and
 * times checked with Python's datetime).
 */
#include <stdlib.h>

#include "avro/avro_writer.h"
#include "base/jsonw.h"
#include "formats/avro/container.h"
#include "formats/avro/json.h"
#include "io/memfile.h"
#include "test.h"

/* Reads a whole in-memory container file and returns its records as NDJSON (malloc'd),
 * or NULL with `err` filled. */
static char *cat_buf(const icd_buf *file, icd_error *err)
{
    icd_error_clear(err);
    icd_file *f;
    if (icd_memfile_open(file->data, file->len, "mem.avro", &f, err)) return NULL;
    icd_avro_reader *r;
    if (icd_avro_reader_open_file(f, true, &r, err)) return NULL;
    icd_buf out = ICD_BUF_INIT;
    icd_arena a = ICD_ARENA_INIT;
    icd_avro_value v;
    bool eof = false;
    int rc;
    while (!(rc = icd_avro_reader_next(r, &a, &v, &eof, err)) && !eof) {
        if ((rc = icd_avro_value_json(&out, &v, err))) break;
        icd_buf_putc(&out, '\n');
        icd_arena_reset(&a);
    }
    icd_arena_free(&a);
    icd_avro_reader_free(r);
    if (rc) {
        icd_buf_free(&out);
        return NULL;
    }
    char *s = icd_buf_detach(&out);
    return s ? s : strdup("");
}

/* A one-block file of the given records (already encoded). */
static void one_block_file(icd_buf *f, const char *schema, const char *codec, int64_t count,
                           const icd_buf *data)
{
    icd_buf_clear(f);
    aw_header(f, schema, codec, NULL, 0);
    aw_block(f, codec, count, data->data, data->len);
}

static bool contains(const char *hay, const char *needle)
{
    return hay && strstr(hay, needle) != NULL;
}

/* ---- every type -------------------------------------------------------------------- */

static const char *ALL_TYPES_SCHEMA =
    "{\"type\":\"record\",\"name\":\"all\",\"namespace\":\"t.ns\",\"fields\":["
    "{\"name\":\"n\",\"type\":\"null\"},"
    "{\"name\":\"b\",\"type\":\"boolean\"},"
    "{\"name\":\"i\",\"type\":\"int\",\"field-id\":3},"
    "{\"name\":\"l\",\"type\":\"long\",\"field-id\":4},"
    "{\"name\":\"f\",\"type\":\"float\"},"
    "{\"name\":\"d\",\"type\":\"double\"},"
    "{\"name\":\"by\",\"type\":\"bytes\"},"
    "{\"name\":\"s\",\"type\":\"string\"},"
    "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"color\",\"symbols\":[\"RED\",\"GREEN\"]"
    "}},"
    "{\"name\":\"fx\",\"type\":{\"type\":\"fixed\",\"name\":\"f3\",\"size\":3}},"
    "{\"name\":\"arr\",\"type\":{\"type\":\"array\",\"items\":\"long\",\"element-id\":7}},"
    "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"string\",\"key-id\":8,\"value-id\":9}}"
    ","
    "{\"name\":\"u\",\"type\":[\"null\",\"string\",{\"type\":\"record\",\"name\":\"inner\","
    "\"fields\":[{\"name\":\"x\",\"type\":\"int\"}]}]},"
    "{\"name\":\"nu\",\"type\":{\"type\":\"array\",\"items\":[\"null\",\"long\"]}},"
    "{\"name\":\"dec\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":9,"
    "\"scale\":2}},"
    "{\"name\":\"decf\",\"type\":{\"type\":\"fixed\",\"name\":\"d16\",\"size\":16,"
    "\"logicalType\":\"decimal\",\"precision\":20,\"scale\":4}},"
    "{\"name\":\"us\",\"type\":{\"type\":\"string\",\"logicalType\":\"uuid\"}},"
    "{\"name\":\"uf\",\"type\":{\"type\":\"fixed\",\"name\":\"u16\",\"size\":16,"
    "\"logicalType\":\"uuid\"}},"
    "{\"name\":\"dt\",\"type\":{\"type\":\"int\",\"logicalType\":\"date\"}},"
    "{\"name\":\"tm\",\"type\":{\"type\":\"int\",\"logicalType\":\"time-millis\"}},"
    "{\"name\":\"tu\",\"type\":{\"type\":\"long\",\"logicalType\":\"time-micros\"}},"
    "{\"name\":\"tsm\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}},"
    "{\"name\":\"tsu\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-micros\"}},"
    "{\"name\":\"tsn\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-nanos\"}},"
    "{\"name\":\"ltu\",\"type\":{\"type\":\"long\",\"logicalType\":\"local-timestamp-micros\"}},"
    "{\"name\":\"ice\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-micros\","
    "\"adjust-to-utc\":false}},"
    "{\"name\":\"ref\",\"type\":[\"null\",\"inner\"]},"
    "{\"name\":\"ref2\",\"type\":\"t.ns.color\"}"
    "]}";

/* Encodes one record of ALL_TYPES_SCHEMA; `k` varies the values. */
static void encode_all_types(icd_buf *b, int k)
{
    /* n: null -> nothing */
    icd_buf_putc(b, 1);                  /* b */
    aw_long(b, -42 + k);                 /* i */
    aw_long(b, 1234567890123LL);         /* l */
    aw_float(b, 1.5f);                   /* f */
    aw_double(b, k ? -0.25 : 1.0 / 0.0); /* d */
    aw_bytes(b, "\x00\xff\x10", 3);      /* by */
    aw_str(b, "h\xc3\xa9\"llo");         /* s: UTF-8 é and a quote */
    aw_long(b, 1);                       /* e: GREEN */
    icd_buf_append(b, "abc", 3);         /* fx */
    /* arr: one block of 2 with a byte size (negative count), then one of 1 */
    icd_buf blk = ICD_BUF_INIT;
    aw_long(&blk, 10);
    aw_long(&blk, -3);
    aw_long(b, -2);
    aw_long(b, (int64_t)blk.len);
    icd_buf_append(b, blk.data, blk.len);
    icd_buf_free(&blk);
    aw_long(b, 1);
    aw_long(b, 7);
    aw_long(b, 0);
    /* m: {"a":"x"} as a negative-count block, then {"b":"y"} */
    icd_buf mb = ICD_BUF_INIT;
    aw_str(&mb, "a");
    aw_str(&mb, "x");
    aw_long(b, -1);
    aw_long(b, (int64_t)mb.len);
    icd_buf_append(b, mb.data, mb.len);
    icd_buf_free(&mb);
    aw_long(b, 1);
    aw_str(b, "b");
    aw_str(b, "y");
    aw_long(b, 0);
    /* u: branch 2 (inner record {x: 5}) or branch 0 (null) */
    if (k) {
        aw_long(b, 0);
    } else {
        aw_long(b, 2);
        aw_long(b, 5);
    }
    /* nu: [null, 3] */
    aw_long(b, 2);
    aw_long(b, 0);
    aw_long(b, 1);
    aw_long(b, 3);
    aw_long(b, 0);
    /* dec: 12345 unscaled = 0x3039 (or -5 = 0xfb) */
    if (k)
        aw_bytes(b, "\xfb", 1);
    else
        aw_bytes(b, "\x30\x39", 2);
    /* decf: -1234567 as 16-byte two's complement */
    static const uint8_t DF[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0xed, 0x29, 0x79};
    icd_buf_append(b, DF, 16);
    aw_str(b, "00010203-0405-0607-0809-0a0b0c0d0e0f"); /* us */
    for (int i = 0; i < 16; i++)                       /* uf */
        icd_buf_putc(b, (char)i);
    aw_long(b, k ? -1 : 19000);        /* dt */
    aw_long(b, 45296789);              /* tm 12:34:56.789 */
    aw_long(b, 45296789012LL);         /* tu 12:34:56.789012 */
    aw_long(b, -1);                    /* tsm */
    aw_long(b, 1700000000123456LL);    /* tsu */
    aw_long(b, 1700000000123456789LL); /* tsn */
    aw_long(b, 1700000000123456LL);    /* ltu */
    aw_long(b, 1700000000123456LL);    /* ice */
    aw_long(b, 1);                     /* ref: inner {x: -1} */
    aw_long(b, -1);
    aw_long(b, 0); /* ref2: RED */
}

static const char *ALL_TYPES_JSON0 =
    "{\"n\":null,\"b\":true,\"i\":-42,\"l\":1234567890123,\"f\":1.5,\"d\":\"Infinity\","
    "\"by\":\"AP8Q\",\"s\":\"h\xc3\xa9\\\"llo\",\"e\":\"GREEN\",\"fx\":\"YWJj\","
    "\"arr\":[10,-3,7],\"m\":[{\"key\":\"a\",\"value\":\"x\"},{\"key\":\"b\",\"value\":\"y\"}],"
    "\"u\":{\"x\":5},\"nu\":[null,3],\"dec\":\"123.45\",\"decf\":\"-123.4567\","
    "\"us\":\"00010203-0405-0607-0809-0a0b0c0d0e0f\","
    "\"uf\":\"00010203-0405-0607-0809-0a0b0c0d0e0f\",\"dt\":\"2022-01-08\","
    "\"tm\":\"12:34:56.789\",\"tu\":\"12:34:56.789012\","
    "\"tsm\":\"1969-12-31T23:59:59.999+00:00\",\"tsu\":\"2023-11-14T22:13:20.123456+00:00\","
    "\"tsn\":\"2023-11-14T22:13:20.123456789+00:00\",\"ltu\":\"2023-11-14T22:13:20.123456\","
    "\"ice\":\"2023-11-14T22:13:20.123456\",\"ref\":{\"x\":-1},\"ref2\":\"RED\"}\n";

static const char *ALL_TYPES_JSON1 =
    "{\"n\":null,\"b\":true,\"i\":-41,\"l\":1234567890123,\"f\":1.5,\"d\":-0.25,"
    "\"by\":\"AP8Q\",\"s\":\"h\xc3\xa9\\\"llo\",\"e\":\"GREEN\",\"fx\":\"YWJj\","
    "\"arr\":[10,-3,7],\"m\":[{\"key\":\"a\",\"value\":\"x\"},{\"key\":\"b\",\"value\":\"y\"}],"
    "\"u\":null,\"nu\":[null,3],\"dec\":\"-0.05\",\"decf\":\"-123.4567\","
    "\"us\":\"00010203-0405-0607-0809-0a0b0c0d0e0f\","
    "\"uf\":\"00010203-0405-0607-0809-0a0b0c0d0e0f\",\"dt\":\"1969-12-31\","
    "\"tm\":\"12:34:56.789\",\"tu\":\"12:34:56.789012\","
    "\"tsm\":\"1969-12-31T23:59:59.999+00:00\",\"tsu\":\"2023-11-14T22:13:20.123456+00:00\","
    "\"tsn\":\"2023-11-14T22:13:20.123456789+00:00\",\"ltu\":\"2023-11-14T22:13:20.123456\","
    "\"ice\":\"2023-11-14T22:13:20.123456\",\"ref\":{\"x\":-1},\"ref2\":\"RED\"}\n";

static void test_all_types_every_codec(void)
{
    static const char *CODECS[] = {NULL, "null", "deflate", "snappy", "zstandard"};
    icd_buf data = ICD_BUF_INIT, file = ICD_BUF_INIT;
    encode_all_types(&data, 0);
    encode_all_types(&data, 1);
    char expect[8192];
    snprintf(expect, sizeof expect, "%s%s", ALL_TYPES_JSON0, ALL_TYPES_JSON1);
    for (size_t c = 0; c < sizeof CODECS / sizeof CODECS[0]; c++) {
        one_block_file(&file, ALL_TYPES_SCHEMA, CODECS[c], 2, &data);
        icd_error err;
        char *got = cat_buf(&file, &err);
        if (!got) fprintf(stderr, "codec %s: %s\n", CODECS[c] ? CODECS[c] : "(none)", err.message);
        CHECK_EQ_STR(got, expect);
        free(got);
    }
    icd_buf_free(&data);
    icd_buf_free(&file);
}

/* Many blocks, every codec: record i of the file is {"id": i, "name": "row-i"}. */
static void test_multi_block(void)
{
    static const char *CODECS[] = {"null", "deflate", "snappy", "zstandard"};
    const char *schema = "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"id\","
                         "\"type\":\"long\"},{\"name\":\"name\",\"type\":\"string\"}]}";
    for (size_t c = 0; c < 4; c++) {
        icd_buf file = ICD_BUF_INIT, expect = ICD_BUF_INIT;
        aw_header(&file, schema, CODECS[c], NULL, 0);
        int id = 0;
        for (int blk = 0; blk < 7; blk++) {
            icd_buf data = ICD_BUF_INIT;
            int n = blk * 300; /* block 0 is empty: allowed */
            for (int i = 0; i < n; i++, id++) {
                char name[32];
                snprintf(name, sizeof name, "row-%d", id);
                aw_long(&data, id);
                aw_str(&data, name);
                icd_buf_printf(&expect, "{\"id\":%d,\"name\":\"%s\"}\n", id, name);
            }
            aw_block(&file, CODECS[c], n, data.data, data.len);
            icd_buf_free(&data);
        }
        icd_error err;
        char *got = cat_buf(&file, &err);
        CHECK_EQ_STR(got, expect.data);
        free(got);
        icd_buf_free(&file);
        icd_buf_free(&expect);
    }
}

/* ---- lookups, projection, skipping ------------------------------------------------- */

static void test_lookups(void)
{
    icd_buf data = ICD_BUF_INIT, file = ICD_BUF_INIT;
    encode_all_types(&data, 1);
    one_block_file(&file, ALL_TYPES_SCHEMA, "deflate", 1, &data);
    icd_error err;
    icd_error_clear(&err);
    icd_file *f;
    CHECK_EQ_INT(icd_memfile_open(file.data, file.len, "m", &f, &err), 0);
    icd_avro_reader *r;
    CHECK_EQ_INT(icd_avro_reader_open_file(f, true, &r, &err), 0);
    icd_arena a = ICD_ARENA_INIT;
    icd_avro_value v;
    bool eof;
    CHECK_EQ_INT(icd_avro_reader_next(r, &a, &v, &eof, &err), 0);
    CHECK(!eof);
    const icd_avro_value *x = icd_avro_value_field_by_id(&v, 3);
    CHECK(x && x->type == AVRO_INT && x->u.i64 == -41);
    x = icd_avro_value_field_by_id(&v, 4);
    CHECK(x && x->u.i64 == 1234567890123LL);
    CHECK(icd_avro_value_field_by_id(&v, 99) == NULL); /* absent from the schema */
    x = icd_avro_value_field(&v, "u");                 /* present, null */
    CHECK(x != NULL && icd_avro_value_is_null(x) && x->branch == 0);
    CHECK(icd_avro_value_field(&v, "nope") == NULL);
    x = icd_avro_value_field(&v, "ref");
    CHECK(x && x->type == AVRO_RECORD && x->branch == 1);
    CHECK(icd_avro_value_field(x, "x") && icd_avro_value_field(x, "x")->u.i64 == -1);
    x = icd_avro_value_field(&v, "arr");
    CHECK(x && x->type == AVRO_ARRAY && x->u.list.count == 3 && x->u.list.items[2].u.i64 == 7);
    CHECK(x && x->schema->element_id == 7);
    x = icd_avro_value_field(&v, "m");
    CHECK(x && x->schema->key_id == 8 && x->schema->value_id == 9 && x->u.map.count == 2);
    CHECK(icd_avro_reader_next(r, &a, &v, &eof, &err) == 0 && eof);
    const icd_avro_schema *s = icd_avro_reader_schema(r);
    CHECK_EQ_STR(s->name, "t.ns.all");
    CHECK_EQ_INT(icd_avro_schema_field_index_by_id(s, 4), 3);
    CHECK(s->fields[2].has_field_id && !s->fields[0].has_field_id);
    icd_arena_free(&a);
    icd_avro_reader_free(r);
    icd_buf_free(&data);
    icd_buf_free(&file);
}

/* Skipping lands exactly where decoding does, and projection leaves the rest skipped. */
static void test_skip_and_project(void)
{
    icd_buf data = ICD_BUF_INIT;
    encode_all_types(&data, 0);
    encode_all_types(&data, 1);
    icd_avro_schema_doc *doc;
    icd_error err;
    CHECK_EQ_INT(icd_avro_schema_parse(ALL_TYPES_SCHEMA, strlen(ALL_TYPES_SCHEMA), &doc, &err), 0);
    const icd_avro_schema *rec = doc->root;
    icd_avro_cursor c1, c2, c3;
    icd_avro_cursor_init(&c1, data.data, data.len);
    icd_avro_cursor_init(&c2, data.data, data.len);
    icd_avro_cursor_init(&c3, data.data, data.len);
    icd_arena a = ICD_ARENA_INIT;
    bool keep[64] = {false};
    keep[icd_avro_schema_field_index(rec, "s")] = true;
    for (int k = 0; k < 2; k++) {
        icd_avro_value v, p;
        CHECK_EQ_INT(icd_avro_decode(rec, &c1, &a, &v, &err), 0);
        CHECK_EQ_INT(icd_avro_skip(rec, &c2, &err), 0);
        icd_avro_projection pj = {rec, keep, NULL, NULL};
        CHECK_EQ_INT(icd_avro_decode_projected(rec, &pj, &c3, &a, &p, &err), 0);
        CHECK_EQ_INT(icd_avro_cursor_pos(&c1), icd_avro_cursor_pos(&c2));
        CHECK_EQ_INT(icd_avro_cursor_pos(&c1), icd_avro_cursor_pos(&c3));
        const icd_avro_value *s = icd_avro_value_field(&p, "s");
        CHECK(s && s->type == AVRO_STRING && s->u.bytes.len == 7);
        const icd_avro_value *i = icd_avro_value_field(&p, "i");
        CHECK(i && i->skipped);
    }
    CHECK_EQ_INT(icd_avro_cursor_left(&c1), 0);
    icd_arena_free(&a);
    icd_avro_schema_doc_free(doc);
    icd_buf_free(&data);
}

/* ---- schemas ----------------------------------------------------------------------- */

static int parse(const char *json, icd_avro_schema_doc **doc, icd_error *err)
{
    icd_error_clear(err);
    return icd_avro_schema_parse(json, strlen(json), doc, err);
}

/* A nested projection: the kept fields of a nested record are decoded, its others
 * skipped; a projection meant for one record does not apply to another (a union's record
 * branch of another schema is decoded whole); the cursor ends where a full decode does. */
static void test_nested_projection(void)
{
    static const char *SCHEMA =
        "{\"type\":\"record\",\"name\":\"entry\",\"fields\":["
        "{\"name\":\"status\",\"type\":\"int\"},"
        "{\"name\":\"df\",\"type\":{\"type\":\"record\",\"name\":\"df\",\"fields\":["
        "{\"name\":\"path\",\"type\":\"string\"},"
        "{\"name\":\"sizes\",\"type\":{\"type\":\"array\",\"items\":\"long\"}},"
        "{\"name\":\"count\",\"type\":\"long\"}]}},"
        "{\"name\":\"o\",\"type\":[\"null\",{\"type\":\"record\",\"name\":\"other\","
        "\"fields\":[{\"name\":\"path\",\"type\":\"string\"},{\"name\":\"n\",\"type\":"
        "\"long\"}]}]}]}";
    icd_avro_schema_doc *doc;
    icd_error err;
    CHECK_EQ_INT(icd_avro_schema_parse(SCHEMA, strlen(SCHEMA), &doc, &err), 0);
    const icd_avro_schema *rec = doc->root;
    const icd_avro_schema *df = rec->fields[1].type;
    icd_buf data = ICD_BUF_INIT;
    aw_long(&data, 1);    /* status */
    aw_str(&data, "a/b"); /* df.path */
    aw_long(&data, 3);    /* df.sizes: [10, 20, 30] */
    aw_long(&data, 10);
    aw_long(&data, 20);
    aw_long(&data, 30);
    aw_long(&data, 0);
    aw_long(&data, 7); /* df.count */
    aw_long(&data, 1); /* o: branch 1, other {"x", 9} */
    aw_str(&data, "x");
    aw_long(&data, 9);
    bool keep_df[3] = {true, false, true};
    icd_avro_projection dfp = {df, keep_df, NULL, NULL};
    const icd_avro_projection *nested[3] = {NULL, &dfp, &dfp}; /* &dfp on "o": not its record */
    icd_avro_projection top = {rec, NULL, nested, NULL};
    icd_avro_cursor c1, c2;
    icd_avro_cursor_init(&c1, data.data, data.len);
    icd_avro_cursor_init(&c2, data.data, data.len);
    icd_arena a = ICD_ARENA_INIT;
    icd_avro_value v, p;
    CHECK_EQ_INT(icd_avro_decode(rec, &c1, &a, &v, &err), 0);
    CHECK_EQ_INT(icd_avro_decode_projected(rec, &top, &c2, &a, &p, &err), 0);
    CHECK_EQ_INT(icd_avro_cursor_pos(&c1), icd_avro_cursor_pos(&c2));
    CHECK_EQ_INT(icd_avro_cursor_left(&c2), 0);
    const icd_avro_value *st = icd_avro_value_field(&p, "status");
    CHECK(st && !st->skipped && st->u.i64 == 1);
    const icd_avro_value *pdf = icd_avro_value_field(&p, "df");
    CHECK(pdf && pdf->type == AVRO_RECORD);
    const icd_avro_value *path = icd_avro_value_field(pdf, "path");
    CHECK(path && path->type == AVRO_STRING && path->u.bytes.len == 3);
    const icd_avro_value *sizes = icd_avro_value_field(pdf, "sizes");
    CHECK(sizes && sizes->skipped && sizes->type == AVRO_NULL);
    const icd_avro_value *count = icd_avro_value_field(pdf, "count");
    CHECK(count && !count->skipped && count->u.i64 == 7);
    const icd_avro_value *o = icd_avro_value_field(&p, "o");
    CHECK(o && o->type == AVRO_RECORD && o->branch == 1);
    const icd_avro_value *n = icd_avro_value_field(o, "n");
    CHECK(n && !n->skipped && n->u.i64 == 9);
    const icd_avro_value *fsizes = icd_avro_value_field(icd_avro_value_field(&v, "df"), "sizes");
    CHECK(fsizes && fsizes->type == AVRO_ARRAY && fsizes->u.list.count == 3);
    /* a damaged skipped field is still an error: the array's count runs past the end */
    icd_avro_cursor c3;
    icd_avro_cursor_init(&c3, data.data, 8);
    CHECK(icd_avro_decode_projected(rec, &top, &c3, &a, &p, &err) != 0);
    icd_arena_free(&a);
    icd_buf_free(&data);
    icd_avro_schema_doc_free(doc);
}

/* Two decoded trees are the same (values, schemas, branches, skipped marks). */
static bool same_tree(const icd_avro_value *a, const icd_avro_value *b)
{
    if ((a->schema == NULL) != (b->schema == NULL) ||
        (a->schema && a->schema->type != b->schema->type) || a->type != b->type ||
        a->branch != b->branch || a->skipped != b->skipped)
        return false;
    switch (a->type) {
    case AVRO_NULL:
        return true;
    case AVRO_BOOLEAN:
        return a->u.boolean == b->u.boolean;
    case AVRO_INT:
    case AVRO_LONG:
    case AVRO_ENUM:
        return a->u.i64 == b->u.i64;
    case AVRO_FLOAT:
        return !memcmp(&a->u.f32, &b->u.f32, 4);
    case AVRO_DOUBLE:
        return !memcmp(&a->u.f64, &b->u.f64, 8);
    case AVRO_BYTES:
    case AVRO_STRING:
    case AVRO_FIXED:
        return a->u.bytes.ptr == b->u.bytes.ptr && a->u.bytes.len == b->u.bytes.len;
    case AVRO_RECORD:
    case AVRO_ARRAY:
        if (a->u.list.count != b->u.list.count) return false;
        for (size_t i = 0; i < a->u.list.count; i++)
            if (!same_tree(&a->u.list.items[i], &b->u.list.items[i])) return false;
        return true;
    case AVRO_MAP:
        if (a->u.map.count != b->u.map.count) return false;
        for (size_t i = 0; i < a->u.map.count; i++)
            if (a->u.map.keys[i].ptr != b->u.map.keys[i].ptr ||
                !same_tree(&a->u.map.values[i], &b->u.map.values[i]))
                return false;
        return true;
    default:
        return false;
    }
}

/* Takes away the flat-value skip steps of every node (the decoder then walks values one
 * by one, the reference the quick paths are held to). */
static void unflatten(icd_avro_schema *s, int depth)
{
    if (depth > 32) return;
    s->nskip_ops = -1;
    for (size_t i = 0; i < s->nfields; i++)
        unflatten(s->fields[i].type, depth + 1);
    for (size_t i = 0; i < s->nbranches; i++)
        unflatten(s->branches[i], depth + 1);
    if (s->items) unflatten(s->items, depth + 1);
}

/* A compiled projection (icd_avro_plan) decodes what the schema walk decodes: the same
 * tree, the same end position, and on every truncation and on damaged bytes the same
 * error (message and offset) -- its quick skips of flat arrays give up to the careful
 * path, never to a different answer. */
static void test_plan_matches_walk(void)
{
    static const char *SCHEMA =
        "{\"type\":\"record\",\"name\":\"entry\",\"fields\":["
        "{\"name\":\"status\",\"type\":\"int\"},"
        "{\"name\":\"snap\",\"type\":[\"null\",\"long\"]},"
        "{\"name\":\"df\",\"type\":{\"type\":\"record\",\"name\":\"df\",\"fields\":["
        "{\"name\":\"content\",\"type\":\"int\"},"
        "{\"name\":\"path\",\"type\":\"string\"},"
        "{\"name\":\"fmt\",\"type\":{\"type\":\"enum\",\"name\":\"f\",\"symbols\":[\"A\",\"B\"]}},"
        "{\"name\":\"part\",\"type\":{\"type\":\"record\",\"name\":\"p\",\"fields\":["
        "{\"name\":\"r\",\"type\":[\"null\",\"string\"]},{\"name\":\"d\",\"type\":\"int\"}]}},"
        "{\"name\":\"count\",\"type\":\"long\"},"
        "{\"name\":\"sizes\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":"
        "\"record\",\"name\":\"kv\",\"fields\":[{\"name\":\"key\",\"type\":\"int\"},"
        "{\"name\":\"value\",\"type\":\"long\"}]}}]},"
        "{\"name\":\"lows\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":"
        "\"record\",\"name\":\"kb\",\"fields\":[{\"name\":\"key\",\"type\":\"int\"},"
        "{\"name\":\"value\",\"type\":\"bytes\"}]}}]},"
        "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"double\"}},"
        "{\"name\":\"fl\",\"type\":[\"null\",\"float\",\"boolean\"]},"
        "{\"name\":\"offs\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"long\"}]},"
        "{\"name\":\"eq\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"int\"}]},"
        "{\"name\":\"so\",\"type\":[\"null\",\"int\"]},"
        "{\"name\":\"ref\",\"type\":[\"null\",\"string\"]}]}}]}";
    icd_avro_schema_doc *doc, *ref;
    icd_error err;
    CHECK_EQ_INT(icd_avro_schema_parse(SCHEMA, strlen(SCHEMA), &doc, &err), 0);
    CHECK_EQ_INT(icd_avro_schema_parse(SCHEMA, strlen(SCHEMA), &ref, &err), 0);
    if (!doc || !ref) return;
    unflatten(ref->root, 0);
    const icd_avro_schema *rec = doc->root, *rrec = ref->root;
    const icd_avro_schema *df = rec->fields[2].type, *rdf = rrec->fields[2].type;
    icd_buf data = ICD_BUF_INIT;
    for (int k = 0; k < 3; k++) {
        aw_long(&data, k);              /* status */
        aw_long(&data, k == 1 ? 0 : 1); /* snap: null or a long */
        if (k != 1) aw_long(&data, 7000000000000000001LL + k);
        aw_long(&data, 0); /* content */
        aw_str(&data, k == 2 ? "s3://bucket/a/long/path/that/takes/a/two/byte/length/prefix/"
                               "data-00000-of-00001.parquet"
                             : "a/b.parquet");
        aw_long(&data, 1); /* fmt: B */
        aw_long(&data, 1); /* part.r */
        aw_str(&data, "r1");
        aw_long(&data, -3);     /* part.d */
        aw_long(&data, 100000); /* count */
        aw_long(&data, 1);      /* sizes: 3 pairs, then (k == 2) a sized block */
        aw_long(&data, 3);
        for (int c = 1; c <= 3; c++) {
            aw_long(&data, c);
            aw_long(&data, c == 2 ? -1 : 1000000 + c);
        }
        if (k == 2) {
            aw_long(&data, -1);
            aw_long(&data, 2);
            aw_long(&data, 4);
            aw_long(&data, 5);
        }
        aw_long(&data, 0);
        aw_long(&data, k == 1 ? 0 : 1); /* lows */
        if (k != 1) {
            aw_long(&data, 2);
            aw_long(&data, 1);
            aw_bytes(&data, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
            aw_long(&data, 2);
            aw_str(&data, "r1");
            aw_long(&data, 0);
        }
        aw_long(&data, 1); /* m: {"x": 1.5} */
        aw_str(&data, "x");
        icd_buf_append(&data, "\0\0\0\0\0\0\xf8\x3f", 8);
        aw_long(&data, 0);
        aw_long(&data, 2); /* fl: boolean true */
        icd_buf_putc(&data, 1);
        aw_long(&data, 1); /* offs: [4] */
        aw_long(&data, 1);
        aw_long(&data, 4);
        aw_long(&data, 0);
        aw_long(&data, k == 0 ? 1 : 0); /* eq: [1, 2] */
        if (k == 0) {
            aw_long(&data, 2);
            aw_long(&data, 1);
            aw_long(&data, 2);
            aw_long(&data, 0);
        }
        aw_long(&data, 1); /* so: 0 */
        aw_long(&data, 0);
        aw_long(&data, 0); /* ref: null */
    }
    /* projections: manifest-like (maps, offsets, the float left out), and everything */
    bool keep_df[14] = {true,  true,  true,  true, true, false, false,
                        false, false, false, true, true, true};
    for (int variant = 0; variant < 2; variant++) {
        icd_avro_projection dfp = {df, variant ? NULL : keep_df, NULL, NULL};
        const icd_avro_projection *nested[3] = {NULL, NULL, &dfp};
        icd_avro_projection fast = {rec, NULL, nested, NULL};
        icd_avro_plan *plan = NULL;
        CHECK_EQ_INT(icd_avro_plan_compile(&fast, &plan, &err), 0);
        fast.plan = plan;
        /* the reference: the walk over the schema without flat skip steps */
        icd_avro_projection rdfp = {rdf, variant ? NULL : keep_df, NULL, NULL};
        const icd_avro_projection *rnested[3] = {NULL, NULL, &rdfp};
        icd_avro_projection walk = {rrec, NULL, rnested, NULL};
        icd_arena a = ICD_ARENA_INIT;
        /* whole, every prefix, and with each byte damaged */
        for (size_t cut = 0; cut <= data.len + data.len; cut++) {
            icd_buf bytes = ICD_BUF_INIT;
            icd_buf_append(&bytes, data.data, data.len);
            size_t n = cut <= data.len ? cut : data.len;
            if (cut > data.len) ((uint8_t *)bytes.data)[cut - data.len - 1] ^= 0xc1;
            icd_avro_cursor c1, c2;
            icd_avro_cursor_init(&c1, bytes.data, n);
            icd_avro_cursor_init(&c2, bytes.data, n);
            for (int k = 0; k < 3; k++) {
                icd_avro_value v1, v2;
                icd_error e1, e2;
                icd_error_clear(&e1);
                icd_error_clear(&e2);
                int r1 = icd_avro_decode_projected(rrec, &walk, &c1, &a, &v1, &e1);
                int r2 = icd_avro_decode_projected(rec, &fast, &c2, &a, &v2, &e2);
                CHECK_EQ_INT(r1, r2);
                CHECK_EQ_INT(e1.offset, e2.offset);
                CHECK_EQ_STR(e1.message, e2.message);
                CHECK_EQ_INT(icd_avro_cursor_pos(&c1), icd_avro_cursor_pos(&c2));
                if (r1 || r2) break;
                CHECK(same_tree(&v1, &v2));
            }
            if (cut == data.len) CHECK_EQ_INT(icd_avro_cursor_left(&c2), 0);
            icd_buf_free(&bytes);
            icd_arena_reset(&a);
        }
        icd_arena_free(&a);
        icd_avro_plan_free(plan);
    }
    icd_buf_free(&data);
    icd_avro_schema_doc_free(doc);
    icd_avro_schema_doc_free(ref);
}

static void test_schema_names_and_recursion(void)
{
    icd_avro_schema_doc *doc;
    icd_error err;
    /* a linked list: a record that refers to itself, by short name and by fullname */
    const char *list = "{\"type\":\"record\",\"name\":\"node\",\"namespace\":\"a.b\",\"fields\":["
                       "{\"name\":\"v\",\"type\":\"int\"},"
                       "{\"name\":\"next\",\"type\":[\"null\",\"node\"]},"
                       "{\"name\":\"alt\",\"type\":[\"null\",\"a.b.node\"]}]}";
    CHECK_EQ_INT(parse(list, &doc, &err), 0);
    if (doc) {
        CHECK(doc->root->fields[1].type->branches[1] == doc->root);
        CHECK(doc->root->fields[2].type->branches[1] == doc->root);
        CHECK_EQ_INT(doc->root->min_size, 3);
        /* 3 nodes: 1 -> 2 -> 3 -> null */
        icd_buf d = ICD_BUF_INIT;
        for (int i = 1; i <= 3; i++) {
            aw_long(&d, i);
            aw_long(&d, i < 3 ? 1 : 0);
        }
        aw_long(&d, 0); /* alt of node 3 */
        aw_long(&d, 0); /* alt of node 2 */
        aw_long(&d, 0); /* alt of node 1 */
        icd_avro_cursor c;
        icd_avro_cursor_init(&c, d.data, d.len);
        icd_arena a = ICD_ARENA_INIT;
        icd_avro_value v;
        CHECK_EQ_INT(icd_avro_decode(doc->root, &c, &a, &v, &err), 0);
        icd_buf j = ICD_BUF_INIT;
        CHECK_EQ_INT(icd_avro_value_json(&j, &v, &err), 0);
        CHECK_EQ_STR(j.data, "{\"v\":1,\"next\":{\"v\":2,\"next\":{\"v\":3,\"next\":null,"
                             "\"alt\":null},\"alt\":null},\"alt\":null}");
        icd_buf_free(&j);
        icd_buf_free(&d);
        icd_arena_free(&a);
        icd_avro_schema_doc_free(doc);
    }
    /* namespaces: inner names inherit the enclosing namespace; an explicit one wins */
    const char *ns = "{\"type\":\"record\",\"name\":\"r\",\"namespace\":\"x\",\"fields\":["
                     "{\"name\":\"a\",\"type\":{\"type\":\"fixed\",\"name\":\"f\",\"size\":2}},"
                     "{\"name\":\"b\",\"type\":{\"type\":\"enum\",\"name\":\"e\","
                     "\"namespace\":\"y\",\"symbols\":[\"A\"]}},"
                     "{\"name\":\"c\",\"type\":\"f\"},{\"name\":\"d\",\"type\":\"y.e\"},"
                     "{\"name\":\"g\",\"type\":\"x.f\"}]}";
    CHECK_EQ_INT(parse(ns, &doc, &err), 0);
    if (doc) {
        CHECK_EQ_STR(doc->root->fields[0].type->name, "x.f");
        CHECK_EQ_STR(doc->root->fields[1].type->name, "y.e");
        CHECK(doc->root->fields[2].type == doc->root->fields[0].type);
        CHECK(doc->root->fields[3].type == doc->root->fields[1].type);
        CHECK(doc->root->fields[4].type == doc->root->fields[0].type);
        CHECK_EQ_INT(doc->root->fixed_width, -1); /* the enums are varints */
        CHECK_EQ_INT(doc->root->min_size, 2 + 1 + 2 + 1 + 2);
        icd_avro_schema_doc_free(doc);
    }
    /* a bare primitive schema and a logical type left as its base type */
    CHECK_EQ_INT(parse("\"long\"", &doc, &err), 0);
    CHECK(doc && doc->root->type == AVRO_LONG);
    icd_avro_schema_doc_free(doc);
    CHECK_EQ_INT(parse("{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":2,"
                       "\"scale\":5}",
                       &doc, &err),
                 0);
    CHECK(doc && doc->root->logical == AVRO_LT_NONE); /* scale > precision: ignored */
    icd_avro_schema_doc_free(doc);
}

static void test_schema_errors(void)
{
    static const struct {
        const char *json, *msg;
    } BAD[] = {
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"nope\"}]}",
         "unknown type 'nope'"},
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"},"
         "{\"name\":\"a\",\"type\":\"long\"}]}",
         "field 'a' appears twice"},
        {"{\"type\":\"record\",\"name\":\"r\"}", "no \"fields\""},
        {"[\"int\",[\"null\",\"long\"]]", "union directly contains another union"},
        {"[\"int\",\"int\"]", "holds the type 'int' twice"},
        {"{\"type\":\"enum\",\"name\":\"e\",\"symbols\":[\"A\",\"A\"]}",
         "symbol 'A' appears twice"},
        {"{\"type\":\"fixed\",\"name\":\"f\"}", "no integer \"size\""},
        {"{\"type\":\"array\"}", "no \"items\""},
        {"{\"type\":\"record\",\"name\":\"1bad\",\"fields\":[]}", "invalid type name"},
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":"
         "{\"type\":\"fixed\",\"name\":\"r\",\"size\":1}}]}",
         "defined twice"},
        {"{\"type\":\"record\",\"name\":\"int\",\"fields\":[]}", "redefines a primitive"},
        {"{\"type\":", "not valid JSON"},
        {"42", "must be a string, object or array"},
        {"[]", "no branches"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        icd_avro_schema_doc *doc = NULL;
        icd_error err;
        int rc = parse(BAD[i].json, &doc, &err);
        CHECK(rc == ICD_ECORRUPT);
        CHECK(doc == NULL);
        if (!contains(err.message, BAD[i].msg))
            fprintf(stderr, "schema %zu: message '%s' lacks '%s'\n", i, err.message, BAD[i].msg);
        CHECK(contains(err.message, BAD[i].msg));
    }
    /* nesting limit */
    icd_buf deep = ICD_BUF_INIT;
    for (int i = 0; i < 200; i++)
        icd_buf_puts(&deep, "{\"type\":\"array\",\"items\":");
    icd_buf_puts(&deep, "\"int\"");
    for (int i = 0; i < 200; i++)
        icd_buf_putc(&deep, '}');
    icd_avro_schema_doc *doc = NULL;
    icd_error err;
    CHECK_EQ_INT(parse(deep.data, &doc, &err), ICD_EUNSUPPORTED);
    CHECK(contains(err.message, "deeper than"));
    icd_buf_free(&deep);
}

/* ---- corrupt files ----------------------------------------------------------------- */

static const char *SIMPLE = "{\"type\":\"record\",\"name\":\"r\",\"fields\":["
                            "{\"name\":\"u\",\"type\":[\"null\",\"long\"]},"
                            "{\"name\":\"s\",\"type\":\"string\"}]}";

static void simple_file(icd_buf *f, const char *codec)
{
    icd_buf d = ICD_BUF_INIT;
    aw_long(&d, 1);
    aw_long(&d, 7);
    aw_str(&d, "abc");
    one_block_file(f, SIMPLE, codec, 1, &d);
    icd_buf_free(&d);
}

/* Expects reading `file` to fail with `code` and a message containing `msg`. */
static void expect_fail(const icd_buf *file, int code, const char *msg)
{
    icd_error err;
    char *got = cat_buf(file, &err);
    CHECK(got == NULL);
    free(got);
    CHECK_EQ_INT(err.code, code);
    if (!contains(err.message, msg)) fprintf(stderr, "message '%s' lacks '%s'\n", err.message, msg);
    CHECK(contains(err.message, msg));
    CHECK_EQ_STR(err.file, "mem.avro");
}

static void test_corrupt(void)
{
    icd_buf f = ICD_BUF_INIT;
    icd_error err;
    simple_file(&f, NULL);
    char *ok = cat_buf(&f, &err);
    CHECK_EQ_STR(ok, "{\"u\":7,\"s\":\"abc\"}\n");
    free(ok);

    /* bad magic */
    f.data[3] = 2;
    expect_fail(&f, ICD_ECORRUPT, "bad magic");

    /* sync mismatch after the block */
    simple_file(&f, NULL);
    f.data[f.len - 1] ^= 1;
    expect_fail(&f, ICD_ECORRUPT, "sync marker");

    /* truncated block: drop the last 10 bytes */
    simple_file(&f, NULL);
    f.len -= 10;
    expect_fail(&f, ICD_ECORRUPT, "truncated");

    /* truncated header */
    simple_file(&f, NULL);
    f.len = 30;
    expect_fail(&f, ICD_ECORRUPT, "truncated");

    /* a block claiming more objects than its bytes can hold */
    icd_buf d = ICD_BUF_INIT;
    aw_long(&d, 0);
    aw_str(&d, "x");
    one_block_file(&f, SIMPLE, NULL, 1000, &d);
    expect_fail(&f, ICD_ECORRUPT, "claims 1000 objects");
    /* ... and a count beyond int64's useful range */
    icd_buf_clear(&f);
    aw_header(&f, SIMPLE, NULL, NULL, 0);
    aw_long(&f, INT64_MAX);
    aw_long(&f, (int64_t)d.len);
    icd_buf_append(&f, d.data, d.len);
    icd_buf_append(&f, AW_SYNC, 16);
    expect_fail(&f, ICD_ECORRUPT, "objects");

    /* more bytes in the block than its objects use */
    icd_buf_putc(&d, 0);
    one_block_file(&f, SIMPLE, NULL, 1, &d);
    expect_fail(&f, ICD_ECORRUPT, "1 bytes after its 1 objects");

    /* bad union index */
    icd_buf_clear(&d);
    aw_long(&d, 5);
    aw_long(&d, 1);
    aw_str(&d, "x");
    one_block_file(&f, SIMPLE, NULL, 1, &d);
    expect_fail(&f, ICD_ECORRUPT, "union branch index 5");

    /* varint overflow: 11 continuation bytes */
    icd_buf_clear(&d);
    aw_long(&d, 1);
    for (int i = 0; i < 10; i++)
        icd_buf_putc(&d, (char)0xff);
    icd_buf_putc(&d, 1);
    aw_str(&d, "x");
    one_block_file(&f, SIMPLE, NULL, 1, &d);
    expect_fail(&f, ICD_ECORRUPT, "varint overflows");

    /* string longer than the block */
    icd_buf_clear(&d);
    aw_long(&d, 0);
    aw_long(&d, 100);
    icd_buf_append(&d, "abc", 3);
    one_block_file(&f, SIMPLE, NULL, 1, &d);
    expect_fail(&f, ICD_ECORRUPT, "string of 100 bytes");

    /* unsupported codecs name themselves */
    simple_file(&f, "bzip2");
    expect_fail(&f, ICD_EUNSUPPORTED, "codec 'bzip2' is not supported");
    simple_file(&f, "xz");
    expect_fail(&f, ICD_EUNSUPPORTED, "'xz'");

    /* snappy CRC mismatch: flip a CRC bit */
    simple_file(&f, "snappy");
    f.data[f.len - 17] ^= 0x40;
    expect_fail(&f, ICD_ECORRUPT, "CRC mismatch");

    /* deflate garbage */
    icd_buf_clear(&f);
    aw_header(&f, SIMPLE, "deflate", NULL, 0);
    aw_long(&f, 1);
    aw_long(&f, 4);
    icd_buf_append(&f, "\xff\xff\xff\xff", 4);
    icd_buf_append(&f, AW_SYNC, 16);
    expect_fail(&f, ICD_ECORRUPT, "deflate");

    /* zstd: a truncated frame */
    simple_file(&f, "zstandard");
    {
        icd_buf g = ICD_BUF_INIT;
        aw_header(&g, SIMPLE, "zstandard", NULL, 0);
        icd_buf c = ICD_BUF_INIT;
        icd_buf raw = ICD_BUF_INIT;
        aw_long(&raw, 1);
        aw_long(&raw, 7);
        aw_str(&raw, "abc");
        aw_compress(&c, "zstandard", raw.data, raw.len);
        aw_long(&g, 1);
        aw_long(&g, (int64_t)c.len - 3);
        icd_buf_append(&g, c.data, c.len - 3);
        icd_buf_append(&g, AW_SYNC, 16);
        expect_fail(&g, ICD_ECORRUPT, "zstandard block");
        icd_buf_free(&g);
        icd_buf_free(&c);
        icd_buf_free(&raw);
    }

    /* enum index out of range, boolean byte not 0/1 */
    const char *es = "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"e\",\"type\":"
                     "{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\"]}},"
                     "{\"name\":\"b\",\"type\":\"boolean\"}]}";
    icd_buf_clear(&d);
    aw_long(&d, 3);
    icd_buf_putc(&d, 1);
    one_block_file(&f, es, NULL, 1, &d);
    expect_fail(&f, ICD_ECORRUPT, "enum index 3");
    icd_buf_clear(&d);
    aw_long(&d, 0);
    icd_buf_putc(&d, 2);
    one_block_file(&f, es, NULL, 1, &d);
    expect_fail(&f, ICD_ECORRUPT, "boolean byte is 2");

    /* int out of 32-bit range */
    icd_buf_clear(&d);
    aw_long(&d, (int64_t)1 << 40);
    one_block_file(&f, "\"int\"", NULL, 1, &d);
    expect_fail(&f, ICD_ECORRUPT, "out of the 32-bit range");

    /* array claiming more items than bytes */
    icd_buf_clear(&d);
    aw_long(&d, 1000000);
    aw_long(&d, 1);
    one_block_file(&f, "{\"type\":\"array\",\"items\":\"long\"}", NULL, 1, &d);
    expect_fail(&f, ICD_ECORRUPT, "claims 1000000 items");

    /* arrays of nulls: a few bytes may not claim billions of items */
    icd_buf_clear(&d);
    aw_long(&d, (int64_t)1 << 40);
    aw_long(&d, 0);
    one_block_file(&f, "{\"type\":\"array\",\"items\":\"null\"}", NULL, 1, &d);
    expect_fail(&f, ICD_ECORRUPT, "take no bytes");

    /* objects that take no bytes: a few are fine, but not millions per file */
    icd_buf_clear(&d);
    one_block_file(&f, "\"null\"", NULL, 3, &d);
    char *nulls = cat_buf(&f, &err);
    CHECK_EQ_STR(nulls, "null\nnull\nnull\n");
    free(nulls);
    icd_buf_clear(&f);
    aw_header(&f, "\"null\"", NULL, NULL, 0);
    aw_block(&f, NULL, 3000000, "", 0);
    aw_block(&f, NULL, 3000000, "", 0);
    expect_fail(&f, ICD_ECORRUPT, "claims 3000000 objects");

    /* a negative block size inside an array */
    icd_buf_clear(&d);
    aw_long(&d, -1);
    aw_long(&d, 100);
    aw_long(&d, 5);
    aw_long(&d, 0);
    one_block_file(&f, "{\"type\":\"array\",\"items\":\"long\"}", NULL, 1, &d);
    expect_fail(&f, ICD_ECORRUPT, "claims 100 bytes");

    /* no schema in the header */
    icd_buf_clear(&f);
    icd_buf_append(&f, "Obj\x01", 4);
    aw_long(&f, 1);
    aw_str(&f, "avro.codec");
    aw_str(&f, "null");
    aw_long(&f, 0);
    icd_buf_append(&f, AW_SYNC, 16);
    expect_fail(&f, ICD_ECORRUPT, "no avro.schema");

    /* an invalid schema in the header names the file */
    icd_buf_clear(&d);
    one_block_file(&f, "{\"type\":\"wat\"}", NULL, 0, &d);
    expect_fail(&f, ICD_ECORRUPT, "unknown type 'wat'");

    icd_buf_free(&d);
    icd_buf_free(&f);
}

/* Recursion in the data is bounded even when the schema allows any depth. */
static void test_depth_limit(void)
{
    const char *schema = "{\"type\":\"record\",\"name\":\"n\",\"fields\":["
                         "{\"name\":\"next\",\"type\":[\"null\",\"n\"]}]}";
    icd_buf d = ICD_BUF_INIT, f = ICD_BUF_INIT;
    for (int i = 0; i < 1000; i++)
        aw_long(&d, 1);
    aw_long(&d, 0);
    one_block_file(&f, schema, NULL, 1, &d);
    expect_fail(&f, ICD_EUNSUPPORTED, "deeper than");
    icd_buf_free(&d);
    icd_buf_free(&f);
}

/* Header metadata: every key is kept, and the reader reports the codec and sync. */
static void test_metadata(void)
{
    static const char *const KV[] = {"format-version", "2", "partition-spec",
                                     "[{\"name\":\"x\",\"field-id\":1000}]"};
    icd_buf f = ICD_BUF_INIT;
    aw_header(&f, "\"string\"", "deflate", KV, 2);
    icd_error err;
    icd_file *file;
    CHECK_EQ_INT(icd_memfile_open(f.data, f.len, "m", &file, &err), 0);
    icd_avro_reader *r;
    CHECK_EQ_INT(icd_avro_reader_open_file(file, true, &r, &err), 0);
    CHECK_EQ_INT(icd_avro_reader_meta_count(r), 4);
    CHECK_EQ_STR(icd_avro_reader_meta(r, "format-version")->value, "2");
    CHECK(icd_avro_reader_meta(r, "nope") == NULL);
    CHECK_EQ_INT(icd_avro_reader_codec(r), AVRO_CODEC_DEFLATE);
    CHECK(memcmp(icd_avro_reader_sync(r), AW_SYNC, 16) == 0);
    CHECK_EQ_INT(icd_avro_reader_header_size(r), f.len);
    bool eof = false;
    CHECK_EQ_INT(icd_avro_reader_skip(r, &eof, &err), 0);
    CHECK(eof); /* no blocks at all */
    icd_avro_reader_free(r);
    icd_buf_free(&f);
}

/* The inline long reader (a word at a time when ten bytes are left) gives what the full
 * reader gives -- value, end, or failure -- for varints of every length, well-formed or
 * not (random bytes, and runs of k continuation bytes then an end byte). */
static void test_long_quick_matches_full(void)
{
    uint64_t x = 88172645463325252ull; /* (xorshift64) */
    uint8_t buf[16];
    int mismatches = 0;
    for (int it = 0; it < 200000; it++) {
        size_t len = 10 + (size_t)(it % 7);
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            buf[i] = (uint8_t)x;
        }
        int k = it % 12; /* (0: as drawn) */
        if (k >= 1 && k <= 10) {
            for (int i = 0; i < k - 1; i++)
                buf[i] |= 0x80;
            buf[k - 1] &= 0x7f;
            if (k == 10 && (x >> 20) % 2) buf[9] &= 1;
        }
        icd_avro_cursor a, b;
        icd_avro_cursor_init(&a, buf, len);
        icd_avro_cursor_init(&b, buf, len);
        icd_error e1, e2;
        int64_t v1 = 0, v2 = 0;
        int r1 = icd_avro_read_long_q(&a, &v1, &e1), r2 = icd_avro_read_long(&b, &v2, &e2);
        if (r1 != r2 || (r1 == 0 && (v1 != v2 || a.p != b.p))) mismatches++;
    }
    CHECK_EQ_INT(mismatches, 0);
}

TEST_MAIN(TEST(test_all_types_every_codec), TEST(test_multi_block), TEST(test_lookups),
          TEST(test_skip_and_project), TEST(test_nested_projection), TEST(test_plan_matches_walk),
          TEST(test_schema_names_and_recursion), TEST(test_schema_errors), TEST(test_corrupt),
          TEST(test_depth_limit), TEST(test_metadata), TEST(test_long_quick_matches_full))
