/*
 * Table metadata parsing on hand-written files: v2 with refs/logs/name mapping, snapshot
 * selection (id, ref, time with exact boundaries and "before the first" errors, the
 * no-snapshot-log fallback), v1 forms (single schema, field-array partition spec, inline
 * manifests), gzip files, schema lookups, and errors for missing required fields.
 */
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "iceberg/metadata.h"
#include "test.h"

/* A v2 table: 3 snapshots (ids 11, 12, 13) committed at t=1000, 2000, 3000; 2 schemas;
 * refs main -> 13, tag t1 -> 11, branch b -> 12. */
static const char *V2 =
    "{\"format-version\":2,\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
    "\"location\":\"s3://b/wh/t\",\"last-sequence-number\":3,\"last-updated-ms\":3000,"
    "\"last-column-id\":4,\"current-schema-id\":1,"
    "\"schemas\":[{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"data\",\"required\":false,\"type\":\"string\"}]},"
    "{\"type\":\"struct\",\"schema-id\":1,\"identifier-field-ids\":[1],\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"data\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":3,\"name\":\"loc\",\"required\":false,\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":4,\"name\":\"lat\",\"required\":false,\"type\":\"double\"}]}}]}],"
    "\"default-spec-id\":1,\"partition-specs\":[{\"spec-id\":0,\"fields\":[]},"
    "{\"spec-id\":1,\"fields\":[{\"name\":\"id_bucket\",\"transform\":\"bucket[16]\","
    "\"source-id\":1,\"field-id\":1000}]}],\"last-partition-id\":1000,"
    "\"default-sort-order-id\":0,\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],"
    "\"properties\":{\"write.format.default\":\"parquet\",\"schema.name-mapping.default\":"
    "\"[{\\\"field-id\\\":1,\\\"names\\\":[\\\"id\\\",\\\"record_id\\\"]},"
    "{\\\"field-id\\\":2,\\\"names\\\":[\\\"data\\\"]},"
    "{\\\"field-id\\\":3,\\\"names\\\":[\\\"location\\\"],\\\"fields\\\":["
    "{\\\"field-id\\\":4,\\\"names\\\":[\\\"latitude\\\",\\\"lat\\\"]}]},"
    "{\\\"names\\\":[\\\"extra\\\"]}]\"},"
    "\"current-snapshot-id\":13,"
    "\"refs\":{\"main\":{\"snapshot-id\":13,\"type\":\"branch\"},"
    "\"t1\":{\"snapshot-id\":11,\"type\":\"tag\",\"max-ref-age-ms\":100},"
    "\"b\":{\"snapshot-id\":12,\"type\":\"branch\",\"min-snapshots-to-keep\":2}},"
    "\"snapshots\":["
    "{\"snapshot-id\":11,\"sequence-number\":1,\"timestamp-ms\":1000,\"manifest-list\":\"s3://b/"
    "wh/t/metadata/snap-11.avro\",\"summary\":{\"operation\":\"append\"},\"schema-id\":0},"
    "{\"snapshot-id\":12,\"parent-snapshot-id\":11,\"sequence-number\":2,\"timestamp-ms\":2000,"
    "\"manifest-list\":\"s3://b/wh/t/metadata/snap-12.avro\",\"summary\":{\"operation\":"
    "\"delete\",\"added-delete-files\":\"1\"},\"schema-id\":0},"
    "{\"snapshot-id\":13,\"parent-snapshot-id\":12,\"sequence-number\":3,\"timestamp-ms\":3000,"
    "\"manifest-list\":\"s3://b/wh/t/metadata/snap-13.avro\",\"summary\":{\"operation\":"
    "\"overwrite\"},\"schema-id\":1}],"
    "\"snapshot-log\":[{\"timestamp-ms\":1000,\"snapshot-id\":11},"
    "{\"timestamp-ms\":2000,\"snapshot-id\":12},{\"timestamp-ms\":3000,\"snapshot-id\":13}],"
    "\"metadata-log\":[{\"timestamp-ms\":500,\"metadata-file\":\"s3://b/wh/t/metadata/v1.json\"}],"
    "\"statistics\":[],\"some-future-field\":{\"x\":1}}";

static ice_metadata *load(const char *json)
{
    ice_metadata *md = NULL;
    icd_error err;
    int rc = ice_metadata_parse(json, strlen(json), "mem.metadata.json", &md, &err);
    if (rc) fprintf(stderr, "parse: %s\n", err.message);
    CHECK(rc == 0);
    return md;
}

static void test_v2_fields(void)
{
    ice_metadata *md = load(V2);
    if (!md) return;
    CHECK_EQ_INT(ice_metadata_format_version(md), 2);
    CHECK_EQ_STR(ice_metadata_location(md), "s3://b/wh/t");
    CHECK_EQ_STR(ice_metadata_table_uuid(md), "9c12d441-03fe-4693-9a96-a0705ddf69c1");
    CHECK_EQ_INT(ice_metadata_last_sequence_number(md), 3);
    CHECK_EQ_INT(ice_metadata_last_column_id(md), 4);
    CHECK_EQ_INT(ice_metadata_schema_count(md), 2);
    CHECK_EQ_INT(ice_metadata_current_schema(md)->schema_id, 1);
    CHECK(ice_metadata_schema(md, 0) != NULL && ice_metadata_schema(md, 5) == NULL);
    CHECK_EQ_INT(ice_metadata_spec_count(md), 2);
    CHECK_EQ_INT(ice_metadata_default_spec(md)->spec_id, 1);
    CHECK(ice_partition_spec_is_unpartitioned(ice_metadata_spec(md, 0)));
    CHECK(!ice_partition_spec_is_unpartitioned(ice_metadata_spec(md, 1)));
    CHECK_EQ_STR(ice_metadata_property(md, "write.format.default"), "parquet");
    CHECK(ice_metadata_property(md, "nope") == NULL);
    CHECK_EQ_INT(ice_metadata_snapshot_count(md), 3);
    const ice_snapshot *s12 = ice_metadata_snapshot(md, 12);
    CHECK(s12 && s12->has_parent && s12->parent_snapshot_id == 11 && s12->sequence_number == 2);
    CHECK(s12 && !strcmp(s12->operation, "delete") && s12->n_summary == 2);
    CHECK(s12 && !strcmp(s12->manifest_list, "s3://b/wh/t/metadata/snap-12.avro"));
    CHECK_EQ_INT(ice_metadata_ref_count(md), 3);
    const ice_ref *t1 = ice_metadata_ref(md, "t1");
    CHECK(t1 && t1->type == ICE_REF_TAG && t1->snapshot_id == 11 && t1->has_max_ref_age_ms &&
          t1->max_ref_age_ms == 100);
    const ice_ref *b = ice_metadata_ref(md, "b");
    CHECK(b && b->type == ICE_REF_BRANCH && b->min_snapshots_to_keep == 2);
    CHECK_EQ_INT(ice_metadata_metadata_log_count(md), 1);
    CHECK_EQ_INT(ice_metadata_sort_order_count(md), 1);

    /* schema lookups */
    const ice_schema *sc = ice_metadata_current_schema(md);
    CHECK(sc->n_identifier_field_ids == 1 && sc->identifier_field_ids[0] == 1);
    const ice_field *lat = ice_schema_field(sc, 4);
    CHECK(lat && !strcmp(lat->name, "lat") && lat->type->kind == ICE_T_DOUBLE);
    CHECK(ice_schema_parent(sc, 4) == ice_schema_field(sc, 3));
    CHECK(ice_schema_parent(sc, 3) == NULL);
    CHECK(ice_schema_find(sc, "loc.lat", true) == lat);
    CHECK(ice_schema_find(sc, "LOC.Lat", true) == NULL);
    CHECK(ice_schema_find(sc, "LOC.Lat", false) == lat);
    CHECK(ice_schema_field(sc, 99) == NULL);
    CHECK_EQ_STR(ice_schema_entry_by_id(sc, 4)->full_name, "loc.lat");

    /* name mapping */
    const ice_name_mapping *nm = NULL;
    icd_error err;
    CHECK(ice_metadata_name_mapping(md, &nm, &err) == 0 && nm && nm->n == 4);
    const ice_mapped_field *f = ice_name_mapping_find(nm, "record_id");
    CHECK(f && f->has_field_id && f->field_id == 1);
    f = ice_name_mapping_find(nm, "location");
    CHECK(f && f->fields && f->field_id == 3);
    const ice_mapped_field *g = f ? ice_name_mapping_find(f->fields, "latitude") : NULL;
    CHECK(g && g->field_id == 4 && g->n_names == 2);
    f = ice_name_mapping_find(nm, "extra");
    CHECK(f && !f->has_field_id);
    CHECK(ice_name_mapping_find(nm, "lat") == NULL); /* names are per level */
    ice_metadata_free(md);
}

static const ice_snapshot *pick(const ice_metadata *md, ice_snapshot_selector sel, int want_rc,
                                icd_error *err)
{
    const ice_snapshot *s = NULL;
    int rc = ice_metadata_select_snapshot(md, &sel, &s, err);
    CHECK_EQ_INT(rc, want_rc);
    return s;
}

static void test_snapshot_selection(void)
{
    ice_metadata *md = load(V2);
    if (!md) return;
    icd_error err;
    const ice_snapshot *s;
    s = pick(md, (ice_snapshot_selector){.kind = ICE_SELECT_CURRENT}, 0, &err);
    CHECK(s && s->snapshot_id == 13);
    s = pick(md, (ice_snapshot_selector){.kind = ICE_SELECT_ID, .snapshot_id = 12}, 0, &err);
    CHECK(s && s->snapshot_id == 12);
    pick(md, (ice_snapshot_selector){.kind = ICE_SELECT_ID, .snapshot_id = 99}, ICD_ENOTFOUND,
         &err);
    s = pick(md, (ice_snapshot_selector){.kind = ICE_SELECT_REF, .ref = "t1"}, 0, &err);
    CHECK(s && s->snapshot_id == 11);
    s = pick(md, (ice_snapshot_selector){.kind = ICE_SELECT_REF, .ref = "b"}, 0, &err);
    CHECK(s && s->snapshot_id == 12);
    s = pick(md, (ice_snapshot_selector){.kind = ICE_SELECT_REF, .ref = "main"}, 0, &err);
    CHECK(s && s->snapshot_id == 13);
    pick(md, (ice_snapshot_selector){.kind = ICE_SELECT_REF, .ref = "nope"}, ICD_ENOTFOUND, &err);
    CHECK(strstr(err.message, "nope") != NULL);

    /* time travel: before the first entry is an error; boundaries are inclusive */
    pick(md, (ice_snapshot_selector){.kind = ICE_SELECT_AS_OF, .timestamp_ms = 999}, ICD_ENOTFOUND,
         &err);
    CHECK(strstr(err.message, "no snapshot at or before") != NULL);
    CHECK(strstr(err.message, "1970-01-01T00:00:00.999Z") != NULL);
    int64_t times[] = {1000, 1999, 2000, 2999, 3000, 100000};
    int64_t ids[] = {11, 11, 12, 12, 13, 13};
    for (int i = 0; i < 6; i++) {
        s = pick(md, (ice_snapshot_selector){.kind = ICE_SELECT_AS_OF, .timestamp_ms = times[i]}, 0,
                 &err);
        CHECK(s && s->snapshot_id == ids[i]);
    }

    /* the schema a read uses: the snapshot's own for a read by id, the current one for a
     * read of the current state (Java's SnapshotUtil.schemaFor) */
    {
        icd_error e2;
        const ice_schema *sc = NULL;
        ice_snapshot_selector by_id = {.kind = ICE_SELECT_ID, .snapshot_id = 11};
        CHECK(!ice_metadata_read_schema(md, &by_id, ice_metadata_snapshot(md, 11), &sc, &e2));
        CHECK(sc && sc->schema_id == 0);
        by_id.snapshot_id = 13;
        CHECK(!ice_metadata_read_schema(md, &by_id, ice_metadata_snapshot(md, 13), &sc, &e2));
        CHECK(sc && sc->schema_id == 1);
        ice_snapshot_selector cur = {.kind = ICE_SELECT_CURRENT};
        CHECK(!ice_metadata_read_schema(md, &cur, NULL, &sc, &e2));
        CHECK(sc && sc->schema_id == 1);
        CHECK(!ice_metadata_read_schema(md, &cur, ice_metadata_snapshot(md, 11), &sc, &e2));
        CHECK(sc && sc->schema_id == 1);
        /* tag t1 (snapshot 11, schema 0): the snapshot's; branch b (snapshot 12, schema 0):
         * the table's current one */
        ice_snapshot_selector ref = {.kind = ICE_SELECT_REF, .ref = "t1"};
        CHECK(!ice_metadata_read_schema(md, &ref, ice_metadata_snapshot(md, 11), &sc, &e2));
        CHECK(sc && sc->schema_id == 0);
        ref.ref = "b";
        CHECK(!ice_metadata_read_schema(md, &ref, ice_metadata_snapshot(md, 12), &sc, &e2));
        CHECK(sc && sc->schema_id == 1);
        ice_snapshot_selector as_of = {.kind = ICE_SELECT_AS_OF, .timestamp_ms = 2500};
        CHECK(!ice_metadata_read_schema(md, &as_of, ice_metadata_snapshot(md, 12), &sc, &e2));
        CHECK(sc && sc->schema_id == 0);
    }
    ice_metadata_free(md);
}

/* A v1 table in the oldest layout: "schema", a field-array "partition-spec" without field
 * ids, a snapshot with inline "manifests", no snapshot-log, no refs. */
static const char *V1 =
    "{\"format-version\":1,\"location\":\"/wh/t1\",\"last-updated-ms\":5,\"last-column-id\":2,"
    "\"schema\":{\"type\":\"struct\",\"fields\":["
    "{\"id\":1,\"name\":\"ts\",\"required\":false,\"type\":\"timestamptz\"},"
    "{\"id\":2,\"name\":\"cat\",\"required\":false,\"type\":\"string\"}]},"
    "\"partition-spec\":[{\"name\":\"ts_day\",\"transform\":\"day\",\"source-id\":1},"
    "{\"name\":\"cat\",\"transform\":\"identity\",\"source-id\":2}],"
    "\"properties\":{},\"current-snapshot-id\":7,"
    "\"snapshots\":[{\"snapshot-id\":6,\"timestamp-ms\":100,\"manifests\":[\"/wh/t1/m0.avro\"]},"
    "{\"snapshot-id\":7,\"parent-snapshot-id\":6,\"timestamp-ms\":200,"
    "\"manifests\":[\"/wh/t1/m0.avro\",\"/wh/t1/m1.avro\"]}]}";

static void test_v1_forms(void)
{
    ice_metadata *md = load(V1);
    if (!md) return;
    CHECK_EQ_INT(ice_metadata_format_version(md), 1);
    CHECK(ice_metadata_table_uuid(md) == NULL);
    CHECK_EQ_INT(ice_metadata_last_sequence_number(md), 0);
    CHECK_EQ_INT(ice_metadata_schema_count(md), 1);
    CHECK_EQ_INT(ice_metadata_current_schema(md)->schema_id, 0);
    const ice_partition_spec *spec = ice_metadata_default_spec(md);
    CHECK(spec && spec->spec_id == 0 && spec->nfields == 2);
    CHECK(spec && spec->fields[0].field_id == 1000 && spec->fields[1].field_id == 1001);
    CHECK(spec && spec->fields[0].transform.kind == ICE_TR_DAY);
    CHECK_EQ_INT(ice_metadata_last_partition_id(md), 1001);
    const ice_snapshot *s = ice_metadata_current_snapshot(md);
    CHECK(s && s->snapshot_id == 7 && s->sequence_number == 0 && s->manifest_list == NULL &&
          s->n_manifests == 2 && !strcmp(s->manifests[1], "/wh/t1/m1.avro"));
    CHECK(s && s->operation == NULL && !s->has_schema_id);
    {
        icd_error e2;
        const ice_schema *sc = NULL;
        ice_snapshot_selector by_id = {.kind = ICE_SELECT_ID, .snapshot_id = 7};
        CHECK(!ice_metadata_read_schema(md, &by_id, s, &sc, &e2) && sc && sc->schema_id == 0);
    }
    /* refs: "main" synthesised from the current snapshot */
    const ice_ref *main = ice_metadata_ref(md, "main");
    CHECK(main && main->snapshot_id == 7 && main->type == ICE_REF_BRANCH);
    CHECK(!ice_metadata_has_snapshot_log(md));
    /* without a snapshot-log, time travel walks the current snapshot's ancestry */
    icd_error err;
    s = pick(md, (ice_snapshot_selector){.kind = ICE_SELECT_AS_OF, .timestamp_ms = 150}, 0, &err);
    CHECK(s && s->snapshot_id == 6);
    s = pick(md, (ice_snapshot_selector){.kind = ICE_SELECT_AS_OF, .timestamp_ms = 200}, 0, &err);
    CHECK(s && s->snapshot_id == 7);
    pick(md, (ice_snapshot_selector){.kind = ICE_SELECT_AS_OF, .timestamp_ms = 99}, ICD_ENOTFOUND,
         &err);
    ice_metadata_free(md);
}

static void test_no_snapshots(void)
{
    const char *j =
        "{\"format-version\":2,\"table-uuid\":\"u\",\"location\":\"/t\",\"last-sequence-number\":0,"
        "\"last-updated-ms\":1,\"last-column-id\":1,\"current-schema-id\":0,\"schemas\":[{\"type\":"
        "\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"a\",\"required\":false,"
        "\"type\":\"variant\"}]}],\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,"
        "\"fields\":[]}],\"last-partition-id\":999,\"default-sort-order-id\":0,\"sort-orders\":"
        "[{\"order-id\":0,\"fields\":[]}],\"current-snapshot-id\":-1,\"snapshots\":[],"
        "\"snapshot-log\":[]}";
    ice_metadata *md = load(j);
    if (!md) return;
    icd_error err;
    const ice_snapshot *s = (const ice_snapshot *)1;
    ice_snapshot_selector cur = {.kind = ICE_SELECT_CURRENT};
    CHECK(ice_metadata_select_snapshot(md, &cur, &s, &err) == 0 && s == NULL);
    CHECK(ice_metadata_ref_count(md) == 0);
    pick(md, (ice_snapshot_selector){.kind = ICE_SELECT_AS_OF, .timestamp_ms = 5}, ICD_ENOTFOUND,
         &err);
    /* the variant column parses and is readable (rendered as JSON); geometry is not */
    const ice_field *a = ice_schema_field(ice_metadata_current_schema(md), 1);
    CHECK(a && a->type->kind == ICE_T_VARIANT);
    CHECK(a && ice_type_check_readable(a->type, "a", &err) == 0);
    ice_type geo;
    CHECK(ice_type_parse_primitive("geometry", NULL, &geo, &err) == 0);
    CHECK(ice_type_check_readable(&geo, "g", &err) == ICD_EUNSUPPORTED);
    CHECK(strstr(err.message, "geometry") != NULL);
    ice_metadata_free(md);
}

/* Replaces the first occurrence of `from` in V2 by `to` and expects a parse error whose
 * message contains `needle`. */
static void expect_error(const char *from, const char *to, int code, const char *needle)
{
    const char *p = strstr(V2, from);
    CHECK(p != NULL);
    if (!p) return;
    size_t n = strlen(V2) - strlen(from) + strlen(to) + 1;
    char *j = malloc(n);
    snprintf(j, n, "%.*s%s%s", (int)(p - V2), V2, to, p + strlen(from));
    ice_metadata *md = NULL;
    icd_error err;
    icd_error_clear(&err);
    int rc = ice_metadata_parse(j, strlen(j), "/x/v9.metadata.json", &md, &err);
    CHECK_EQ_INT(rc, code);
    CHECK(md == NULL);
    if (!strstr(err.message, needle))
        fprintf(stderr, "message '%s' lacks '%s'\n", err.message, needle);
    CHECK(strstr(err.message, needle) != NULL);
    CHECK_EQ_STR(err.file, "/x/v9.metadata.json");
    free(j);
}

static void test_missing_fields(void)
{
    expect_error("\"last-sequence-number\":3,", "", ICD_ECORRUPT,
                 "last-sequence-number: required field is missing");
    expect_error("\"location\":\"s3://b/wh/t\",", "", ICD_ECORRUPT,
                 "location: required field is missing");
    expect_error("\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\",", "", ICD_ECORRUPT,
                 "table-uuid: required field is missing");
    expect_error("\"current-schema-id\":1,", "", ICD_ECORRUPT,
                 "current-schema-id: required field is missing");
    expect_error("\"format-version\":2,", "", ICD_ECORRUPT,
                 "format-version: required field is missing");
    expect_error("\"format-version\":2,", "\"format-version\":4,", ICD_EUNSUPPORTED,
                 "format-version 4");
    expect_error("\"snapshot-id\":12,\"parent-snapshot-id\":11,\"sequence-number\":2,"
                 "\"timestamp-ms\":2000,",
                 "\"snapshot-id\":12,\"parent-snapshot-id\":11,\"sequence-number\":2,",
                 ICD_ECORRUPT, "snapshots[1].timestamp-ms: required field is missing");
    expect_error("\"manifest-list\":\"s3://b/wh/t/metadata/snap-11.avro\",", "", ICD_ECORRUPT,
                 "snapshots[0].manifest-list: required field is missing");
    expect_error("{\"id\":4,\"name\":\"lat\",\"required\":false,\"type\":\"double\"}",
                 "{\"id\":4,\"name\":\"lat\",\"required\":false}", ICD_ECORRUPT,
                 "field 'loc.lat': type: required field is missing");
    expect_error("{\"id\":4,\"name\":\"lat\",", "{\"name\":\"lat\",", ICD_ECORRUPT,
                 "field 'loc.lat': id: required field is missing");
    expect_error("\"type\":\"double\"", "\"type\":\"double2\"", ICD_ECORRUPT, "double2");
    expect_error("\"current-snapshot-id\":13", "\"current-snapshot-id\":14", ICD_ECORRUPT,
                 "current-snapshot-id 14");
    expect_error("\"t1\":{\"snapshot-id\":11", "\"t1\":{\"snapshot-id\":77", ICD_ECORRUPT,
                 "ref 't1'");
    expect_error("\"last-column-id\":4,", "\"last-column-id\":\"4\",", ICD_ECORRUPT,
                 "last-column-id: expected a 32-bit integer, found a string");
    expect_error("{\"id\":2,\"name\":\"data\",\"required\":false,\"type\":\"string\"}]},"
                 "{\"type\"",
                 "{\"id\":1,\"name\":\"data\",\"required\":false,\"type\":\"string\"}]},"
                 "{\"type\"",
                 ICD_ECORRUPT, "field id 1");
    expect_error("\"format-version\":2,", "\"format-version\":2,,", ICD_ECORRUPT, "not valid JSON");
    /* a broken name mapping does not prevent loading; asking for it reports the error */
    const char *p = strstr(V2, "\\\"names\\\":[\\\"data\\\"]");
    CHECK(p != NULL);
    char *j = strdup(V2);
    j[p - V2 + 3] = 'x'; /* "names" -> "naxes" */
    ice_metadata *md = load(j);
    if (md) {
        const ice_name_mapping *nm = (const ice_name_mapping *)1;
        icd_error err;
        CHECK(ice_metadata_name_mapping(md, &nm, &err) == ICD_ECORRUPT && nm == NULL);
        CHECK(strstr(err.message, "names") != NULL);
        ice_metadata_free(md);
    }
    free(j);
}

static void test_ids_as_doubles(void)
{
    /* 64-bit ids given as JSON integers are exact; integral doubles are accepted. */
    const char *j =
        "{\"format-version\":1,\"location\":\"/t\",\"last-updated-ms\":1.0,\"last-column-id\":1,"
        "\"schema\":{\"type\":\"struct\",\"fields\":[]},\"partition-spec\":[],"
        "\"current-snapshot-id\":9223372036854775807,\"snapshots\":[{\"snapshot-id\":"
        "9223372036854775807,\"timestamp-ms\":1,\"manifest-list\":\"/t/m\"},{\"snapshot-id\":"
        "4.685659321801244E18,\"timestamp-ms\":2,\"manifest-list\":\"/t/n\"}]}";
    ice_metadata *md = load(j);
    if (!md) return;
    CHECK(ice_metadata_current_snapshot(md)->snapshot_id == INT64_MAX);
    /* the double nearest to 4.685659321801244E18 (Python: int(4.685659321801244E18)) */
    CHECK(ice_metadata_snapshot(md, 4685659321801243648LL) != NULL);
    ice_metadata_free(md);
    const char *bad = "{\"format-version\":1.5}";
    icd_error err;
    CHECK(ice_metadata_parse(bad, strlen(bad), "m", &md, &err) == ICD_ECORRUPT);
}

static void test_gzip(void)
{
    char path[] = "/tmp/icd_meta_XXXXXX.gz.metadata.json";
    int fd = mkstemps(path, (int)strlen(".gz.metadata.json"));
    CHECK(fd >= 0);
    if (fd < 0) return;
    close(fd);
    gzFile gz = gzopen(path, "wb");
    CHECK(gz != NULL);
    CHECK(gzwrite(gz, V2, (unsigned)strlen(V2)) == (int)strlen(V2));
    CHECK(gzclose(gz) == Z_OK);
    icd_fileio *io;
    icd_error err;
    CHECK(icd_fileio_new(&io, &err) == 0);
    ice_metadata *md = NULL;
    int rc = ice_metadata_load(io, path, &md, &err);
    if (rc) fprintf(stderr, "gzip: %s\n", err.message);
    CHECK(rc == 0 && md && ice_metadata_snapshot_count(md) == 3);
    CHECK(md && !strcmp(ice_metadata_file(md), path));
    ice_metadata_free(md);
    /* truncated gzip data is a clear error */
    char *buf;
    size_t len;
    CHECK(icd_fileio_read_small(io, path, 1 << 20, &buf, &len, &err) == 0);
    md = NULL;
    CHECK(ice_metadata_parse(buf, len / 2, path, &md, &err) == ICD_ECORRUPT);
    CHECK(strstr(err.message, "gzip") != NULL);
    free(buf);
    icd_fileio_free(io);
    unlink(path);
}

TEST_MAIN(TEST(test_v2_fields), TEST(test_snapshot_selection), TEST(test_v1_forms),
          TEST(test_no_snapshots), TEST(test_missing_fields), TEST(test_ids_as_doubles),
          TEST(test_gzip))
