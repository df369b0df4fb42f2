/*
 * The Iceberg layer of the Parquet writer (iceberg/pq_write.h): the type mapping of every
 * Iceberg primitive, the mirroring of legacy forms the corpus does not have (INT96
 * timestamps, TIMESTAMP_MILLIS, 2-level lists, decimals on BYTE_ARRAY, un-annotated
 * strings), a promoted column taking the read type, and the row sink's conversions
 * (values read back with our Parquet reader, physical values checked exactly), plus the
 * sink's refusals (a null in a REQUIRED field, a variant).
 */
#include <stdlib.h>

#include "base/arena.h"
#include "base/buf.h"
#include "formats/parquet/parquet.h"
#include "formats/parquet/writer.h"
#include "iceberg/pq_write.h"
#include "iceberg/schema.h"
#include "io/memfile.h"
#include "test.h"

static int buf_write(void *ctx, const void *p, size_t n, icd_error *err)
{
    icd_buf_append(ctx, p, n);
    return icd_buf_ok(ctx) ? 0 : icd_fail_nomem(err);
}

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"b\",\"required\":true,\"type\":\"boolean\"},"
    "{\"id\":2,\"name\":\"i\",\"required\":false,\"type\":\"int\"},"
    "{\"id\":3,\"name\":\"l\",\"required\":false,\"type\":\"long\"},"
    "{\"id\":4,\"name\":\"f\",\"required\":false,\"type\":\"float\"},"
    "{\"id\":5,\"name\":\"d\",\"required\":false,\"type\":\"double\"},"
    "{\"id\":6,\"name\":\"d9\",\"required\":false,\"type\":\"decimal(9,2)\"},"
    "{\"id\":7,\"name\":\"d18\",\"required\":false,\"type\":\"decimal(18,3)\"},"
    "{\"id\":8,\"name\":\"d38\",\"required\":false,\"type\":\"decimal(38,2)\"},"
    "{\"id\":9,\"name\":\"dt\",\"required\":false,\"type\":\"date\"},"
    "{\"id\":10,\"name\":\"tm\",\"required\":false,\"type\":\"time\"},"
    "{\"id\":11,\"name\":\"ts\",\"required\":false,\"type\":\"timestamp\"},"
    "{\"id\":12,\"name\":\"tstz\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":13,\"name\":\"tsns\",\"required\":false,\"type\":\"timestamp_ns\"},"
    "{\"id\":14,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":15,\"name\":\"u\",\"required\":false,\"type\":\"uuid\"},"
    "{\"id\":16,\"name\":\"fx\",\"required\":false,\"type\":\"fixed[4]\"},"
    "{\"id\":17,\"name\":\"bin\",\"required\":false,\"type\":\"binary\"},"
    "{\"id\":18,\"name\":\"lst\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":19,"
    "\"element\":\"int\",\"element-required\":false}},"
    "{\"id\":20,\"name\":\"m\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":21,"
    "\"key\":\"string\",\"value-id\":22,\"value\":\"long\",\"value-required\":false}},"
    "{\"id\":23,\"name\":\"st\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":24,\"name\":\"x\",\"required\":true,\"type\":\"int\"}]}}"
    "]}";

/* Emits one row through the sink the way the reader does. `k` picks the values. */
static int emit_row(const ice_row_sink *s, int k, icd_error *err)
{
    void *c = s->ctx;
    static const uint8_t uuid[16] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
                                     1,    2,    3,    4,    5,    6,    7,    8};
    static const uint8_t d38[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe, 0x0c}; /* -500 */
    s->begin_row(c, "f", k);
    s->field(c, "b", 1);
    s->boolean(c, k & 1);
    s->field(c, "i", 1);
    if (k == 1)
        s->null_value(c);
    else
        s->i64(c, -7 * k);
    s->field(c, "l", 1);
    s->i64(c, (int64_t)1 << 40 | k);
    s->field(c, "f", 1);
    s->f32(c, 1.5f * (float)k);
    s->field(c, "d", 1);
    s->f64(c, -0.25 * k);
    s->field(c, "d9", 2);
    s->decimal_i64(c, 12345 + k, 2);
    s->field(c, "d18", 3);
    s->decimal_i64(c, -123456789012345LL, 3);
    s->field(c, "d38", 3);
    s->decimal_be(c, d38, 16, 2);
    s->field(c, "dt", 2);
    s->date(c, 19000 + k);
    s->field(c, "tm", 2);
    s->time(c, 3600000000LL + k);
    s->field(c, "ts", 2);
    s->timestamp(c, 1700000000123456LL, 6, false);
    s->field(c, "tstz", 4);
    s->timestamp(c, -1000001LL, 6, true); /* before the epoch */
    s->field(c, "tsns", 4);
    s->timestamp(c, 1700000000123456789LL, 9, false);
    s->field(c, "s", 1);
    s->string(c, "héllo", 6);
    s->field(c, "u", 1);
    s->uuid(c, uuid);
    s->field(c, "fx", 2);
    s->binary(c, (const uint8_t *)"abcd", 4);
    s->field(c, "bin", 3);
    s->binary(c, (const uint8_t *)"\0\1", 2);
    s->field(c, "lst", 3);
    if (k == 2) {
        s->null_value(c);
    } else {
        s->list_begin(c);
        for (int j = 0; j < k; j++) {
            if (j == 1)
                s->null_value(c);
            else
                s->i64(c, j);
        }
        s->list_end(c);
    }
    s->field(c, "m", 1);
    s->map_begin(c);
    if (k) {
        s->string(c, "a", 1);
        s->i64(c, 10);
        s->string(c, "b", 1);
        s->null_value(c);
    }
    s->map_end(c);
    s->field(c, "st", 2);
    s->struct_begin(c);
    s->field(c, "x", 1);
    s->i64(c, 99);
    s->struct_end(c);
    return s->end_row(c, err);
}

typedef struct written {
    icd_buf file;
    pq_file *pf;
} written;

static int write_rows(const ice_schema *sc, const pq_schema *mirror, int nrows, written *out,
                      icd_error *err)
{
    icd_arena a = ICD_ARENA_INIT;
    pq_schema_element *els;
    size_t nels;
    pq_writer *w = NULL;
    ice_pqw_sink *ps = NULL;
    pq_write_options o = {.codec = PQ_CODEC_ZSTD};
    int rc = ice_pqw_schema(sc->root.fields, sc->root.nfields, mirror, &a, &els, &nels, err);
    if (!rc) rc = pq_writer_new(els, nels, &o, buf_write, &out->file, &w, err);
    if (!rc) rc = ice_pqw_sink_new(w, sc->root.fields, sc->root.nfields, &ps, err);
    for (int k = 0; k < nrows && !rc; k++)
        rc = emit_row(ice_pqw_sink_get(ps), k, err);
    if (!rc) rc = ice_pqw_sink_finish(ps, err);
    if (!rc) rc = pq_writer_close(w, err);
    ice_pqw_sink_free(ps);
    pq_writer_free(w);
    icd_arena_free(&a);
    icd_file *f;
    if (!rc) rc = icd_memfile_open(out->file.data, out->file.len, "t.parquet", &f, err);
    if (!rc) rc = pq_file_open_file(f, &out->pf, err);
    return rc;
}

/* With PQW_OUT_DIR set, the files are also left there for the independent readers
 * (tests/corpus/test_pq_writer_types.sh). */
static void save(const icd_buf *b, const char *name)
{
    const char *dir = getenv("PQW_OUT_DIR");
    if (!dir) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(b->data, 1, b->len, f) == b->len);
    if (f) fclose(f);
}

static const pq_node *leaf_of(const pq_file *pf, int32_t id)
{
    return pq_schema_find_field_id(pq_file_schema(pf), id);
}

static void test_mapping_and_values(void)
{
    icd_error err;
    icd_error_clear(&err);
    ice_schema *sc = NULL;
    CHECK(ice_schema_parse(SCHEMA, strlen(SCHEMA), "schema", &sc, &err) == 0);
    if (!sc) return;
    written wr = {ICD_BUF_INIT, NULL};
    int rc = write_rows(sc, NULL, 4, &wr, &err);
    if (rc) fprintf(stderr, "write: %s\n", err.message);
    CHECK(rc == 0);
    if (!wr.pf) goto done;
    save(&wr.file, "types.parquet");
    /* the mapping */
    const pq_node *n;
    CHECK((n = leaf_of(wr.pf, 1)) && n->physical_type == PQ_BOOLEAN &&
          n->repetition == PQ_REQUIRED);
    CHECK((n = leaf_of(wr.pf, 2)) && n->physical_type == PQ_INT32 && n->repetition == PQ_OPTIONAL);
    CHECK((n = leaf_of(wr.pf, 6)) && n->physical_type == PQ_INT32 && n->eff.kind == PQ_LT_DECIMAL &&
          n->eff.precision == 9 && n->eff.scale == 2);
    CHECK((n = leaf_of(wr.pf, 7)) && n->physical_type == PQ_INT64 && n->eff.kind == PQ_LT_DECIMAL);
    CHECK((n = leaf_of(wr.pf, 8)) && n->physical_type == PQ_FIXED_LEN_BYTE_ARRAY &&
          n->type_length == 16 && n->eff.precision == 38);
    CHECK((n = leaf_of(wr.pf, 9)) && n->physical_type == PQ_INT32 && n->eff.kind == PQ_LT_DATE);
    CHECK((n = leaf_of(wr.pf, 10)) && n->physical_type == PQ_INT64 && n->eff.kind == PQ_LT_TIME &&
          n->eff.unit == PQ_UNIT_MICROS && !n->eff.utc);
    CHECK((n = leaf_of(wr.pf, 11)) && n->eff.kind == PQ_LT_TIMESTAMP && !n->eff.utc &&
          n->eff.unit == PQ_UNIT_MICROS);
    CHECK((n = leaf_of(wr.pf, 12)) && n->eff.kind == PQ_LT_TIMESTAMP && n->eff.utc);
    CHECK((n = leaf_of(wr.pf, 13)) && n->eff.kind == PQ_LT_TIMESTAMP &&
          n->eff.unit == PQ_UNIT_NANOS);
    CHECK((n = leaf_of(wr.pf, 14)) && n->physical_type == PQ_BYTE_ARRAY &&
          n->eff.kind == PQ_LT_STRING);
    CHECK((n = leaf_of(wr.pf, 15)) && n->physical_type == PQ_FIXED_LEN_BYTE_ARRAY &&
          n->type_length == 16 && n->eff.kind == PQ_LT_UUID);
    CHECK((n = leaf_of(wr.pf, 16)) && n->type_length == 4 && n->eff.kind == PQ_LT_NONE);
    CHECK((n = leaf_of(wr.pf, 17)) && n->physical_type == PQ_BYTE_ARRAY &&
          n->eff.kind == PQ_LT_NONE);
    CHECK((n = leaf_of(wr.pf, 18)) && n->kind == PQ_NODE_LIST && !n->element_is_repeated &&
          !strcmp(n->repeated->name, "list") && n->element->field_id == 19);
    CHECK((n = leaf_of(wr.pf, 20)) && n->kind == PQ_NODE_MAP &&
          !strcmp(n->repeated->name, "key_value") && n->key->field_id == 21 &&
          n->key->repetition == PQ_REQUIRED && n->value->field_id == 22);
    CHECK((n = leaf_of(wr.pf, 23)) && n->kind == PQ_NODE_STRUCT);

    /* the values, physically */
    pq_reader *r = NULL;
    CHECK(pq_reader_open(wr.pf, NULL, 0, 0, &r, &err) == 0);
    pq_batch *b = NULL;
    CHECK(r && pq_reader_next(r, &b, &err) == 0 && b && b->num_rows == 4);
    if (b) {
        const pq_column_batch *c = b->columns;
        const pq_schema *ps = pq_file_schema(wr.pf);
        int li = leaf_of(wr.pf, 2)->leaf_index;
        CHECK_EQ_INT(c[li].num_values, 3); /* row 1 null */
        CHECK_EQ_INT(((const int32_t *)c[li].values)[2], -21);
        li = leaf_of(wr.pf, 8)->leaf_index;
        pq_bytes v = ((const pq_bytes *)c[li].values)[0];
        CHECK(v.len == 16 && v.ptr[0] == 0xff && v.ptr[14] == 0xfe && v.ptr[15] == 0x0c);
        li = leaf_of(wr.pf, 10)->leaf_index;
        CHECK_EQ_INT(((const int64_t *)c[li].values)[3], 3600000003LL);
        li = leaf_of(wr.pf, 13)->leaf_index;
        CHECK_EQ_INT(((const int64_t *)c[li].values)[0], 1700000000123456789LL);
        li = leaf_of(wr.pf, 14)->leaf_index;
        v = ((const pq_bytes *)c[li].values)[0];
        CHECK(v.len == 6 && !memcmp(v.ptr, "héllo", 6));
        /* list: row0 [], row1 [0], row2 null, row3 [0,null,2] */
        li = leaf_of(wr.pf, 19)->leaf_index;
        CHECK_EQ_INT(c[li].num_levels, 6);
        uint32_t want_def[6] = {1, 3, 0, 3, 2, 3}, want_rep[6] = {0, 0, 0, 0, 1, 1};
        for (int e = 0; e < 6 && c[li].num_levels == 6; e++) {
            CHECK_EQ_INT(c[li].def[e], want_def[e]);
            CHECK_EQ_INT(c[li].rep[e], want_rep[e]);
        }
        /* map value: row0 {} then {a:10, b:null} */
        li = leaf_of(wr.pf, 22)->leaf_index;
        CHECK_EQ_INT(c[li].num_levels, 7);
        CHECK_EQ_INT(c[li].def[0], 1);
        CHECK_EQ_INT(c[li].def[1], 3);
        CHECK_EQ_INT(c[li].def[2], 2);
        (void)ps;
    }
    pq_reader_close(r);
done:
    pq_file_close(wr.pf);
    icd_buf_free(&wr.file);
    ice_schema_free(sc);
}

static pq_schema_element mk(const char *name, int rep, int type, int children, int id)
{
    pq_schema_element e;
    memset(&e, 0, sizeof e);
    e.name.ptr = name;
    e.name.len = (uint32_t)strlen(name);
    e.has_repetition = rep >= 0;
    e.repetition = rep;
    e.converted = PQ_CONV_NONE;
    if (children) {
        e.has_num_children = true;
        e.num_children = children;
    } else {
        e.has_type = true;
        e.type = type;
    }
    if (id) {
        e.has_field_id = true;
        e.field_id = id;
    }
    return e;
}

/* An "original" file in legacy forms: mirrored, not re-mapped; a promoted column is not. */
static void test_mirror_legacy(void)
{
    pq_schema_element o[12];
    int n = 0;
    o[n++] = mk("hive_schema", -1, 0, 6, 0);
    o[n++] = mk("ts", PQ_OPTIONAL, PQ_INT96, 0, 11);
    o[n] = mk("tstz", PQ_OPTIONAL, PQ_INT64, 0, 12);
    o[n++].converted = PQ_CONV_TIMESTAMP_MILLIS;
    o[n++] = mk("s", PQ_OPTIONAL, PQ_BYTE_ARRAY, 0, 14); /* binary without UTF8 */
    o[n] = mk("d18", PQ_OPTIONAL, PQ_BYTE_ARRAY, 0, 7);  /* decimal on BYTE_ARRAY */
    o[n].converted = PQ_CONV_DECIMAL;
    o[n].has_scale = o[n].has_precision = true;
    o[n].scale = 3;
    o[n++].precision = 18;
    o[n] = mk("lst", PQ_OPTIONAL, 0, 1, 18); /* 2-level list: repeated int32 "array" */
    o[n].converted = PQ_CONV_LIST;
    n++;
    o[n++] = mk("array", PQ_REPEATED, PQ_INT32, 0, 19);
    o[n++] = mk("l", PQ_OPTIONAL, PQ_INT32, 0, 3); /* int -> long since */
    pq_file_meta m;
    memset(&m, 0, sizeof m);
    m.schema = o;
    m.num_schema = (uint32_t)n;
    icd_arena a = ICD_ARENA_INIT;
    pq_schema orig;
    icd_error err;
    icd_error_clear(&err);
    CHECK(pq_schema_build(&m, &a, &orig, "orig", &err) == 0);
    /* the read schema: those columns (lst's element required: a 2-level list has no null
     * elements) */
    const char *js = "{\"type\":\"struct\",\"fields\":["
                     "{\"id\":11,\"name\":\"ts\",\"required\":false,\"type\":\"timestamp\"},"
                     "{\"id\":12,\"name\":\"tstz\",\"required\":false,\"type\":\"timestamptz\"},"
                     "{\"id\":14,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
                     "{\"id\":7,\"name\":\"d18\",\"required\":false,\"type\":\"decimal(18,3)\"},"
                     "{\"id\":18,\"name\":\"lst\",\"required\":false,\"type\":{\"type\":\"list\","
                     "\"element-id\":19,"
                     "\"element\":\"int\",\"element-required\":true}},"
                     "{\"id\":3,\"name\":\"l\",\"required\":false,\"type\":\"long\"}]}";
    ice_schema *sc = NULL;
    CHECK(ice_schema_parse(js, strlen(js), "schema", &sc, &err) == 0);
    if (!sc) goto done;
    icd_arena wa = ICD_ARENA_INIT;
    pq_schema_element *els;
    size_t nels;
    CHECK(ice_pqw_schema(sc->root.fields, sc->root.nfields, &orig, &wa, &els, &nels, &err) == 0);
    icd_buf file = ICD_BUF_INIT;
    pq_writer *w = NULL;
    ice_pqw_sink *ps = NULL;
    CHECK(pq_writer_new(els, nels, NULL, buf_write, &file, &w, &err) == 0);
    CHECK(w && ice_pqw_sink_new(w, sc->root.fields, sc->root.nfields, &ps, &err) == 0);
    if (ps) {
        const ice_row_sink *s = ice_pqw_sink_get(ps);
        void *c = s->ctx;
        static const uint8_t be[8] = {0xff, 0xff, 0x8f, 0xb7, 0x79, 0xf2, 0x20, 0x87};
        s->begin_row(c, "f", 0);
        s->field(c, "ts", 2);
        s->timestamp(c, 86400000000LL + 1, 6, false); /* 1970-01-02T00:00:00.000001 */
        s->field(c, "tstz", 4);
        s->timestamp(c, 1500000LL, 6, true); /* 1.5 s -> 1500 ms */
        s->field(c, "s", 1);
        s->string(c, "x", 1);
        s->field(c, "d18", 3);
        s->decimal_be(c, be, 8, 3);
        s->field(c, "lst", 3);
        s->list_begin(c);
        s->i64(c, 5);
        s->i64(c, 6);
        s->list_end(c);
        s->field(c, "l", 1);
        s->i64(c, (int64_t)1 << 40);
        CHECK(s->end_row(c, &err) == 0);
        CHECK(ice_pqw_sink_finish(ps, &err) == 0);
        CHECK(pq_writer_close(w, &err) == 0);
    }
    ice_pqw_sink_free(ps);
    pq_writer_free(w);
    save(&file, "legacy.parquet");
    icd_file *f;
    pq_file *pf = NULL;
    CHECK(icd_memfile_open(file.data, file.len, "m.parquet", &f, &err) == 0 &&
          pq_file_open_file(f, &pf, &err) == 0);
    if (pf) {
        const pq_node *x;
        CHECK((x = leaf_of(pf, 11)) && x->physical_type == PQ_INT96);
        CHECK((x = leaf_of(pf, 12)) && x->physical_type == PQ_INT64 &&
              x->converted == PQ_CONV_TIMESTAMP_MILLIS && x->logical.kind == PQ_LT_NONE);
        CHECK((x = leaf_of(pf, 14)) && x->converted == PQ_CONV_NONE &&
              x->logical.kind == PQ_LT_NONE);
        CHECK((x = leaf_of(pf, 7)) && x->physical_type == PQ_BYTE_ARRAY &&
              x->eff.kind == PQ_LT_DECIMAL && x->eff.precision == 18);
        CHECK((x = leaf_of(pf, 18)) && x->kind == PQ_NODE_LIST && x->element_is_repeated &&
              !strcmp(x->repeated->name, "array") && x->repeated->physical_type == PQ_INT32);
        CHECK((x = leaf_of(pf, 3)) && x->physical_type == PQ_INT64); /* promoted: read type */
        pq_reader *r = NULL;
        pq_batch *b = NULL;
        CHECK(pq_reader_open(pf, NULL, 0, 0, &r, &err) == 0 && pq_reader_next(r, &b, &err) == 0 &&
              b);
        if (b) {
            const pq_column_batch *c = b->columns;
            const pq_int96 *t96 = c[leaf_of(pf, 11)->leaf_index].values;
            /* nanos of day 1000, Julian day 2440589 */
            CHECK(t96[0].b[0] == 0xe8 && t96[0].b[1] == 0x03 && t96[0].b[2] == 0);
            uint32_t jd = (uint32_t)t96[0].b[8] | (uint32_t)t96[0].b[9] << 8 |
                          (uint32_t)t96[0].b[10] << 16 | (uint32_t)t96[0].b[11] << 24;
            CHECK_EQ_INT(jd, 2440589);
            CHECK_EQ_INT(((const int64_t *)c[leaf_of(pf, 12)->leaf_index].values)[0], 1500);
            pq_bytes d = ((const pq_bytes *)c[leaf_of(pf, 7)->leaf_index].values)[0];
            CHECK(d.len == 6 && d.ptr[0] == 0x8f && d.ptr[5] == 0x87); /* sign bytes trimmed */
            const pq_column_batch *lc = &c[leaf_of(pf, 19)->leaf_index];
            CHECK(lc->num_levels == 2 && lc->rep[1] == 1 && ((const int32_t *)lc->values)[1] == 6);
            CHECK_EQ_INT(((const int64_t *)c[leaf_of(pf, 3)->leaf_index].values)[0],
                         (int64_t)1 << 40);
        }
        pq_reader_close(r);
        pq_file_close(pf);
    }
    icd_buf_free(&file);
    icd_arena_free(&wa);
done:
    ice_schema_free(sc);
    icd_arena_free(&a);
}

/* A null in a REQUIRED field, a variant: the sink fails the row, the scan stops. */
static void test_refusals(void)
{
    icd_error err;
    icd_error_clear(&err);
    const char *js = "{\"type\":\"struct\",\"fields\":["
                     "{\"id\":1,\"name\":\"a\",\"required\":true,\"type\":\"int\"}]}";
    ice_schema *sc = NULL;
    CHECK(ice_schema_parse(js, strlen(js), "schema", &sc, &err) == 0);
    if (!sc) return;
    icd_arena wa = ICD_ARENA_INIT;
    pq_schema_element *els;
    size_t nels;
    icd_buf file = ICD_BUF_INIT;
    pq_writer *w = NULL;
    ice_pqw_sink *ps = NULL;
    CHECK(ice_pqw_schema(sc->root.fields, 1, NULL, &wa, &els, &nels, &err) == 0);
    CHECK(pq_writer_new(els, nels, NULL, buf_write, &file, &w, &err) == 0);
    CHECK(w && ice_pqw_sink_new(w, sc->root.fields, 1, &ps, &err) == 0);
    if (ps) {
        const ice_row_sink *s = ice_pqw_sink_get(ps);
        s->begin_row(s->ctx, "f", 0);
        s->field(s->ctx, "a", 1);
        s->null_value(s->ctx);
        CHECK(s->end_row(s->ctx, &err) == ICD_EUNSUPPORTED);
        CHECK(strstr(err.message, "null") != NULL);
    }
    ice_pqw_sink_free(ps);
    pq_writer_free(w);
    icd_buf_free(&file);
    icd_arena_free(&wa);
    ice_schema_free(sc);
    const char *jv = "{\"type\":\"struct\",\"fields\":["
                     "{\"id\":1,\"name\":\"v\",\"required\":false,\"type\":\"variant\"}]}";
    CHECK(ice_schema_parse(jv, strlen(jv), "schema", &sc, &err) == 0);
    if (!sc) return;
    icd_arena_free(&wa);
    CHECK(ice_pqw_schema(sc->root.fields, 1, NULL, &wa, &els, &nels, &err) == ICD_EUNSUPPORTED);
    icd_arena_free(&wa);
    ice_schema_free(sc);
    /* a writer batch whose levels do not add up */
    pq_schema_element e2[2] = {mk("s", -1, 0, 1, 0), mk("x", PQ_OPTIONAL, PQ_INT32, 0, 1)};
    CHECK(pq_writer_new(e2, 2, NULL, buf_write, &file, &w, &err) == 0);
    uint32_t def[3] = {1, 0, 2};
    int32_t vals[2] = {1, 2};
    pq_column_batch cb = {.num_levels = 3, .def = def, .num_values = 2, .values = vals};
    CHECK(pq_writer_write_batch(w, &cb, 3, &err) == ICD_EINVALID);
    CHECK(pq_writer_write_batch(w, &cb, 3, &err) == ICD_EINVALID); /* stays failed */
    pq_writer_free(w);
    icd_buf_free(&file);
}

TEST_MAIN({"mapping_and_values", test_mapping_and_values}, {"mirror_legacy", test_mirror_legacy},
          {"refusals", test_refusals})
