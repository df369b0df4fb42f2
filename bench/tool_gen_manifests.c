/*
 * Generates a planning-heavy Iceberg v2 table for bench/bench_plan.sh, written with Apache
 * Avro C (libavro) — an Avro writer independent of icedruid's own reader:
 *
 *   tool_gen_manifests OUTDIR [DATA_FILES [DELETE_FILES [DATA_MANIFESTS [DELETE_MANIFESTS
 *                      [linear]]]]]   (defaults 10000 1000 90 10)
 *
 * OUTDIR/metadata/ gets v1.metadata.json, version-hint.text, one manifest list and the
 * manifests; the table location is OUTDIR itself (no --remap needed). Data and delete files
 * are only named, never written: planning reads metadata only.
 *
 * Layout (schema id long(1), region string(2), day date(3)):
 *   spec 0  unpartitioned (only the global equality deletes use it)
 *   spec 1  identity(region) -> partition field 1000, 100 regions r000..r099 (default)
 *   data manifests 1..M (sequence numbers 1..M): data file k lives in region k % 100 and in
 *     manifest k % M; entries are EXISTING with explicit sequence numbers, except those of
 *     the last data manifest, which are ADDED with null ones (inherited from the list)
 *   delete manifests (sequence numbers M+1..M+D): 45% partition-scoped position deletes
 *     (file_path bounds spanning their partition's directory), 40% file-scoped position
 *     deletes (referenced_data_file, equal file_path bounds), 14% partition equality
 *     deletes, and 1% global equality deletes (spec 0, last delete manifest; at least 1),
 *     all on id (equality_ids [1]); each entry EXISTING with an explicit data sequence
 *     number spread over 1..its manifest's, so every delete applies to only part of the
 *     data. The last delete manifest holds spec-0 entries only.
 * The `linear` layout keeps the number of (data, delete) pairs linear in the table size, as
 *   in a table whose deletes each touch a few files: DATA_FILES / 100 regions (r00000..,
 *   100 data files each), 50% file-scoped position deletes, 40% partition-scoped position
 *   deletes, the rest partition equality deletes and one global equality delete (the
 *   default layout's 100 regions make every partition delete apply to 1% of the table,
 *   so its pairs grow with DATA_FILES x DELETE_FILES: 8.8 M at 100,000 / 10,000). The
 *   global delete has the newest sequence number, so every data file has a delete and
 *   `plan` decides every file from metadata (the data files do not exist).
 * Manifests carry the spec's key/value metadata (schema, schema-id, partition-spec,
 * partition-spec-id, format-version, content): libavro has no API for user metadata, so
 * it is added to the header after libavro wrote the file (header re-encoded, blocks kept).
 *
 * Prints one line: files, manifests, and the number of (data file, delete file) pairs the
 * spec's rules give, counted by construction with a brute-force double loop, for the
 * benchmark to check the plan against.
 */
#include <avro.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NREGIONS_DEFAULT 100
#define SNAPSHOT_ID 7000000000000000001LL
#define ID_FIELD 1
#define FILE_PATH_FIELD 2147483546

/* ---- the spec's Avro schemas (field ids as in "Manifests" / "Manifest Lists") -------- */

#define KV(name, kid, vid, vtype)                                                                  \
    "{\"type\":\"record\",\"name\":\"" name "\",\"fields\":["                                      \
    "{\"name\":\"key\",\"type\":\"int\",\"field-id\":" #kid "},"                                   \
    "{\"name\":\"value\",\"type\":\"" vtype "\",\"field-id\":" #vid "}]}"
#define MAPFIELD(fname, fid, rec)                                                                  \
    "{\"name\":\"" fname "\",\"type\":[\"null\",{\"type\":\"array\",\"items\":" rec                \
    ",\"logicalType\":\"map\"}],\"default\":null,\"field-id\":" #fid "}"

static const char *entry_schema_head =
    "{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
    "{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
    "{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1},"
    "{\"name\":\"sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,"
    "\"field-id\":3},"
    "{\"name\":\"file_sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,"
    "\"field-id\":4},"
    "{\"name\":\"data_file\",\"field-id\":2,\"type\":{\"type\":\"record\",\"name\":\"r2\","
    "\"fields\":["
    "{\"name\":\"content\",\"type\":\"int\",\"field-id\":134},"
    "{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"
    "{\"name\":\"file_format\",\"type\":\"string\",\"field-id\":101},"
    "{\"name\":\"partition\",\"field-id\":102,\"type\":{\"type\":\"record\","
    "\"name\":\"r102\",\"fields\":[";
static const char *partition_field_spec1 =
    "{\"name\":\"region\",\"type\":[\"null\",\"string\"],\"default\":null,"
    "\"field-id\":1000}";
static const char *entry_schema_tail =
    "]}},"
    "{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103},"
    "{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"field-id\":104}," MAPFIELD("column_sizes", 108, KV("k117_v118", 117, 118, "long")) "," MAPFIELD(
        "value_counts", 109,
        KV("k119_v120", 119, 120,
           "long")) "," MAPFIELD("null_value_counts", 110,
                                 KV("k121_v122", 121, 122,
                                    "long")) "," MAPFIELD("nan_value_counts", 137,
                                                          KV("k138_v139", 138, 139,
                                                             "long")) "," MAPFIELD("lower_bounds",
                                                                                   125,
                                                                                   KV("k126_v127",
                                                                                      126, 127,
                                                                                      "bytes")) "," MAPFIELD("upper_bounds",
                                                                                                             128,
                                                                                                             KV("k129_v130",
                                                                                                                129,
                                                                                                                130,
                                                                                                                "bytes")) ","
                                                                                                                          "{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"default\":null,"
                                                                                                                          "\"field-id\":131},"
                                                                                                                          "{\"name\":\"split_offsets\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"long\","
                                                                                                                          "\"element-id\":133}],\"default\":null,\"field-id\":132},"
                                                                                                                          "{\"name\":\"equality_ids\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"int\","
                                                                                                                          "\"element-id\":136}],\"default\":null,\"field-id\":135},"
                                                                                                                          "{\"name\":\"sort_order_id\",\"type\":[\"null\",\"int\"],\"default\":null,"
                                                                                                                          "\"field-id\":140},"
                                                                                                                          "{\"name\":\"referenced_data_file\",\"type\":[\"null\",\"string\"],\"default\":null,"
                                                                                                                          "\"field-id\":143}"
                                                                                                                          "]}}]}";

static const char *list_schema =
    "{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
    "{\"name\":\"manifest_path\",\"type\":\"string\",\"field-id\":500},"
    "{\"name\":\"manifest_length\",\"type\":\"long\",\"field-id\":501},"
    "{\"name\":\"partition_spec_id\",\"type\":\"int\",\"field-id\":502},"
    "{\"name\":\"content\",\"type\":\"int\",\"field-id\":517},"
    "{\"name\":\"sequence_number\",\"type\":\"long\",\"field-id\":515},"
    "{\"name\":\"min_sequence_number\",\"type\":\"long\",\"field-id\":516},"
    "{\"name\":\"added_snapshot_id\",\"type\":\"long\",\"field-id\":503},"
    "{\"name\":\"added_files_count\",\"type\":\"int\",\"field-id\":504},"
    "{\"name\":\"existing_files_count\",\"type\":\"int\",\"field-id\":505},"
    "{\"name\":\"deleted_files_count\",\"type\":\"int\",\"field-id\":506},"
    "{\"name\":\"added_rows_count\",\"type\":\"long\",\"field-id\":512},"
    "{\"name\":\"existing_rows_count\",\"type\":\"long\",\"field-id\":513},"
    "{\"name\":\"deleted_rows_count\",\"type\":\"long\",\"field-id\":514},"
    "{\"name\":\"partitions\",\"type\":[\"null\",{\"type\":\"array\",\"items\":"
    "{\"type\":\"record\",\"name\":\"r508\",\"fields\":["
    "{\"name\":\"contains_null\",\"type\":\"boolean\",\"field-id\":509},"
    "{\"name\":\"contains_nan\",\"type\":[\"null\",\"boolean\"],\"default\":null,"
    "\"field-id\":518},"
    "{\"name\":\"lower_bound\",\"type\":[\"null\",\"bytes\"],\"default\":null,"
    "\"field-id\":510},"
    "{\"name\":\"upper_bound\",\"type\":[\"null\",\"bytes\"],\"default\":null,"
    "\"field-id\":511}]},\"element-id\":508}],\"default\":null,\"field-id\":507},"
    "{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"default\":null,"
    "\"field-id\":519}"
    "]}";

static const char *table_schema_json =
    "{\"type\":\"struct\",\"schema-id\":0,\"fields\":["
    "{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"},"
    "{\"id\":2,\"name\":\"region\",\"required\":false,\"type\":\"string\"},"
    "{\"id\":3,\"name\":\"day\",\"required\":false,\"type\":\"date\"}]}";
static const char *spec0_json = "{\"spec-id\":0,\"fields\":[]}";
static const char *spec1_json =
    "{\"spec-id\":1,\"fields\":[{\"name\":\"region\",\"transform\":\"identity\","
    "\"source-id\":2,\"field-id\":1000}]}";

/* ---- the table model ------------------------------------------------------------------ */

enum kind { POS_PART, POS_FILE, EQ_PART, EQ_GLOBAL };

typedef struct dfile {
    int region;
    int manifest;
    int64_t seq;
} dfile;

typedef struct xfile {
    enum kind kind;
    int region;   /* spec 1 kinds */
    long target;  /* POS_FILE: data file index */
    int manifest; /* index among delete manifests */
    int64_t seq;
} xfile;

static const char *outdir;
static long ndata, ndel;
static int ndm, nxm;
static int nregions = NREGIONS_DEFAULT, rw = 3; /* regions and the width of their number */
static bool linear;                             /* the "linear" layout (see the top) */

static _Noreturn void die(const char *what)
{
    fprintf(stderr, "tool_gen_manifests: %s: %s\n", what, avro_strerror());
    exit(1);
}

static void data_path(char *buf, size_t n, long k, int region)
{
    snprintf(buf, n, "%s/data/region=r%0*d/%05ld-data.parquet", outdir, rw, region, k);
}

static void delete_path(char *buf, size_t n, long k, const xfile *x)
{
    if (x->kind == EQ_GLOBAL)
        snprintf(buf, n, "%s/data/%05ld-eq-deletes.parquet", outdir, k);
    else
        snprintf(buf, n, "%s/data/region=r%0*d/%05ld-%s-deletes.parquet", outdir, rw, x->region, k,
                 x->kind == POS_PART || x->kind == POS_FILE ? "pos" : "eq");
}

/* ---- libavro helpers ------------------------------------------------------------------ */

static void set_null(avro_value_t *rec, const char *name)
{
    avro_value_t f, b;
    if (avro_value_get_by_name(rec, name, &f, NULL) || avro_value_set_branch(&f, 0, &b) ||
        avro_value_set_null(&b))
        die(name);
}

static void set_opt_long(avro_value_t *rec, const char *name, int64_t v)
{
    avro_value_t f, b;
    if (avro_value_get_by_name(rec, name, &f, NULL) || avro_value_set_branch(&f, 1, &b) ||
        avro_value_set_long(&b, v))
        die(name);
}

static void set_long(avro_value_t *rec, const char *name, int64_t v)
{
    avro_value_t f;
    if (avro_value_get_by_name(rec, name, &f, NULL) || avro_value_set_long(&f, v)) die(name);
}

static void set_int(avro_value_t *rec, const char *name, int32_t v)
{
    avro_value_t f;
    if (avro_value_get_by_name(rec, name, &f, NULL) || avro_value_set_int(&f, v)) die(name);
}

static void set_string(avro_value_t *rec, const char *name, const char *s)
{
    avro_value_t f;
    if (avro_value_get_by_name(rec, name, &f, NULL) || avro_value_set_string(&f, s)) die(name);
}

static void set_opt_string(avro_value_t *rec, const char *name, const char *s)
{
    avro_value_t f, b;
    if (avro_value_get_by_name(rec, name, &f, NULL) || avro_value_set_branch(&f, 1, &b) ||
        avro_value_set_string(&b, s))
        die(name);
}

/* Opens the array branch of an optional int-keyed map field (the entry was reset). */
static avro_value_t open_map(avro_value_t *rec, const char *name)
{
    avro_value_t f, arr;
    if (avro_value_get_by_name(rec, name, &f, NULL) || avro_value_set_branch(&f, 1, &arr))
        die(name);
    return arr;
}

static void kv_long(avro_value_t *arr, int32_t key, int64_t v)
{
    avro_value_t e, k, val;
    if (avro_value_append(arr, &e, NULL) || avro_value_get_by_name(&e, "key", &k, NULL) ||
        avro_value_set_int(&k, key) || avro_value_get_by_name(&e, "value", &val, NULL) ||
        avro_value_set_long(&val, v))
        die("map entry");
}

static void kv_bytes(avro_value_t *arr, int32_t key, const void *p, size_t n)
{
    avro_value_t e, k, val;
    if (avro_value_append(arr, &e, NULL) || avro_value_get_by_name(&e, "key", &k, NULL) ||
        avro_value_set_int(&k, key) || avro_value_get_by_name(&e, "value", &val, NULL) ||
        avro_value_set_bytes(&val, (void *)p, n))
        die("map entry");
}

/* Iceberg single-value serialization (Appendix D): long = 8 bytes little-endian. */
static void le64(uint8_t out[8], int64_t v)
{
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

/* ---- adding key/value metadata to a libavro-written header ------------------------------ */

static size_t put_varlong(uint8_t *p, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    size_t n = 0;
    while (z >= 0x80) {
        p[n++] = (uint8_t)(z | 0x80);
        z >>= 7;
    }
    p[n++] = (uint8_t)z;
    return n;
}

static int64_t get_varlong(const uint8_t *d, size_t len, size_t *i)
{
    uint64_t acc = 0;
    for (int shift = 0; shift < 64 && *i < len; shift += 7) {
        uint8_t b = d[(*i)++];
        acc |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return (int64_t)(acc >> 1) ^ -(int64_t)(acc & 1);
    }
    fprintf(stderr, "tool_gen_manifests: bad varint in a header\n");
    exit(1);
}

static void add_metadata(const char *path, const char *const *kv, int npairs)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc((size_t)len);
    if (!d || fread(d, 1, (size_t)len, f) != (size_t)len) {
        perror(path);
        exit(1);
    }
    fclose(f);
    size_t i = 4, entries_start, entries_end;
    /* libavro writes one map block; accept several */
    entries_start = i;
    for (;;) {
        size_t before = i;
        int64_t n = get_varlong(d, (size_t)len, &i);
        if (n == 0) {
            entries_end = before;
            break;
        }
        if (n < 0) {
            n = -n;
            (void)get_varlong(d, (size_t)len, &i);
        }
        for (int64_t k = 0; k < 2 * n; k++) {
            int64_t l = get_varlong(d, (size_t)len, &i);
            i += (size_t)l;
        }
    }
    size_t after_map = i; /* the sync marker follows */
    /* re-encode: one block with all old entries (copied raw, minus block headers) + new */
    size_t extra = 64;
    for (int p = 0; p < 2 * npairs; p++)
        extra += strlen(kv[p]) + 10;
    uint8_t *out = malloc((size_t)len + extra);
    if (!out) {
        perror("malloc");
        exit(1);
    }
    size_t o = 0;
    memcpy(out, d, 4);
    o = 4;
    /* copy the old entries (without their block counts), except the keys being replaced */
    int64_t kept = 0;
    uint8_t *body = malloc((size_t)len + 1);
    size_t bo = 0;
    if (!body) {
        perror("malloc");
        exit(1);
    }
    i = entries_start;
    while (i < entries_end) {
        int64_t n = get_varlong(d, (size_t)len, &i);
        if (n < 0) {
            n = -n;
            (void)get_varlong(d, (size_t)len, &i);
        }
        for (int64_t k = 0; k < n; k++) {
            size_t s = i;
            int64_t kl = get_varlong(d, (size_t)len, &i);
            const char *key = (const char *)d + i;
            i += (size_t)kl;
            int64_t vl = get_varlong(d, (size_t)len, &i);
            i += (size_t)vl;
            bool replaced = false;
            for (int p = 0; p < npairs; p++)
                if (strlen(kv[2 * p]) == (size_t)kl && !memcmp(kv[2 * p], key, (size_t)kl))
                    replaced = true;
            if (!replaced) {
                memcpy(body + bo, d + s, i - s);
                bo += i - s;
                kept++;
            }
        }
    }
    o += put_varlong(out + o, kept + npairs);
    memcpy(out + o, body, bo);
    o += bo;
    free(body);
    for (int p = 0; p < 2 * npairs; p++) {
        size_t l = strlen(kv[p]);
        o += put_varlong(out + o, (int64_t)l);
        memcpy(out + o, kv[p], l);
        o += l;
    }
    o += put_varlong(out + o, 0);
    memcpy(out + o, d + after_map, (size_t)len - after_map);
    o += (size_t)len - after_map;
    f = fopen(path, "wb");
    if (!f || fwrite(out, 1, o, f) != o || fclose(f)) {
        perror(path);
        exit(1);
    }
    free(d);
    free(out);
}

/* ---- writers ---------------------------------------------------------------------------- */

static int64_t file_size(const char *path)
{
    struct stat st;
    if (stat(path, &st)) {
        perror(path);
        exit(1);
    }
    return (int64_t)st.st_size;
}

typedef struct mstats {
    char path[4096];
    int spec;
    int content;
    int64_t seq, min_seq;
    int added, existing;
    int64_t added_rows, existing_rows;
    int lo_region, hi_region; /* spec 1 summaries */
} mstats;

/* libavro stores its own re-serialisation of the schema, which drops the Iceberg
 * attributes (field-id, element-id, logicalType map); finish_manifest puts this text
 * (the schema of the manifest being written) back. The
 * binary encoding does not depend on those attributes. */
static char entry_schema_text[16384];

static avro_schema_t entry_schema(int spec)
{
    char *buf = entry_schema_text;
    snprintf(buf, sizeof entry_schema_text, "%s%s%s", entry_schema_head,
             spec == 1 ? partition_field_spec1 : "", entry_schema_tail);
    avro_schema_t s;
    if (avro_schema_from_json_length(buf, strlen(buf), &s)) die("manifest entry schema");
    return s;
}

static void write_entry_common(avro_value_t *e, int status, int64_t seq, bool inherit)
{
    set_int(e, "status", status);
    if (inherit) {
        set_null(e, "snapshot_id");
        set_null(e, "sequence_number");
        set_null(e, "file_sequence_number");
    } else {
        set_opt_long(e, "snapshot_id", SNAPSHOT_ID);
        set_opt_long(e, "sequence_number", seq);
        set_opt_long(e, "file_sequence_number", seq);
    }
}

static void set_partition(avro_value_t *df, int spec, int region)
{
    if (spec != 1) return;
    avro_value_t part;
    char r[16];
    snprintf(r, sizeof r, "r%0*d", rw, region);
    if (avro_value_get_by_name(df, "partition", &part, NULL)) die("partition");
    set_opt_string(&part, "region", r);
}

static void finish_manifest(const char *path, int spec, int content)
{
    char specid[8];
    snprintf(specid, sizeof specid, "%d", spec);
    const char *kv[] = {"avro.schema",
                        entry_schema_text,
                        "schema",
                        table_schema_json,
                        "schema-id",
                        "0",
                        "partition-spec",
                        spec == 1 ? "[{\"name\":\"region\",\"transform\":"
                                    "\"identity\",\"source-id\":2,"
                                    "\"field-id\":1000}]"
                                  : "[]",
                        "partition-spec-id",
                        specid,
                        "format-version",
                        "2",
                        "content",
                        content ? "deletes" : "data"};
    add_metadata(path, kv, 7);
}

static void write_data_manifest(int m, const dfile *files, mstats *ms)
{
    snprintf(ms->path, sizeof ms->path, "%s/metadata/data-m%03d.avro", outdir, m);
    ms->spec = 1;
    ms->content = 0;
    ms->seq = ms->min_seq = m + 1;
    ms->lo_region = nregions;
    ms->hi_region = -1;
    bool inherit = m == ndm - 1;
    avro_schema_t schema = entry_schema(1);
    avro_value_iface_t *iface = avro_generic_class_from_schema(schema);
    avro_value_t e;
    avro_file_writer_t w;
    if (!iface || avro_generic_value_new(iface, &e)) die("value");
    if (avro_file_writer_create_with_codec(ms->path, schema, &w, "deflate", 64 * 1024))
        die(ms->path);
    for (long k = 0; k < ndata; k++) {
        if (files[k].manifest != m) continue;
        avro_value_reset(&e);
        write_entry_common(&e, inherit ? 1 : 0, files[k].seq, inherit);
        avro_value_t df;
        avro_value_get_by_name(&e, "data_file", &df, NULL);
        char path[4096];
        data_path(path, sizeof path, k, files[k].region);
        set_int(&df, "content", 0);
        set_string(&df, "file_path", path);
        set_string(&df, "file_format", "PARQUET");
        set_partition(&df, 1, files[k].region);
        set_long(&df, "record_count", 100000);
        set_long(&df, "file_size_in_bytes", 4000000 + k);
        avro_value_t mp = open_map(&df, "column_sizes");
        for (int c = 1; c <= 3; c++)
            kv_long(&mp, c, 1000000 + c);
        mp = open_map(&df, "value_counts");
        for (int c = 1; c <= 3; c++)
            kv_long(&mp, c, 100000);
        mp = open_map(&df, "null_value_counts");
        for (int c = 1; c <= 3; c++)
            kv_long(&mp, c, c == 1 ? 0 : 10);
        set_null(&df, "nan_value_counts");
        uint8_t lo[8], hi[8];
        le64(lo, k * 100000);
        le64(hi, k * 100000 + 99999);
        char reg[16];
        snprintf(reg, sizeof reg, "r%0*d", rw, files[k].region);
        mp = open_map(&df, "lower_bounds");
        kv_bytes(&mp, 1, lo, 8);
        kv_bytes(&mp, 2, reg, strlen(reg));
        mp = open_map(&df, "upper_bounds");
        kv_bytes(&mp, 1, hi, 8);
        kv_bytes(&mp, 2, reg, strlen(reg));
        set_null(&df, "key_metadata");
        avro_value_t so, arr, item;
        avro_value_get_by_name(&df, "split_offsets", &so, NULL);
        avro_value_set_branch(&so, 1, &arr);
        avro_value_append(&arr, &item, NULL);
        avro_value_set_long(&item, 4);
        set_null(&df, "equality_ids");
        avro_value_t sid, b;
        avro_value_get_by_name(&df, "sort_order_id", &sid, NULL);
        avro_value_set_branch(&sid, 1, &b);
        avro_value_set_int(&b, 0);
        set_null(&df, "referenced_data_file");
        if (avro_file_writer_append_value(w, &e)) die("append");
        if (inherit) {
            ms->added++;
            ms->added_rows += 100000;
        } else {
            ms->existing++;
            ms->existing_rows += 100000;
        }
        if (files[k].region < ms->lo_region) ms->lo_region = files[k].region;
        if (files[k].region > ms->hi_region) ms->hi_region = files[k].region;
    }
    if (avro_file_writer_close(w)) die("close");
    avro_value_decref(&e);
    avro_value_iface_decref(iface);
    avro_schema_decref(schema);
    finish_manifest(ms->path, 1, 0);
}

static void write_delete_manifest(int m, const xfile *xs, const dfile *files, mstats *ms)
{
    int spec = m == nxm - 1 ? 0 : 1;
    snprintf(ms->path, sizeof ms->path, "%s/metadata/delete-m%03d.avro", outdir, m);
    ms->spec = spec;
    ms->content = 1;
    ms->seq = ndm + m + 1;
    ms->min_seq = INT64_MAX;
    ms->lo_region = nregions;
    ms->hi_region = -1;
    avro_schema_t schema = entry_schema(spec);
    avro_value_iface_t *iface = avro_generic_class_from_schema(schema);
    avro_value_t e;
    avro_file_writer_t w;
    if (!iface || avro_generic_value_new(iface, &e)) die("value");
    if (avro_file_writer_create_with_codec(ms->path, schema, &w, "deflate", 64 * 1024))
        die(ms->path);
    for (long k = 0; k < ndel; k++) {
        const xfile *x = &xs[k];
        if (x->manifest != m) continue;
        avro_value_reset(&e);
        write_entry_common(&e, 0, x->seq, false);
        avro_value_t df;
        avro_value_get_by_name(&e, "data_file", &df, NULL);
        char path[4096], target[4096];
        delete_path(path, sizeof path, k, x);
        bool is_pos = x->kind == POS_PART || x->kind == POS_FILE;
        set_int(&df, "content", is_pos ? 1 : 2);
        set_string(&df, "file_path", path);
        set_string(&df, "file_format", "PARQUET");
        set_partition(&df, spec, x->region);
        set_long(&df, "record_count", 50);
        set_long(&df, "file_size_in_bytes", 2000 + k);
        set_null(&df, "column_sizes");
        avro_value_t mp = open_map(&df, "value_counts");
        kv_long(&mp, is_pos ? FILE_PATH_FIELD : ID_FIELD, 50);
        set_null(&df, "null_value_counts");
        set_null(&df, "nan_value_counts");
        if (x->kind == POS_FILE) {
            data_path(target, sizeof target, x->target, files[x->target].region);
            mp = open_map(&df, "lower_bounds");
            kv_bytes(&mp, FILE_PATH_FIELD, target, strlen(target));
            mp = open_map(&df, "upper_bounds");
            kv_bytes(&mp, FILE_PATH_FIELD, target, strlen(target));
        } else if (x->kind == POS_PART) {
            /* the first and last data file path of the partition directory */
            char lo[4096], hi[4096];
            snprintf(lo, sizeof lo, "%s/data/region=r%0*d/", outdir, rw, x->region);
            snprintf(hi, sizeof hi, "%s/data/region=r%0*d/~", outdir, rw, x->region);
            mp = open_map(&df, "lower_bounds");
            kv_bytes(&mp, FILE_PATH_FIELD, lo, strlen(lo));
            mp = open_map(&df, "upper_bounds");
            kv_bytes(&mp, FILE_PATH_FIELD, hi, strlen(hi));
        } else {
            set_null(&df, "lower_bounds");
            set_null(&df, "upper_bounds");
        }
        set_null(&df, "key_metadata");
        set_null(&df, "split_offsets");
        avro_value_t eq, arr, item;
        avro_value_get_by_name(&df, "equality_ids", &eq, NULL);
        if (is_pos) {
            avro_value_set_branch(&eq, 0, &arr);
            avro_value_set_null(&arr);
        } else {
            avro_value_set_branch(&eq, 1, &arr);
            avro_value_append(&arr, &item, NULL);
            avro_value_set_int(&item, ID_FIELD);
        }
        set_null(&df, "sort_order_id");
        if (x->kind == POS_FILE)
            set_opt_string(&df, "referenced_data_file", target);
        else
            set_null(&df, "referenced_data_file");
        if (avro_file_writer_append_value(w, &e)) die("append");
        ms->existing++;
        ms->existing_rows += 50;
        if (x->seq < ms->min_seq) ms->min_seq = x->seq;
        if (spec == 1 && x->region < ms->lo_region) ms->lo_region = x->region;
        if (spec == 1 && x->region > ms->hi_region) ms->hi_region = x->region;
    }
    if (avro_file_writer_close(w)) die("close");
    avro_value_decref(&e);
    avro_value_iface_decref(iface);
    avro_schema_decref(schema);
    if (ms->min_seq == INT64_MAX) ms->min_seq = ms->seq;
    finish_manifest(ms->path, spec, 1);
}

static void write_manifest_list(const char *path, const mstats *ms, int n)
{
    avro_schema_t schema;
    if (avro_schema_from_json_length(list_schema, strlen(list_schema), &schema))
        die("manifest list schema");
    avro_value_iface_t *iface = avro_generic_class_from_schema(schema);
    avro_value_t e;
    avro_file_writer_t w;
    if (!iface || avro_generic_value_new(iface, &e)) die("value");
    if (avro_file_writer_create_with_codec(path, schema, &w, "deflate", 64 * 1024)) die(path);
    for (int i = 0; i < n; i++) {
        avro_value_reset(&e);
        set_string(&e, "manifest_path", ms[i].path);
        set_long(&e, "manifest_length", file_size(ms[i].path));
        set_int(&e, "partition_spec_id", ms[i].spec);
        set_int(&e, "content", ms[i].content);
        set_long(&e, "sequence_number", ms[i].seq);
        set_long(&e, "min_sequence_number", ms[i].min_seq);
        set_long(&e, "added_snapshot_id", SNAPSHOT_ID);
        set_int(&e, "added_files_count", ms[i].added);
        set_int(&e, "existing_files_count", ms[i].existing);
        set_int(&e, "deleted_files_count", 0);
        set_long(&e, "added_rows_count", ms[i].added_rows);
        set_long(&e, "existing_rows_count", ms[i].existing_rows);
        set_long(&e, "deleted_rows_count", 0);
        avro_value_t f, arr, s, b;
        avro_value_get_by_name(&e, "partitions", &f, NULL);
        avro_value_set_branch(&f, 1, &arr);
        if (ms[i].spec == 1 && ms[i].hi_region >= 0) {
            char lo[16], hi[16];
            snprintf(lo, sizeof lo, "r%0*d", rw, ms[i].lo_region);
            snprintf(hi, sizeof hi, "r%0*d", rw, ms[i].hi_region);
            avro_value_append(&arr, &s, NULL);
            avro_value_get_by_name(&s, "contains_null", &b, NULL);
            avro_value_set_boolean(&b, 0);
            set_null(&s, "contains_nan");
            avro_value_t fb, bb;
            avro_value_get_by_name(&s, "lower_bound", &fb, NULL);
            avro_value_set_branch(&fb, 1, &bb);
            avro_value_set_bytes(&bb, lo, strlen(lo));
            avro_value_get_by_name(&s, "upper_bound", &fb, NULL);
            avro_value_set_branch(&fb, 1, &bb);
            avro_value_set_bytes(&bb, hi, strlen(hi));
        }
        set_null(&e, "key_metadata");
        if (avro_file_writer_append_value(w, &e)) die("append");
    }
    if (avro_file_writer_close(w)) die("close");
    avro_value_decref(&e);
    avro_value_iface_decref(iface);
    avro_schema_decref(schema);
    char seq[32];
    snprintf(seq, sizeof seq, "%d", ndm + nxm);
    const char *kv[] = {"avro.schema",        list_schema, "snapshot-id",     "7000000000000000001",
                        "parent-snapshot-id", "null",      "sequence-number", seq,
                        "format-version",     "2"};
    add_metadata(path, kv, 5);
}

static void write_metadata_json(const char *mlist)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/metadata/v1.metadata.json", outdir);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fprintf(f,
            "{\"format-version\":2,\"table-uuid\":\"6a1f2c3d-0000-4000-8000-00000000be9c\","
            "\"location\":\"%s\",\"last-sequence-number\":%d,\"last-updated-ms\":1700000000000,"
            "\"last-column-id\":3,\"current-schema-id\":0,\"schemas\":[%s],"
            "\"default-spec-id\":1,\"partition-specs\":[%s,%s],\"last-partition-id\":1000,"
            "\"default-sort-order-id\":0,\"sort-orders\":[{\"order-id\":0,\"fields\":[]}],"
            "\"properties\":{},\"current-snapshot-id\":%lld,"
            "\"refs\":{\"main\":{\"snapshot-id\":%lld,\"type\":\"branch\"}},"
            "\"snapshots\":[{\"snapshot-id\":%lld,\"sequence-number\":%d,"
            "\"timestamp-ms\":1700000000000,\"summary\":{\"operation\":\"overwrite\"},"
            "\"manifest-list\":\"%s\",\"schema-id\":0}],"
            "\"snapshot-log\":[{\"timestamp-ms\":1700000000000,\"snapshot-id\":%lld}],"
            "\"metadata-log\":[]}\n",
            outdir, ndm + nxm, table_schema_json, spec0_json, spec1_json, SNAPSHOT_ID, SNAPSHOT_ID,
            SNAPSHOT_ID, ndm + nxm, mlist, SNAPSHOT_ID);
    if (fclose(f)) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof path, "%s/metadata/version-hint.text", outdir);
    f = fopen(path, "w");
    if (!f || fputs("1", f) < 0 || fclose(f)) {
        perror(path);
        exit(1);
    }
}

/* (data, delete) pairs by the spec's rules, counted over the model: every data file of the
 * delete's partition (data file k lives in region k % nregions), of the whole table for
 * global deletes, or the one referenced file. */
static bool applies(const xfile *x, const dfile *d)
{
    return x->kind == POS_PART || x->kind == POS_FILE ? d->seq <= x->seq : d->seq < x->seq;
}

static long long count_pairs(const dfile *files, const xfile *xs)
{
    long long pairs = 0;
    for (long k = 0; k < ndel; k++) {
        const xfile *x = &xs[k];
        switch (x->kind) {
        case POS_FILE:
            pairs += applies(x, &files[x->target]);
            break;
        case POS_PART:
        case EQ_PART:
            for (long d = x->region; d < ndata; d += nregions)
                pairs += applies(x, &files[d]);
            break;
        case EQ_GLOBAL:
            for (long d = 0; d < ndata; d++)
                pairs += applies(x, &files[d]);
            break;
        }
    }
    return pairs;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: tool_gen_manifests OUTDIR [DATA_FILES [DELETE_FILES "
                        "[DATA_MANIFESTS [DELETE_MANIFESTS [linear]]]]]\n");
        return 2;
    }
    outdir = argv[1];
    ndata = argc > 2 ? atol(argv[2]) : 10000;
    ndel = argc > 3 ? atol(argv[3]) : 1000;
    ndm = argc > 4 ? atoi(argv[4]) : 90;
    nxm = argc > 5 ? atoi(argv[5]) : 10;
    linear = argc > 6 && !strcmp(argv[6], "linear");
    if (argc > 6 && !linear) {
        fprintf(stderr, "tool_gen_manifests: unknown layout '%s' (linear)\n", argv[6]);
        return 2;
    }
    if (linear && ndata / 100 > nregions)
        nregions = (int)(ndata / 100 < 99999 ? ndata / 100 : 99999);
    if (nregions > 1000) rw = 5;
    if (outdir[0] != '/' || ndata < NREGIONS_DEFAULT || ndel < 10 || ndm < 1 || nxm < 2) {
        fprintf(stderr,
                "tool_gen_manifests: OUTDIR must be absolute; at least %d data "
                "files, 10 deletes, 1 data and 2 delete manifests\n",
                NREGIONS_DEFAULT);
        return 2;
    }
    char mdir[4096];
    snprintf(mdir, sizeof mdir, "%s/metadata", outdir);
    mkdir(outdir, 0755);
    if (mkdir(mdir, 0755) && errno != EEXIST) {
        perror(mdir);
        return 1;
    }

    dfile *files = calloc((size_t)ndata, sizeof *files);
    xfile *xs = calloc((size_t)ndel, sizeof *xs);
    mstats *ms = calloc((size_t)(ndm + nxm), sizeof *ms);
    if (!files || !xs || !ms) return 1;
    for (long k = 0; k < ndata; k++) {
        files[k].region = (int)(k % nregions);
        files[k].manifest = (int)(k % ndm);
        files[k].seq = files[k].manifest + 1;
    }
    long nglobal = ndel / 100 > 0 ? ndel / 100 : 1;
    long npart = ndel * 45 / 100, nfile = ndel * 40 / 100;
    if (linear) { /* one global delete; the others reach one file or one small partition */
        nglobal = 1;
        npart = ndel * 40 / 100;
        nfile = ndel * 50 / 100;
    }
    uint64_t rnd = 0x9e3779b97f4a7c15ull;
    for (long k = 0; k < ndel; k++) {
        xfile *x = &xs[k];
        rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t r = (uint32_t)(rnd >> 33);
        if (k < nglobal) {
            x->kind = EQ_GLOBAL;
            x->manifest = nxm - 1;
        } else {
            long j = k - nglobal;
            x->kind = j < npart ? POS_PART : j < npart + nfile ? POS_FILE : EQ_PART;
            x->manifest = (int)(j % (nxm - 1));
        }
        x->region = (int)(r % (uint32_t)nregions);
        x->target = -1;
        if (x->kind == POS_FILE) {
            x->target = (long)(r % (uint32_t)ndata);
            x->region = files[x->target].region;
        }
        int64_t mseq = ndm + x->manifest + 1; /* the delete manifest's sequence number */
        x->seq = 1 + (int64_t)((r >> 8) % (uint32_t)mseq);
        if (linear && x->kind == EQ_GLOBAL) x->seq = mseq; /* applies to every data file */
    }
    for (int m = 0; m < ndm; m++)
        write_data_manifest(m, files, &ms[m]);
    for (int m = 0; m < nxm; m++)
        write_delete_manifest(m, xs, files, &ms[ndm + m]);
    char mlist[4096];
    snprintf(mlist, sizeof mlist, "%s/metadata/snap-%lld-1-list.avro", outdir, SNAPSHOT_ID);
    write_manifest_list(mlist, ms, ndm + nxm);
    write_metadata_json(mlist);
    long long pairs = count_pairs(files, xs);
    long counts[4] = {0};
    for (long k = 0; k < ndel; k++)
        counts[xs[k].kind]++;
    printf("data_files=%ld delete_files=%ld pos_partition=%ld pos_file=%ld eq_partition=%ld "
           "eq_global=%ld manifests=%d pairs=%lld\n",
           ndata, ndel, counts[POS_PART], counts[POS_FILE], counts[EQ_PART], counts[EQ_GLOBAL],
           ndm + nxm, pairs);
    free(files);
    free(xs);
    free(ms);
    return 0;
}
