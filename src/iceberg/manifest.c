/*
 * Manifest lists and manifests (see manifest.h): Avro records -> ice_manifest_file and
 * ice_content_file, with the spec's inheritance rules ("Sequence Number Inheritance",
 * "Snapshot ID Inheritance", "First Row ID Inheritance") and v1 defaults (Appendix E):
 *
 *   - a null data/file sequence number on an ADDED entry takes the manifest's sequence
 *     number; a v1 manifest (no such fields, manifest sequence number 0) gives 0; an
 *     EXISTING or DELETED entry must carry its numbers;
 *   - a null snapshot id takes the manifest's added_snapshot_id;
 *   - a null first_row_id of a data file takes the manifest's first_row_id plus the
 *     record counts of the earlier such files in the manifest.
 *
 * Everything returned is copied into the caller's arena: Avro values point into block
 * buffers that the container reader reuses.
 */
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/bits.h"
#include "base/hash.h"
#include "formats/avro/container.h"
#include "iceberg/deletes/eq_key.h"
#include "iceberg/manifest.h"
#include "iceberg/manifest_fast.h"
#include "iceberg/partition.h"

/* ---- small Avro accessors ---------------------------------------------------------- */

/* The field indexes of a manifest's records, found by name once per (record schema, name)
 * instead of once per entry: every entry of a manifest has the same writer schema, and a
 * name scan per field per entry was a sixth of planning a million files. Keyed by the
 * pointers (the names are literals): a miss only costs the scan. One per manifest read. */
typedef struct field_memo {
    struct {
        const icd_avro_schema *schema;
        const char *name;
        int idx;
    } slot[256];
} field_memo;

static int field_index(field_memo *m, const icd_avro_schema *s, const char *name)
{
    if (!m) return icd_avro_schema_field_index(s, name);
    uint64_t h = ((uint64_t)(uintptr_t)name ^ ((uint64_t)(uintptr_t)s << 1)) * 0x9e3779b97f4a7c15u;
    size_t i = (size_t)(h >> 56);
    if (m->slot[i].schema != s || m->slot[i].name != name) {
        m->slot[i].schema = s;
        m->slot[i].name = name;
        m->slot[i].idx = icd_avro_schema_field_index(s, name);
    }
    return m->slot[i].idx;
}

/* Field `name` of a record as it is (a null union value too); NULL when absent. */
static const icd_avro_value *field_raw(field_memo *m, const icd_avro_value *rec, const char *name)
{
    if (!rec || rec->type != AVRO_RECORD) return NULL;
    return icd_avro_value_field_at(rec, field_index(m, rec->schema, name));
}

/* Field `name`, NULL when absent or null. */
static const icd_avro_value *field(field_memo *m, const icd_avro_value *rec, const char *name)
{
    const icd_avro_value *v = field_raw(m, rec, name);
    return icd_avro_value_is_null(v) ? NULL : v;
}

static bool get_long(field_memo *m, const icd_avro_value *rec, const char *name, int64_t *out)
{
    const icd_avro_value *v = field(m, rec, name);
    if (!v || (v->type != AVRO_INT && v->type != AVRO_LONG)) return false;
    *out = v->u.i64;
    return true;
}

static int64_t long_or(field_memo *m, const icd_avro_value *rec, const char *name, int64_t dflt)
{
    int64_t v;
    return get_long(m, rec, name, &v) ? v : dflt;
}

static char *copy_str(icd_arena *a, const icd_avro_value *v)
{
    if (!v || (v->type != AVRO_STRING && v->type != AVRO_BYTES)) return NULL;
    return icd_arena_strndup(a, (const char *)v->u.bytes.ptr, v->u.bytes.len);
}

static const uint8_t *copy_bytes(icd_arena *a, const icd_avro_value *v, uint32_t *len)
{
    if (!v || (v->type != AVRO_BYTES && v->type != AVRO_FIXED && v->type != AVRO_STRING) ||
        v->u.bytes.len > UINT32_MAX)
        return NULL;
    uint8_t *p = icd_arena_alloc(a, v->u.bytes.len ? v->u.bytes.len : 1);
    if (!p) return NULL;
    if (v->u.bytes.len) memcpy(p, v->u.bytes.ptr, v->u.bytes.len);
    *len = (uint32_t)v->u.bytes.len;
    return p;
}

/* ---- manifest lists ------------------------------------------------------------------ */

static int read_summaries(const icd_avro_value *parts, icd_arena *a, ice_manifest_file *mf,
                          const char *path, icd_error *err)
{
    if (!parts || parts->type != AVRO_ARRAY) return 0;
    size_t n = parts->u.list.count;
    ice_field_summary *s = icd_arena_calloc(a, (n ? n : 1) * sizeof *s);
    if (!s) return icd_fail_nomem(err);
    for (size_t i = 0; i < n; i++) {
        const icd_avro_value *fs = &parts->u.list.items[i];
        if (fs->type != AVRO_RECORD)
            return icd_fail(err, ICD_ECORRUPT, path, -1,
                            "manifest list: partition summary is not a record");
        const icd_avro_value *cn = field(NULL, fs, "contains_null"),
                             *cnan = field(NULL, fs, "contains_nan");
        s[i].contains_null = cn && cn->type == AVRO_BOOLEAN ? cn->u.boolean : -1;
        s[i].contains_nan = cnan && cnan->type == AVRO_BOOLEAN ? cnan->u.boolean : -1;
        const icd_avro_value *lo = field(NULL, fs, "lower_bound"),
                             *hi = field(NULL, fs, "upper_bound");
        if (lo && (s[i].lower = copy_bytes(a, lo, &s[i].lower_len)) != NULL) s[i].has_lower = true;
        if (hi && (s[i].upper = copy_bytes(a, hi, &s[i].upper_len)) != NULL) s[i].has_upper = true;
    }
    mf->partitions = s;
    mf->npartitions = (int32_t)n;
    mf->has_partitions = true;
    return 0;
}

static int list_entry(const icd_avro_value *rec, icd_arena *a, const char *path,
                      ice_manifest_file *mf, icd_error *err)
{
    memset(mf, 0, sizeof *mf);
    mf->path = copy_str(a, field(NULL, rec, "manifest_path"));
    if (!mf->path)
        return icd_fail(err, ICD_ECORRUPT, path, -1, "manifest list entry has no manifest_path");
    mf->length = long_or(NULL, rec, "manifest_length", -1);
    int64_t spec;
    if (!get_long(NULL, rec, "partition_spec_id", &spec))
        return icd_fail(err, ICD_ECORRUPT, path, -1,
                        "manifest list entry for %s has no partition_spec_id", mf->path);
    mf->spec_id = (int32_t)spec;
    int64_t content = long_or(NULL, rec, "content", 0);
    if (content != 0 && content != 1)
        return icd_fail(err, ICD_ECORRUPT, path, -1, "manifest %s has unknown content %lld",
                        mf->path, (long long)content);
    mf->is_delete_manifest = content == 1;
    mf->content = content == 1 ? ICE_CONTENT_POSITION_DELETES : ICE_CONTENT_DATA;
    mf->sequence_number = long_or(NULL, rec, "sequence_number", 0);
    mf->min_sequence_number = long_or(NULL, rec, "min_sequence_number", 0);
    mf->added_snapshot_id = long_or(NULL, rec, "added_snapshot_id", -1);
    /* v2 names first, v1 names second */
    mf->added_files =
        long_or(NULL, rec, "added_files_count", long_or(NULL, rec, "added_data_files_count", -1));
    mf->existing_files = long_or(NULL, rec, "existing_files_count",
                                 long_or(NULL, rec, "existing_data_files_count", -1));
    mf->deleted_files = long_or(NULL, rec, "deleted_files_count",
                                long_or(NULL, rec, "deleted_data_files_count", -1));
    mf->added_rows = long_or(NULL, rec, "added_rows_count", -1);
    mf->existing_rows = long_or(NULL, rec, "existing_rows_count", -1);
    mf->deleted_rows = long_or(NULL, rec, "deleted_rows_count", -1);
    mf->first_row_id = long_or(NULL, rec, "first_row_id", -1);
    return read_summaries(field(NULL, rec, "partitions"), a, mf, path, err);
}

/* v1 snapshots may list manifest paths inline: spec id from each manifest's header. */
static int inline_entry(icd_fileio *io, const ice_metadata *md, const ice_snapshot *snap,
                        const char *mpath, icd_arena *a, ice_manifest_file *mf, icd_error *err)
{
    memset(mf, 0, sizeof *mf);
    mf->path = icd_arena_strdup(a, mpath);
    if (!mf->path) return icd_fail_nomem(err);
    mf->length = -1;
    mf->added_snapshot_id = snap->snapshot_id;
    mf->added_files = mf->existing_files = mf->deleted_files = -1;
    mf->added_rows = mf->existing_rows = mf->deleted_rows = -1;
    mf->first_row_id = -1;
    mf->spec_id = ice_metadata_default_spec(md)->spec_id;
    icd_avro_reader *r;
    ICD_TRY(icd_avro_reader_open(io, mpath, &r, err));
    const icd_avro_meta *m = icd_avro_reader_meta(r, "partition-spec-id");
    if (m) mf->spec_id = (int32_t)strtol(m->value, NULL, 10);
    icd_avro_reader_free(r);
    return 0;
}

int ice_manifest_list_read(icd_fileio *io, const ice_metadata *md, const ice_snapshot *snap,
                           icd_arena *arena, ice_manifest_file **out, size_t *n, icd_error *err)
{
    *out = NULL;
    *n = 0;
    if (!snap->manifest_list) {
        ice_manifest_file *v = icd_arena_calloc(arena, (snap->n_manifests + 1) * sizeof *v);
        if (!v) return icd_fail_nomem(err);
        for (size_t i = 0; i < snap->n_manifests; i++)
            ICD_TRY(inline_entry(io, md, snap, snap->manifests[i], arena, &v[i], err));
        *out = v;
        *n = snap->n_manifests;
        return 0;
    }
    const char *path = snap->manifest_list;
    icd_avro_reader *r;
    ICD_TRY(icd_avro_reader_open(io, path, &r, err));
    int rc = ice_manifest_list_read_from(r, path, arena, out, n, err);
    icd_avro_reader_free(r);
    return rc;
}

int ice_manifest_list_read_from(icd_avro_reader *r, const char *path, icd_arena *arena,
                                ice_manifest_file **out, size_t *n, icd_error *err)
{
    *out = NULL;
    *n = 0;
    icd_arena tmp = ICD_ARENA_INIT;
    ice_manifest_file *v = NULL;
    size_t count = 0, cap = 0;
    int rc = 0;
    for (;;) {
        icd_avro_value rec;
        bool eof;
        if ((rc = icd_avro_reader_next(r, &tmp, &rec, &eof, err)) || eof) break;
        if (rec.type != AVRO_RECORD) {
            rc = icd_fail(err, ICD_ECORRUPT, path, -1, "manifest list records are not records");
            break;
        }
        if (count == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            ice_manifest_file *nv = icd_arena_alloc(arena, ncap * sizeof *nv);
            if (!nv) {
                rc = icd_fail_nomem(err);
                break;
            }
            if (count) memcpy(nv, v, count * sizeof *nv);
            v = nv;
            cap = ncap;
        }
        if ((rc = list_entry(&rec, arena, path, &v[count], err))) break;
        count++;
        icd_arena_reset(&tmp);
    }
    icd_arena_free(&tmp);
    if (rc) {
        icd_error_set_file(err, path);
        return rc;
    }
    *out = v;
    *n = count;
    return 0;
}

/* ---- partition tuples ---------------------------------------------------------------- */

static ice_type_kind partition_kind(const icd_avro_schema *s)
{
    return ice_avro_partition_kind(s);
}

/* The non-null branch of a ["null", T] union, or the schema itself. */
static const icd_avro_schema *unnull(const icd_avro_schema *s)
{
    if (s->type != AVRO_UNION) return s;
    for (size_t i = 0; i < s->nbranches; i++)
        if (s->branches[i]->type != AVRO_NULL) return s->branches[i];
    return s;
}

static int to_literal(const icd_avro_value *v, const icd_avro_schema *declared, icd_arena *a,
                      ice_literal *out, const char *path, icd_error *err)
{
    const icd_avro_schema *s = unnull(declared);
    ice_type_kind k = partition_kind(s);
    if (icd_avro_value_is_null(v)) {
        *out = ice_lit_null(k);
        return 0;
    }
    s = v->schema ? v->schema : s;
    k = partition_kind(s);
    switch (v->type) {
    case AVRO_BOOLEAN:
        *out = ice_lit_bool(v->u.boolean);
        return 0;
    case AVRO_INT:
        *out = ice_lit_i32(k, (int32_t)v->u.i64);
        return 0;
    case AVRO_LONG:
        *out = ice_lit_i64(k, s->logical == AVRO_LT_TIMESTAMP_MILLIS
                                  ? (int64_t)((uint64_t)v->u.i64 * 1000u) /* (wraps, no UB) */
                                  : v->u.i64);
        return 0;
    case AVRO_FLOAT:
        *out = ice_lit_float(v->u.f32);
        return 0;
    case AVRO_DOUBLE:
        *out = ice_lit_double(v->u.f64);
        return 0;
    case AVRO_STRING:
    case AVRO_BYTES:
    case AVRO_FIXED: {
        uint32_t len = 0;
        const uint8_t *p = copy_bytes(a, v, &len);
        if (!p) return icd_fail_nomem(err);
        *out = ice_lit_bytes(k, p, len);
        if (k == ICE_T_DECIMAL) out->scale = s->scale;
        return 0;
    }
    default:
        return icd_fail(err, ICD_EUNSUPPORTED, path, -1,
                        "partition value of Avro type %s is not supported",
                        icd_avro_type_name(v->type));
    }
}

/* One distinct partition tuple of a manifest (its typed values and canonical key). */
typedef struct part_copy {
    const ice_literal *vals;
    const uint8_t *key;
} part_copy;

/* Reads the partition tuple. Files of one partition share one copy of its values and key:
 * the tuple is decoded into `scratch` first and kept in `a` only the first time its key is
 * seen in the manifest (`seen`: key -> part_copy; NULL = no sharing). */
static int read_partition(const icd_avro_value *pv, const ice_partition_spec *spec, icd_arena *a,
                          icd_arena *scratch, icd_map *seen, icd_buf *key, ice_content_file *f,
                          const char *path, icd_error *err)
{
    size_t nf = spec ? spec->nfields : 0;
    f->npartition = (int32_t)nf;
    f->partition = NULL;
    icd_buf_clear(key);
    if (nf == 0) {
        f->partition_key = (const uint8_t *)"";
        f->partition_key_len = 0;
        return 0;
    }
    if (!pv || pv->type != AVRO_RECORD)
        return icd_fail(err, ICD_ECORRUPT, path, -1,
                        "entry for %s has no partition record but spec %d has %zu fields", f->path,
                        (int)spec->spec_id, nf);
    const icd_avro_schema *rs = pv->schema;
    icd_arena *va = seen ? scratch : a;
    ice_literal *vals = icd_arena_calloc(va, nf * sizeof *vals);
    if (!vals) return icd_fail_nomem(err);
    for (size_t i = 0; i < nf; i++) {
        int idx = icd_avro_schema_field_index_by_id(rs, spec->fields[i].field_id);
        if (idx < 0 && i < rs->nfields && !rs->fields[i].has_field_id)
            idx = (int)i; /* old writers: positional */
        if (idx < 0)
            return icd_fail(err, ICD_ECORRUPT, path, -1,
                            "partition record of %s lacks partition field %d (%s)", f->path,
                            (int)spec->fields[i].field_id, spec->fields[i].name);
        ICD_TRY(to_literal(icd_avro_value_field_at(pv, idx), rs->fields[idx].type, va, &vals[i],
                           path, err));
        ice_key_put_literal(key, &vals[i]);
    }
    if (!icd_buf_ok(key)) return icd_fail_nomem(err);
    if (seen) {
        uint64_t h = icd_hash_bytes(key->data, key->len), *slot;
        bool fresh;
        ICD_TRY(icd_map_upsert(seen, key->data, key->len, h, &slot, &fresh, err));
        if (!fresh) {
            const part_copy *pc = icd_map_to_ptr(*slot);
            f->partition = pc->vals;
            f->partition_key = pc->key;
            f->partition_key_len = (uint32_t)key->len;
            return 0;
        }
        /* first file of this partition: decode the values again into the kept arena */
        part_copy *pc = icd_arena_alloc(a, sizeof *pc);
        if (!pc) return icd_fail_nomem(err);
        *slot = icd_map_from_ptr(pc);
        icd_buf_clear(key);
        ICD_TRY(read_partition(pv, spec, a, NULL, NULL, key, f, path, err));
        pc->vals = f->partition;
        pc->key = f->partition_key;
        return 0;
    }
    uint8_t *k = icd_arena_alloc(a, key->len ? key->len : 1);
    if (!k) return icd_fail_nomem(err);
    memcpy(k, key->data, key->len);
    f->partition = vals;
    f->partition_key = k;
    f->partition_key_len = (uint32_t)key->len;
    return 0;
}

/* ---- column statistics --------------------------------------------------------------- */

/* Int-keyed maps are arrays of {key, value} records in Iceberg's Avro (or Avro maps with
 * decimal string keys from some writers). Calls fn(ctx, id, value) for each pair. */
typedef int (*kv_fn)(void *ctx, int32_t id, const icd_avro_value *v, icd_error *err);

static int each_kv(field_memo *fm, const icd_avro_value *m, kv_fn fn, void *ctx, icd_error *err)
{
    if (!m) return 0;
    if (m->type == AVRO_ARRAY) {
        for (size_t i = 0; i < m->u.list.count; i++) {
            const icd_avro_value *kv = &m->u.list.items[i];
            const icd_avro_value *k = field_raw(fm, kv, "key"), *v = field_raw(fm, kv, "value");
            if (kv->type != AVRO_RECORD || !k || (k->type != AVRO_INT && k->type != AVRO_LONG))
                continue;
            ICD_TRY(fn(ctx, (int32_t)k->u.i64, v, err));
        }
    } else if (m->type == AVRO_MAP) {
        for (size_t i = 0; i < m->u.map.count; i++) {
            char tmp[16];
            size_t n = m->u.map.keys[i].len < 15 ? m->u.map.keys[i].len : 15;
            memcpy(tmp, m->u.map.keys[i].ptr, n);
            tmp[n] = '\0';
            ICD_TRY(fn(ctx, (int32_t)strtol(tmp, NULL, 10), &m->u.map.values[i], err));
        }
    }
    return 0;
}

typedef struct stats_acc {
    ice_col_stats *v;
    size_t n, cap;
    icd_arena *a;
    int which; /* 0 value counts, 1 null counts, 2 nan counts, 3 lower, 4 upper */
    const ice_content_file *only; /* keep only the columns keep_bounds() keeps (NULL: all) */
} stats_acc;

static bool keep_bounds(const ice_content_file *f, int32_t id);

static ice_col_stats *stats_slot(stats_acc *s, int32_t id)
{
    for (size_t i = 0; i < s->n; i++) /* few columns: linear is fine; sorted later */
        if (s->v[i].field_id == id) return &s->v[i];
    if (ICD_ARRAY_RESERVE(s->v, s->cap, s->n + 1, 16)) return NULL;
    ice_col_stats *c = &s->v[s->n++];
    memset(c, 0, sizeof *c);
    c->field_id = id;
    c->value_count = c->null_count = c->nan_count = -1;
    return c;
}

static int stats_add(void *ctx, int32_t id, const icd_avro_value *v, icd_error *err)
{
    stats_acc *s = ctx;
    if (s->only && !keep_bounds(s->only, id)) return 0; /* never copied into the arena */
    ice_col_stats *c = stats_slot(s, id);
    if (!c) return icd_fail_nomem(err);
    if (icd_avro_value_is_null(v)) return 0;
    switch (s->which) {
    case 0:
        c->value_count = v->u.i64;
        break;
    case 1:
        c->null_count = v->u.i64;
        break;
    case 2:
        c->nan_count = v->u.i64;
        break;
    case 3:
        if ((c->lower = copy_bytes(s->a, v, &c->lower_len)) == NULL) return icd_fail_nomem(err);
        c->has_lower = true;
        break;
    default:
        if ((c->upper = copy_bytes(s->a, v, &c->upper_len)) == NULL) return icd_fail_nomem(err);
        c->has_upper = true;
    }
    return 0;
}

static int cmp_stats(const void *a, const void *b)
{
    int32_t x = ((const ice_col_stats *)a)->field_id, y = ((const ice_col_stats *)b)->field_id;
    return x < y ? -1 : x > y;
}

static bool keep_bounds(const ice_content_file *f, int32_t id)
{
    if (f->content == ICE_CONTENT_POSITION_DELETES)
        return id == ICE_FIELD_DELETE_FILE_PATH || id == ICE_FIELD_DELETE_POS;
    if (f->content == ICE_CONTENT_EQUALITY_DELETES)
        for (int32_t k = 0; k < f->nequality_ids; k++)
            if (f->equality_ids[k] == id) return true;
    return false;
}

/* The data_file metric maps, in stats_acc.which order. */
static const char *const STAT_MAPS[] = {"value_counts", "null_value_counts", "nan_value_counts",
                                        "lower_bounds", "upper_bounds"};

/* Whether metric map w is read: every one with `all`, else a delete file's null counts
 * and bounds (the file_path bounds decide which data files a position delete file covers;
 * they, the pos bounds and the bounds and null counts of equality key columns are checked
 * against the file's records: always kept). A data file keeps nothing without `all`. */
static bool stat_map_read(int w, bool all, bool delete_file)
{
    return all || (delete_file && (w == 1 || w >= 3));
}

/* The end of a statistics read (rc its result so far): the columns gathered, sorted by
 * field id, become f's (in the arena); the accumulator is freed either way. */
static int stats_finish(stats_acc *s, ice_content_file *f, int rc, icd_error *err)
{
    if (!rc && s->n) {
        ice_col_stats *v = icd_arena_alloc(s->a, s->n * sizeof *v);
        if (!v) {
            rc = icd_fail_nomem(err);
        } else {
            memcpy(v, s->v, s->n * sizeof *v);
            qsort(v, s->n, sizeof *v, cmp_stats);
            f->stats = v;
            f->nstats = (int32_t)s->n;
        }
    }
    free(s->v);
    return rc;
}

static int read_stats(field_memo *fm, const icd_avro_value *df, bool all, icd_arena *a,
                      ice_content_file *f, icd_error *err)
{
    stats_acc s = {NULL, 0, 0, a, 0, all ? NULL : f};
    int rc = 0;
    for (int w = 0; w < 5 && !rc; w++) {
        if (!stat_map_read(w, all, f->content != ICE_CONTENT_DATA)) continue;
        const icd_avro_value *m = field(fm, df, STAT_MAPS[w]);
        if (!m) continue;
        s.which = w;
        rc = each_kv(fm, m, stats_add, &s, err);
    }
    return stats_finish(&s, f, rc, err);
}

/* ---- manifests ----------------------------------------------------------------------- */

static ice_file_format parse_format(const icd_avro_value *v)
{
    if (!v || (v->type != AVRO_STRING && v->type != AVRO_ENUM)) return ICE_FORMAT_UNKNOWN;
    const char *s;
    size_t n;
    if (v->type == AVRO_ENUM) {
        s = v->schema && (size_t)v->u.i64 < v->schema->nsymbols ? v->schema->symbols[v->u.i64] : "";
        n = strlen(s);
    } else {
        s = (const char *)v->u.bytes.ptr;
        n = v->u.bytes.len;
    }
    return ice_file_format_from_name(s, n);
}

/* The bounds a position delete file's entry records about its own columns are checked
 * where a damaged value would silently drop deletes: the planner attaches the file only to
 * data files within its file_path bounds (inverted bounds -- a lower bound above the upper
 * one -- would attach it to none), and a referenced_data_file outside them names a file the
 * deletes were not written for. Truncated string bounds still enclose every value. */
static int byte_cmp(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : an < bn ? -1 : an > bn;
}

static int check_delete_bounds(const ice_content_file *f, const char *manifest, icd_error *err)
{
    if (f->content != ICE_CONTENT_POSITION_DELETES || ice_is_dv(f)) return 0;
    const ice_col_stats *st = ice_content_file_stats(f, ICE_FIELD_DELETE_FILE_PATH);
    if (st && st->has_lower && st->has_upper &&
        byte_cmp(st->lower, st->lower_len, st->upper, st->upper_len) > 0)
        return icd_fail(err, ICD_ECORRUPT, manifest, -1,
                        "%s: the lower bound of file_path is above its upper bound", f->path);
    const ice_col_stats *ps = ice_content_file_stats(f, ICE_FIELD_DELETE_POS);
    if (ps && ps->has_lower && ps->has_upper && ps->lower_len == 8 && ps->upper_len == 8) {
        int64_t lo = (int64_t)icd_load_le64(ps->lower), hi = (int64_t)icd_load_le64(ps->upper);
        if (lo > hi || lo < 0)
            return icd_fail(err, ICD_ECORRUPT, manifest, -1,
                            "%s: the pos bounds [%lld, %lld] are not an interval of positions",
                            f->path, (long long)lo, (long long)hi);
    }
    if (!st || !f->referenced_data_file) return 0;
    const uint8_t *ref = (const uint8_t *)f->referenced_data_file;
    size_t n = strlen(f->referenced_data_file);
    if ((st->has_lower && byte_cmp(st->lower, st->lower_len, ref, n) > 0) ||
        (st->has_upper && byte_cmp(ref, n, st->upper, st->upper_len) > 0))
        return icd_fail(err, ICD_ECORRUPT, manifest, -1,
                        "%s: referenced_data_file %s lies outside the entry's file_path bounds",
                        f->path, f->referenced_data_file);
    return 0;
}

/* The fields read_entry reads, by number: each remembers its index in the record schema it
 * was last looked up in (every entry of a manifest has the same schemas, so a lookup is a
 * pointer compare instead of a name search or a hash probe per entry and field). */
enum {
    F_STATUS,
    F_DATA_FILE,
    F_SEQUENCE_NUMBER,
    F_FILE_SEQUENCE_NUMBER,
    F_SNAPSHOT_ID,
    F_FILE_PATH,
    F_CONTENT,
    F_FILE_FORMAT,
    F_RECORD_COUNT,
    F_FILE_SIZE_IN_BYTES,
    F_PARTITION,
    F_EQUALITY_IDS,
    F_REFERENCED_DATA_FILE,
    F_CONTENT_OFFSET,
    F_CONTENT_SIZE_IN_BYTES,
    F_SORT_ORDER_ID,
    F_FIRST_ROW_ID,
    F_COUNT
};
static const char *const F_NAMES[F_COUNT] = {"status",
                                             "data_file",
                                             "sequence_number",
                                             "file_sequence_number",
                                             "snapshot_id",
                                             "file_path",
                                             "content",
                                             "file_format",
                                             "record_count",
                                             "file_size_in_bytes",
                                             "partition",
                                             "equality_ids",
                                             "referenced_data_file",
                                             "content_offset",
                                             "content_size_in_bytes",
                                             "sort_order_id",
                                             "first_row_id"};

typedef struct bound_fields {
    const icd_avro_schema *schema[F_COUNT];
    int idx[F_COUNT];
} bound_fields;

/* Field k of a record as it is (a null union value too); NULL when absent. */
static inline const icd_avro_value *bfield_raw(bound_fields *b, const icd_avro_value *rec, int k)
{
    if (!rec || rec->type != AVRO_RECORD) return NULL;
    if (b->schema[k] != rec->schema) {
        b->schema[k] = rec->schema;
        b->idx[k] = icd_avro_schema_field_index(rec->schema, F_NAMES[k]);
    }
    return icd_avro_value_field_at(rec, b->idx[k]);
}

/* Field k, NULL when absent or null. */
static inline const icd_avro_value *bfield(bound_fields *b, const icd_avro_value *rec, int k)
{
    const icd_avro_value *v = bfield_raw(b, rec, k);
    return icd_avro_value_is_null(v) ? NULL : v;
}

static inline bool bget_long(bound_fields *b, const icd_avro_value *rec, int k, int64_t *out)
{
    const icd_avro_value *v = bfield(b, rec, k);
    if (!v || (v->type != AVRO_INT && v->type != AVRO_LONG)) return false;
    *out = v->u.i64;
    return true;
}

static inline int64_t blong_or(bound_fields *b, const icd_avro_value *rec, int k, int64_t dflt)
{
    int64_t v;
    return bget_long(b, rec, k, &v) ? v : dflt;
}

typedef struct entry_ctx {
    const ice_metadata *md;
    const ice_manifest_file *mf;
    const ice_partition_spec *spec;
    const ice_manifest_read_opts *opts;
    icd_arena *a;
    icd_buf key;
    icd_arena *scratch;  /* per entry, reset by the caller */
    icd_map *parts;      /* the manifest's partition tuples (read_partition) */
    int64_t next_row_id; /* first-row-id inheritance */
    field_memo *memo;
    bound_fields bound;
} entry_ctx;

/* The rules applied after an entry's fields are read (whichever decoder read them): a
 * live data file without first_row_id inherits the manifest's next row id (v3), and a
 * deletion vector must name its data file and blob range. */
static int inherit_row_id_check_dv(entry_ctx *c, const ice_manifest_entry *e, ice_content_file *f,
                                   const char *path, icd_error *err)
{
    if (f->content == ICE_CONTENT_DATA && f->first_row_id < 0 && c->next_row_id >= 0 &&
        e->status != 2) {
        f->first_row_id = c->next_row_id;
        c->next_row_id += f->record_count > 0 ? f->record_count : 0;
    }
    if (ice_is_dv(f) && (f->content_offset < 0 || f->content_size < 0 || !f->referenced_data_file))
        return icd_fail(err, ICD_ECORRUPT, path, -1,
                        "deletion vector %s lacks referenced_data_file, content_offset or "
                        "content_size_in_bytes",
                        f->path);
    return 0;
}

static int read_entry(entry_ctx *c, const icd_avro_value *rec, ice_manifest_entry *e,
                      icd_error *err)
{
    const char *path = c->mf->path;
    ice_content_file *f = &e->file;
    memset(f, 0, sizeof *f);
    int64_t status;
    if (!bget_long(&c->bound, rec, F_STATUS, &status) || status < 0 || status > 2)
        return icd_fail(err, ICD_ECORRUPT, path, -1, "manifest entry has no valid status");
    e->status = (int)status;
    const icd_avro_value *df = bfield(&c->bound, rec, F_DATA_FILE);
    if (!df || df->type != AVRO_RECORD)
        return icd_fail(err, ICD_ECORRUPT, path, -1, "manifest entry has no data_file record");
    f->manifest_path = path;
    f->path = copy_str(c->a, bfield(&c->bound, df, F_FILE_PATH));
    if (!f->path)
        return icd_fail(err, c->a ? ICD_ECORRUPT : ICD_ENOMEM, path, -1,
                        "manifest entry has no file_path");
    int64_t content = blong_or(&c->bound, df, F_CONTENT, 0);
    if (content < 0 || content > 2)
        return icd_fail(err, ICD_ECORRUPT, path, -1, "%s: unknown content type %lld", f->path,
                        (long long)content);
    f->content = (ice_content)content;
    if ((f->content != ICE_CONTENT_DATA) != c->mf->is_delete_manifest)
        return icd_fail(err, ICD_ECORRUPT, path, -1, "%s: a %s file in a %s manifest", f->path,
                        ice_content_name(f->content),
                        c->mf->is_delete_manifest ? "delete" : "data");
    f->format = parse_format(bfield(&c->bound, df, F_FILE_FORMAT));
    if (f->format == ICE_FORMAT_UNKNOWN) /* Java's FileFormat.fromString refuses it too */
        return icd_fail(err, ICD_ECORRUPT, path, -1, "%s: unknown file_format", f->path);
    f->spec_id = c->mf->spec_id;
    f->record_count = blong_or(&c->bound, df, F_RECORD_COUNT, -1);
    f->file_size = blong_or(&c->bound, df, F_FILE_SIZE_IN_BYTES, -1);

    /* Inheritance. A manifest whose list entry has sequence number 0 is a v1 manifest (or
     * was written before sequence numbers): its entries all read as 0. */
    int64_t seq;
    bool inherit_ok = e->status == 1 || c->mf->sequence_number == 0;
    if (bget_long(&c->bound, rec, F_SEQUENCE_NUMBER, &seq))
        f->data_seq = seq;
    else if (inherit_ok)
        f->data_seq = c->mf->sequence_number;
    else
        return icd_fail(err, ICD_ECORRUPT, path, -1, "%s: %s entry without a data sequence number",
                        f->path, e->status == 0 ? "EXISTING" : "DELETED");
    if (bget_long(&c->bound, rec, F_FILE_SEQUENCE_NUMBER, &seq))
        f->file_seq = seq;
    else
        f->file_seq = inherit_ok ? c->mf->sequence_number : f->data_seq;
    f->snapshot_id = blong_or(&c->bound, rec, F_SNAPSHOT_ID, c->mf->added_snapshot_id);

    ICD_TRY(read_partition(bfield(&c->bound, df, F_PARTITION), c->spec, c->a, c->scratch, c->parts,
                           &c->key, f, path, err));

    const icd_avro_value *eq = bfield(&c->bound, df, F_EQUALITY_IDS);
    if (eq && eq->type == AVRO_ARRAY && eq->u.list.count) {
        int32_t *ids = icd_arena_alloc(c->a, eq->u.list.count * sizeof *ids);
        if (!ids) return icd_fail_nomem(err);
        for (size_t i = 0; i < eq->u.list.count; i++)
            ids[i] = (int32_t)eq->u.list.items[i].u.i64;
        f->equality_ids = ids;
        f->nequality_ids = (int32_t)eq->u.list.count;
    }
    if (f->content == ICE_CONTENT_EQUALITY_DELETES && f->nequality_ids == 0)
        return icd_fail(err, ICD_ECORRUPT, path, -1, "equality delete file %s has no equality_ids",
                        f->path);
    f->referenced_data_file = copy_str(c->a, bfield(&c->bound, df, F_REFERENCED_DATA_FILE));
    f->content_offset = blong_or(&c->bound, df, F_CONTENT_OFFSET, -1);
    f->content_size = blong_or(&c->bound, df, F_CONTENT_SIZE_IN_BYTES, -1);
    f->sort_order_id = (int32_t)blong_or(&c->bound, df, F_SORT_ORDER_ID, -1);
    f->first_row_id = blong_or(&c->bound, df, F_FIRST_ROW_ID, -1);
    ICD_TRY(inherit_row_id_check_dv(c, e, f, path, err));
    ICD_TRY(read_stats(c->memo, df, c->opts && c->opts->keep_stats, c->a, f, err));
    return check_delete_bounds(f, path, err);
}

/* ---- entries from the manifest-entry decoder (manifest_fast.h) -------------------------
 * The same rules as read_entry, read_partition and read_stats, in the same order (so the
 * same error comes first), over the raw entry the decoder filled instead of a value tree. */

static inline bool raw_long(const ice_raw_entry *r, int k, int64_t *out)
{
    if (!r->has[k]) return false;
    *out = r->v[k];
    return true;
}

static inline int64_t raw_long_or(const ice_raw_entry *r, int k, int64_t dflt)
{
    return r->has[k] ? r->v[k] : dflt;
}

/* A literal with its bytes copied into `a` (copy_bytes). */
static int keep_literal(icd_arena *a, const ice_literal *in, ice_literal *out, icd_error *err)
{
    *out = *in;
    bool bytes = in->kind == ICE_T_STRING || in->kind == ICE_T_UUID || in->kind == ICE_T_FIXED ||
                 in->kind == ICE_T_BINARY || in->kind == ICE_T_DECIMAL;
    if (!in->is_null && bytes) {
        uint8_t *p = icd_arena_alloc(a, in->v.bytes.len ? in->v.bytes.len : 1);
        if (!p) return icd_fail_nomem(err);
        if (in->v.bytes.len) memcpy(p, in->v.bytes.ptr, in->v.bytes.len);
        out->v.bytes.ptr = p;
    }
    return 0;
}

static int raw_partition(entry_ctx *c, const ice_mfast *m, const ice_raw_entry *r,
                         ice_content_file *f, const char *path, icd_error *err)
{
    const ice_partition_spec *spec = c->spec;
    size_t nf = spec ? spec->nfields : 0;
    icd_buf *key = &c->key;
    f->npartition = (int32_t)nf;
    f->partition = NULL;
    icd_buf_clear(key);
    if (nf == 0) {
        f->partition_key = (const uint8_t *)"";
        f->partition_key_len = 0;
        return 0;
    }
    if (!r->has_partition)
        return icd_fail(err, ICD_ECORRUPT, path, -1,
                        "entry for %s has no partition record but spec %d has %zu fields", f->path,
                        (int)spec->spec_id, nf);
    int miss = ice_mfast_missing_partition_field(m);
    if (miss >= 0)
        return icd_fail(err, ICD_ECORRUPT, path, -1,
                        "partition record of %s lacks partition field %d (%s)", f->path,
                        (int)spec->fields[miss].field_id, spec->fields[miss].name);
    for (size_t i = 0; i < nf; i++)
        ice_key_put_literal(key, &r->pvals[i]);
    if (!icd_buf_ok(key)) return icd_fail_nomem(err);
    uint64_t h = icd_hash_bytes(key->data, key->len), *slot;
    bool fresh;
    ICD_TRY(icd_map_upsert(c->parts, key->data, key->len, h, &slot, &fresh, err));
    if (!fresh) {
        const part_copy *pc = icd_map_to_ptr(*slot);
        f->partition = pc->vals;
        f->partition_key = pc->key;
        f->partition_key_len = (uint32_t)key->len;
        return 0;
    }
    /* first file of this partition: its values and key kept in the arena */
    part_copy *pc = icd_arena_alloc(c->a, sizeof *pc);
    if (!pc) return icd_fail_nomem(err);
    *slot = icd_map_from_ptr(pc);
    ice_literal *vals = icd_arena_calloc(c->a, nf * sizeof *vals);
    if (!vals) return icd_fail_nomem(err);
    for (size_t i = 0; i < nf; i++)
        ICD_TRY(keep_literal(c->a, &r->pvals[i], &vals[i], err));
    uint8_t *k = icd_arena_alloc(c->a, key->len ? key->len : 1);
    if (!k) return icd_fail_nomem(err);
    memcpy(k, key->data, key->len);
    pc->vals = f->partition = vals;
    pc->key = f->partition_key = k;
    f->partition_key_len = (uint32_t)key->len;
    return 0;
}

static int raw_stats(const ice_raw_entry *r, bool all, icd_arena *a, ice_content_file *f,
                     icd_error *err)
{
    /* (no map read -- a data file's without a filter -- leaves f without stats, as the
     * loop below would, without walking the five maps for each entry) */
    if (!(r->stats[0].present | r->stats[1].present | r->stats[2].present | r->stats[3].present |
          r->stats[4].present))
        return 0;
    stats_acc s = {NULL, 0, 0, a, 0, all ? NULL : f};
    int rc = 0;
    for (int w = 0; w < 5 && !rc; w++) {
        if (!stat_map_read(w, all, f->content != ICE_CONTENT_DATA) || !r->stats[w].present)
            continue;
        for (size_t i = 0; i < r->stats[w].n && !rc; i++) {
            const ice_raw_kv *kv = &r->stats[w].kv[i];
            if (s.only && !keep_bounds(s.only, kv->id)) continue; /* never copied */
            ice_col_stats *col = stats_slot(&s, kv->id);
            if (!col) {
                rc = icd_fail_nomem(err);
                break;
            }
            if (kv->null) continue;
            if (w < 3) {
                *(w == 0   ? &col->value_count
                  : w == 1 ? &col->null_count
                           : &col->nan_count) = kv->i64;
                continue;
            }
            uint8_t *p = kv->len <= UINT32_MAX ? icd_arena_alloc(a, kv->len ? kv->len : 1) : NULL;
            if (!p) {
                rc = icd_fail_nomem(err);
                break;
            }
            if (kv->len) memcpy(p, kv->ptr, kv->len);
            if (w == 3) {
                col->lower = p;
                col->lower_len = (uint32_t)kv->len;
                col->has_lower = true;
            } else {
                col->upper = p;
                col->upper_len = (uint32_t)kv->len;
                col->has_upper = true;
            }
        }
    }
    return stats_finish(&s, f, rc, err);
}

static int read_raw_entry(entry_ctx *c, const ice_mfast *m, const ice_raw_entry *r,
                          ice_manifest_entry *e, icd_error *err)
{
    const char *path = c->mf->path;
    ice_content_file *f = &e->file;
    memset(f, 0, sizeof *f);
    int64_t status;
    if (!raw_long(r, MR_STATUS, &status) || status < 0 || status > 2)
        return icd_fail(err, ICD_ECORRUPT, path, -1, "manifest entry has no valid status");
    e->status = (int)status;
    if (!r->has_data_file)
        return icd_fail(err, ICD_ECORRUPT, path, -1, "manifest entry has no data_file record");
    f->manifest_path = path;
    f->path = r->has_path ? icd_arena_strndup(c->a, (const char *)r->path, r->path_len) : NULL;
    if (!f->path)
        return icd_fail(err, c->a ? ICD_ECORRUPT : ICD_ENOMEM, path, -1,
                        "manifest entry has no file_path");
    int64_t content = raw_long_or(r, MR_CONTENT, 0);
    if (content < 0 || content > 2)
        return icd_fail(err, ICD_ECORRUPT, path, -1, "%s: unknown content type %lld", f->path,
                        (long long)content);
    f->content = (ice_content)content;
    if ((f->content != ICE_CONTENT_DATA) != c->mf->is_delete_manifest)
        return icd_fail(err, ICD_ECORRUPT, path, -1, "%s: a %s file in a %s manifest", f->path,
                        ice_content_name(f->content),
                        c->mf->is_delete_manifest ? "delete" : "data");
    f->format = r->format;
    if (f->format == ICE_FORMAT_UNKNOWN) /* Java's FileFormat.fromString refuses it too */
        return icd_fail(err, ICD_ECORRUPT, path, -1, "%s: unknown file_format", f->path);
    f->spec_id = c->mf->spec_id;
    f->record_count = raw_long_or(r, MR_RECORD_COUNT, -1);
    f->file_size = raw_long_or(r, MR_FILE_SIZE, -1);

    int64_t seq;
    bool inherit_ok = e->status == 1 || c->mf->sequence_number == 0;
    if (raw_long(r, MR_SEQUENCE_NUMBER, &seq))
        f->data_seq = seq;
    else if (inherit_ok)
        f->data_seq = c->mf->sequence_number;
    else
        return icd_fail(err, ICD_ECORRUPT, path, -1, "%s: %s entry without a data sequence number",
                        f->path, e->status == 0 ? "EXISTING" : "DELETED");
    if (raw_long(r, MR_FILE_SEQUENCE_NUMBER, &seq))
        f->file_seq = seq;
    else
        f->file_seq = inherit_ok ? c->mf->sequence_number : f->data_seq;
    f->snapshot_id = raw_long_or(r, MR_SNAPSHOT_ID, c->mf->added_snapshot_id);

    ICD_TRY(raw_partition(c, m, r, f, path, err));

    if (r->has_eq && r->neq) {
        int32_t *ids = icd_arena_alloc(c->a, r->neq * sizeof *ids);
        if (!ids) return icd_fail_nomem(err);
        memcpy(ids, r->eq, r->neq * sizeof *ids);
        f->equality_ids = ids;
        f->nequality_ids = (int32_t)r->neq;
    }
    if (f->content == ICE_CONTENT_EQUALITY_DELETES && f->nequality_ids == 0)
        return icd_fail(err, ICD_ECORRUPT, path, -1, "equality delete file %s has no equality_ids",
                        f->path);
    if (r->has_ref) {
        f->referenced_data_file = icd_arena_strndup(c->a, (const char *)r->ref, r->ref_len);
        if (!f->referenced_data_file) return icd_fail_nomem(err);
    }
    f->content_offset = raw_long_or(r, MR_CONTENT_OFFSET, -1);
    f->content_size = raw_long_or(r, MR_CONTENT_SIZE, -1);
    f->sort_order_id = (int32_t)raw_long_or(r, MR_SORT_ORDER_ID, -1);
    f->first_row_id = raw_long_or(r, MR_FIRST_ROW_ID, -1);
    ICD_TRY(inherit_row_id_check_dv(c, e, f, path, err));
    ICD_TRY(raw_stats(r, c->opts && c->opts->keep_stats, c->a, f, err));
    return check_delete_bounds(f, path, err);
}

/* What of a manifest entry is decoded: its data_file's fields that read_entry uses (a
 * data file's column metrics only for filters; a delete file's null counts and bounds,
 * which read_entry checks), the rest skipped: column sizes, split offsets and -- without a
 * filter -- a data file's five metric maps were most of the decoding when planning large
 * tables. NULL (everything) for a schema without a data_file record. */
typedef struct entry_projection {
    icd_avro_projection top, data_file;
    const icd_avro_projection **nested; /* per entry field: &data_file at its index */
    bool *keep;                         /* per data_file field */
} entry_projection;

static bool data_file_field_used(const char *name, bool keep_stats, bool delete_manifest)
{
    static const char *const always[] = {"content",        "file_path",
                                         "file_format",    "partition",
                                         "record_count",   "file_size_in_bytes",
                                         "equality_ids",   "referenced_data_file",
                                         "content_offset", "content_size_in_bytes",
                                         "sort_order_id",  "first_row_id"};
    for (size_t i = 0; i < sizeof always / sizeof *always; i++)
        if (!strcmp(name, always[i])) return true;
    for (int w = 0; w < 5; w++)
        if (!strcmp(name, STAT_MAPS[w])) return stat_map_read(w, keep_stats, delete_manifest);
    return false;
}

static int entry_projection_init(entry_projection *p, const icd_avro_schema *root, bool keep_stats,
                                 bool delete_manifest, icd_error *err)
{
    memset(p, 0, sizeof *p);
    int di = icd_avro_schema_field_index(root, "data_file");
    if (di < 0) return 0;
    const icd_avro_schema *df = root->fields[di].type;
    if (df->type == AVRO_UNION)
        for (size_t i = 0; i < df->nbranches; i++)
            if (df->branches[i]->type == AVRO_RECORD) {
                df = df->branches[i];
                break;
            }
    if (df->type != AVRO_RECORD) return 0;
    p->nested = calloc(root->nfields, sizeof *p->nested);
    p->keep = calloc(df->nfields ? df->nfields : 1, sizeof *p->keep);
    if (!p->nested || !p->keep) {
        free(p->nested);
        free(p->keep);
        p->nested = NULL;
        p->keep = NULL;
        return icd_fail_nomem(err);
    }
    for (size_t i = 0; i < df->nfields; i++)
        p->keep[i] = data_file_field_used(df->fields[i].name, keep_stats, delete_manifest);
    p->data_file = (icd_avro_projection){df, p->keep, NULL, NULL};
    p->nested[di] = &p->data_file;
    p->top = (icd_avro_projection){root, NULL, p->nested, NULL};
    icd_avro_plan *plan;
    int rc = icd_avro_plan_compile(&p->top, &plan, err);
    if (rc) {
        free(p->nested);
        free(p->keep);
        p->nested = NULL;
        p->keep = NULL;
        return rc;
    }
    p->top.plan = plan;
    return 0;
}

static void entry_projection_free(entry_projection *p)
{
    icd_avro_plan_free((icd_avro_plan *)p->top.plan);
    free(p->nested);
    free(p->keep);
}

/* The most entries a manifest's array is sized for from its manifest-list counts. */
#define ENTRIES_IN_PLACE_MAX ((uint64_t)1 << 22)

int ice_manifest_read(icd_fileio *io, const ice_metadata *md, const ice_manifest_file *mf,
                      const ice_manifest_read_opts *opts, icd_arena *arena,
                      ice_manifest_entry **out, size_t *n, icd_error *err)
{
    icd_avro_reader *r;
    ICD_TRY(icd_avro_reader_open(io, mf->path, &r, err));
    int rc = ice_manifest_read_from(r, md, mf, opts, arena, out, n, err);
    icd_avro_reader_free(r);
    return rc;
}

int ice_manifest_read_from(icd_avro_reader *r, const ice_metadata *md, const ice_manifest_file *mf,
                           const ice_manifest_read_opts *opts, icd_arena *arena,
                           ice_manifest_entry **out, size_t *n, icd_error *err)
{
    *out = NULL;
    *n = 0;
    const ice_partition_spec *spec = ice_metadata_spec(md, mf->spec_id);
    if (!spec)
        return icd_fail(err, ICD_ECORRUPT, mf->path, -1,
                        "manifest uses partition spec id %d, which the table metadata does not "
                        "define",
                        (int)mf->spec_id);
    const icd_avro_schema *root = icd_avro_reader_schema(r);
    /* The manifest-entry decoder, when it handles the writer schema; else (or for tests
     * comparing the two) the generic value trees with a projection. */
    ice_mfast *fast = NULL;
    if (!(opts && opts->generic_decoder)) {
        bool stat_read[5];
        for (int w = 0; w < 5; w++)
            stat_read[w] = stat_map_read(w, opts && opts->keep_stats, mf->is_delete_manifest);
        ICD_TRY(ice_mfast_compile(root, spec, stat_read, &fast, err));
    }
    entry_projection proj;
    if (fast)
        memset(&proj, 0, sizeof proj);
    else if (root->type == AVRO_RECORD)
        ICD_TRY(entry_projection_init(&proj, root, opts && opts->keep_stats, mf->is_delete_manifest,
                                      err));
    else
        memset(&proj, 0, sizeof proj);
    const icd_avro_projection *pj = proj.nested ? &proj.top : NULL;
    field_memo *memo = calloc(1, sizeof *memo);
    if (!memo) {
        entry_projection_free(&proj);
        ice_mfast_free(fast);
        return icd_fail_nomem(err);
    }
    entry_ctx c = {
        md, mf, spec, opts, arena, ICD_BUF_INIT, NULL, NULL, mf->first_row_id, memo, {{NULL}, {0}}};
    icd_arena tmp = ICD_ARENA_INIT;
    c.scratch = &tmp;
    if (spec->nfields && icd_map_new(&c.parts, 0, err)) {
        free(memo);
        entry_projection_free(&proj);
        ice_mfast_free(fast);
        return ICD_ENOMEM;
    }
    ice_manifest_entry *v = NULL;
    size_t count = 0, cap = 0;
    int rc = 0;
    bool keep_deleted = opts && opts->keep_deleted;
    /* The manifest list's file counts size the entry array, which is then read in place in
     * the arena (no growing copies, no final copy); a count that is missing, implausible
     * or too small leaves the rest to a growing vector, as without them. */
    ice_manifest_entry *in_place = NULL;
    if (mf->added_files >= 0 && mf->existing_files >= 0 && mf->deleted_files >= 0) {
        uint64_t hint = (uint64_t)mf->added_files + (uint64_t)mf->existing_files +
                        (keep_deleted ? (uint64_t)mf->deleted_files : 0) + 1;
        if (hint <= ENTRIES_IN_PLACE_MAX &&
            (in_place = icd_arena_alloc(arena, (size_t)hint * sizeof *in_place))) {
            v = in_place;
            cap = (size_t)hint;
        }
    }
    for (;;) {
        icd_avro_value rec;
        ice_raw_entry raw;
        bool eof;
        if (fast) {
            icd_avro_cursor *cur;
            if ((rc = icd_avro_reader_raw_next(r, &cur, &eof, err)) || eof) break;
            if ((rc =
                     icd_avro_reader_raw_end(r, ice_mfast_decode(fast, cur, &tmp, &raw, err), err)))
                break;
        } else {
            if ((rc = icd_avro_reader_next_projected(r, pj, &tmp, &rec, &eof, err)) || eof) break;
            if (rec.type != AVRO_RECORD) {
                rc = icd_fail(err, ICD_ECORRUPT, mf->path, -1, "manifest records are not records");
                break;
            }
        }
        if (in_place && v == in_place && count + 1 > cap) { /* (more than the list said) */
            ice_manifest_entry *grown = malloc(cap * 2 * sizeof *grown);
            if (!grown) {
                rc = icd_fail_nomem(err);
                break;
            }
            memcpy(grown, in_place, count * sizeof *grown);
            v = grown;
            cap *= 2;
        }
        if (ICD_ARRAY_RESERVE(v, cap, count + 1, 64)) {
            rc = icd_fail_nomem(err);
            break;
        }
        if ((rc = fast ? read_raw_entry(&c, fast, &raw, &v[count], err)
                       : read_entry(&c, &rec, &v[count], err)))
            break;
        if (v[count].status != 2 || keep_deleted) count++;
        icd_arena_reset(&tmp);
    }
    icd_arena_free(&tmp);
    icd_buf_free(&c.key);
    icd_map_free(c.parts);
    free(memo);
    entry_projection_free(&proj);
    ice_mfast_free(fast);
    if (!rc && count && v == in_place) {
        *out = in_place;
    } else if (!rc && count) {
        ice_manifest_entry *dst = icd_arena_alloc(arena, count * sizeof *dst);
        if (!dst)
            rc = icd_fail_nomem(err);
        else
            memcpy(dst, v, count * sizeof *dst);
        *out = dst;
    }
    if (v != in_place) free(v);
    if (rc) {
        icd_error_set_file(err, mf->path);
        *out = NULL;
        return rc;
    }
    *n = count;
    return 0;
}
