/*
 * The Avro container writer and its Iceberg row sink (formats/avro/writer*.h), read back
 * with the container reader: every codec, Iceberg's Avro mapping (field-id, optional
 * unions, decimal as fixed, timestamptz with adjust-to-utc, list element-id, string-key
 * map key-id/value-id, nested record), many blocks, the sync marker as given, the same
 * bytes twice, and the errors a row the schema cannot hold gives.
 */
#include <stdlib.h>
#include <string.h>

#include "../test.h"
#include "base/buf.h"
#include "formats/avro/container.h"
#include "formats/avro/writer_ice.h"
#include "iceberg/schema.h"
#include "io/memfile.h"

static const char *SCHEMA =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"s\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":3,\"name\":\"d\",\"required\":false,\"type\":\"decimal(9,2)\"},"
    "{\"id\":4,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":5,\"name\":\"l\",\"required\":false,\"type\":{\"type\":\"list\",\"element-id\":6,"
    "\"element\":\"int\",\"element-required\":false}},"
    "{\"id\":7,\"name\":\"m\",\"required\":false,\"type\":{\"type\":\"map\",\"key-id\":8,"
    "\"key\":\"string\",\"value-id\":9,\"value\":\"int\",\"value-required\":true}},"
    "{\"id\":10,\"name\":\"st\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":11,\"name\":\"a\",\"required\":true,\"type\":\"int\"}]}}]}";

static int to_buf(void *ctx, const void *p, size_t n, icd_error *err)
{
    (void)err;
    icd_buf_append(ctx, p, n);
    return 0;
}

/* Row i: id i, s "row-i" (null for i % 3 == 0), d i.25, ts i µs, l [i, null], m {"k": i},
 * st {a: -i}. */
static int put_row(const ice_row_sink *k, int64_t i, bool bad, icd_error *err)
{
    char s[32];
    snprintf(s, sizeof s, "row-%lld", (long long)i);
    k->begin_row(k->ctx, "mem", i);
    k->field(k->ctx, "id", 2);
    if (bad)
        k->null_value(k->ctx);
    else
        k->i64(k->ctx, i);
    k->field(k->ctx, "s", 1);
    if (i % 3 == 0)
        k->null_value(k->ctx);
    else
        k->string(k->ctx, s, strlen(s));
    k->field(k->ctx, "d", 1);
    k->decimal_i64(k->ctx, i * 100 + 25, 2);
    k->field(k->ctx, "ts", 2);
    k->timestamp(k->ctx, i, 6, true);
    k->field(k->ctx, "l", 1);
    k->list_begin(k->ctx);
    k->i64(k->ctx, i);
    k->null_value(k->ctx);
    k->list_end(k->ctx);
    k->field(k->ctx, "m", 1);
    k->map_begin(k->ctx);
    k->string(k->ctx, "k", 1);
    k->i64(k->ctx, i);
    k->map_end(k->ctx);
    k->field(k->ctx, "st", 2);
    k->struct_begin(k->ctx);
    k->field(k->ctx, "a", 1);
    k->i64(k->ctx, -i);
    k->struct_end(k->ctx);
    return k->end_row(k->ctx, err);
}

static int write_file(const ice_schema *sch, icd_avro_codec codec, int64_t rows, icd_buf *out,
                      icd_error *err)
{
    icd_buf sj = ICD_BUF_INIT;
    uint8_t sync[16];
    for (int i = 0; i < 16; i++)
        sync[i] = (uint8_t)(0xA0 + i);
    icd_avro_write_options o = {.codec = codec, .block_bytes = 4096};
    icd_avro_writer *w = NULL;
    icd_avro_ice_sink *s = NULL;
    int rc = icd_avro_ice_schema_json(sch->root.fields, sch->root.nfields, &sj, err);
    if (!rc) rc = icd_avro_writer_new(sj.data, sync, &o, to_buf, out, &w, err);
    if (!rc) rc = icd_avro_ice_sink_new(w, sch->root.fields, sch->root.nfields, &s, err);
    for (int64_t i = 0; !rc && i < rows; i++)
        rc = put_row(icd_avro_ice_sink_get(s), i, false, err);
    if (!rc) rc = icd_avro_writer_close(w, err);
    icd_avro_ice_sink_free(s);
    icd_avro_writer_free(w);
    icd_buf_free(&sj);
    return rc;
}

static void test_round_trip(void)
{
    ice_schema *sch = NULL;
    icd_error err;
    CHECK(ice_schema_parse(SCHEMA, strlen(SCHEMA), "t", &sch, &err) == 0);
    if (!sch) return;
    const icd_avro_codec codecs[] = {AVRO_CODEC_NULL, AVRO_CODEC_DEFLATE, AVRO_CODEC_SNAPPY,
                                     AVRO_CODEC_ZSTD};
    for (size_t c = 0; c < 4; c++) {
        icd_buf file = ICD_BUF_INIT, again = ICD_BUF_INIT;
        CHECK(write_file(sch, codecs[c], 3000, &file, &err) == 0);
        CHECK(write_file(sch, codecs[c], 3000, &again, &err) == 0);
        CHECK(file.len == again.len && !memcmp(file.data, again.data, file.len));
        icd_file *f = NULL;
        icd_avro_reader *r = NULL;
        CHECK(icd_memfile_open(file.data, file.len, "mem.avro", &f, &err) == 0);
        CHECK(icd_avro_reader_open_file(f, true, &r, &err) == 0);
        if (!r) continue;
        CHECK(icd_avro_reader_codec(r) == codecs[c]);
        const uint8_t *sync = icd_avro_reader_sync(r);
        CHECK(sync[0] == 0xA0 && sync[15] == 0xAF);
        const icd_avro_schema *as = icd_avro_reader_schema(r);
        CHECK_EQ_INT(as->nfields, 7);
        CHECK(as->fields[2].has_field_id && as->fields[2].field_id == 3);
        const icd_avro_schema *d = as->fields[2].type->branches[1];
        CHECK(d->type == AVRO_FIXED && d->logical == AVRO_LT_DECIMAL && d->size == 4 &&
              d->scale == 2);
        CHECK(as->fields[3].type->branches[1]->utc);
        CHECK(as->fields[4].type->branches[1]->element_id == 6);
        CHECK(as->fields[5].type->branches[1]->key_id == 8);
        icd_arena a = ICD_ARENA_INIT;
        icd_avro_value v;
        bool eof = false;
        int64_t n = 0;
        bool ok = true;
        while (icd_avro_reader_next(r, &a, &v, &eof, &err) == 0 && !eof) {
            const icd_avro_value *id = icd_avro_value_field(&v, "id");
            const icd_avro_value *s = icd_avro_value_field(&v, "s");
            const icd_avro_value *l = icd_avro_value_field(&v, "l");
            const icd_avro_value *m = icd_avro_value_field(&v, "m");
            const icd_avro_value *st = icd_avro_value_field(&v, "st");
            ok &= id && id->u.i64 == n;
            ok &= s && (n % 3 == 0 ? icd_avro_value_is_null(s) : s->u.bytes.len > 4);
            ok &= l && l->u.list.count == 2 && l->u.list.items[0].u.i64 == n &&
                  icd_avro_value_is_null(&l->u.list.items[1]);
            ok &= m && m->u.map.count == 1 && m->u.map.values[0].u.i64 == n;
            ok &= st && st->u.list.items[0].u.i64 == -n;
            n++;
            icd_arena_reset(&a);
        }
        CHECK(ok);
        CHECK_EQ_INT(n, 3000);
        icd_arena_free(&a);
        icd_avro_reader_free(r);
        icd_buf_free(&file);
        icd_buf_free(&again);
    }
    ice_schema_free(sch);
}

static void test_bad_rows(void)
{
    ice_schema *sch = NULL;
    icd_error err;
    CHECK(ice_schema_parse(SCHEMA, strlen(SCHEMA), "t", &sch, &err) == 0);
    if (!sch) return;
    icd_buf out = ICD_BUF_INIT, sj = ICD_BUF_INIT;
    uint8_t sync[16] = {0};
    icd_avro_writer *w = NULL;
    icd_avro_ice_sink *s = NULL;
    CHECK(icd_avro_ice_schema_json(sch->root.fields, sch->root.nfields, &sj, &err) == 0);
    CHECK(icd_avro_writer_new(sj.data, sync, NULL, to_buf, &out, &w, &err) == 0);
    CHECK(icd_avro_ice_sink_new(w, sch->root.fields, sch->root.nfields, &s, &err) == 0);
    CHECK(put_row(icd_avro_ice_sink_get(s), 1, true, &err) != 0);
    CHECK(strstr(err.message, "'id' is required") != NULL);
    const ice_row_sink *k = icd_avro_ice_sink_get(s);
    k->begin_row(k->ctx, "mem", 2); /* a field missing */
    k->field(k->ctx, "id", 2);
    k->i64(k->ctx, 2);
    CHECK(k->end_row(k->ctx, &err) != 0);
    CHECK(strstr(err.message, "ends before all its fields") != NULL);
    CHECK(put_row(k, 3, false, &err) == 0); /* the sink goes on after a rejected row */
    CHECK(icd_avro_writer_close(w, &err) == 0);
    CHECK_EQ_INT(icd_avro_writer_count(w), 1);
    icd_avro_ice_sink_free(s);
    icd_avro_writer_free(w);
    icd_buf_free(&sj);
    icd_buf_free(&out);
    ice_schema_free(sch);
}

TEST_MAIN({"round_trip", test_round_trip}, {"bad_rows", test_bad_rows})
