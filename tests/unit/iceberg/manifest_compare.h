/*
 * Reads one manifest (an Avro container in memory) twice -- with the manifest-entry decoder
 * and with the generic value trees -- and compares the results field by field: the same
 * error (code, message, file, offset) or the same entries. Used by test_manifest_fast.c
 * and the fuzz_manifest target. Returns NULL when they agree, else what differs.
 */
#ifndef ICD_TEST_MANIFEST_COMPARE_H
#define ICD_TEST_MANIFEST_COMPARE_H

#include <stdio.h>
#include <string.h>

#include "formats/avro/container.h"
#include "iceberg/manifest.h"
#include "io/memfile.h"

static bool mc_bytes_eq(const void *a, size_t an, const void *b, size_t bn)
{
    return an == bn && (an == 0 || memcmp(a, b, an) == 0);
}

static bool mc_str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool mc_lit_eq(const ice_literal *a, const ice_literal *b)
{
    if (a->kind != b->kind || a->is_null != b->is_null || a->scale != b->scale) return false;
    if (a->is_null) return true;
    switch (a->kind) {
    case ICE_T_BOOLEAN:
        return a->v.b == b->v.b;
    case ICE_T_INT:
    case ICE_T_DATE:
        return a->v.i32 == b->v.i32;
    case ICE_T_FLOAT:
        return !memcmp(&a->v.f32, &b->v.f32, sizeof a->v.f32);
    case ICE_T_DOUBLE:
        return !memcmp(&a->v.f64, &b->v.f64, sizeof a->v.f64);
    case ICE_T_STRING:
    case ICE_T_UUID:
    case ICE_T_FIXED:
    case ICE_T_BINARY:
    case ICE_T_DECIMAL:
        return mc_bytes_eq(a->v.bytes.ptr, a->v.bytes.len, b->v.bytes.ptr, b->v.bytes.len);
    default:
        return a->v.i64 == b->v.i64;
    }
}

static const char *mc_file_eq(const ice_content_file *a, const ice_content_file *b)
{
    if (a->content != b->content || a->format != b->format) return "content/format";
    if (!mc_str_eq(a->path, b->path) || !mc_str_eq(a->manifest_path, b->manifest_path))
        return "path";
    if (a->spec_id != b->spec_id || a->npartition != b->npartition) return "spec/npartition";
    if (!mc_bytes_eq(a->partition_key, a->partition_key_len, b->partition_key,
                     b->partition_key_len))
        return "partition key";
    for (int32_t i = 0; i < a->npartition && a->partition && b->partition; i++)
        if (!mc_lit_eq(&a->partition[i], &b->partition[i])) return "partition value";
    if ((a->partition == NULL) != (b->partition == NULL)) return "partition presence";
    if (a->record_count != b->record_count || a->file_size != b->file_size) return "counts";
    if (a->data_seq != b->data_seq || a->file_seq != b->file_seq) return "sequence numbers";
    if (a->snapshot_id != b->snapshot_id) return "snapshot id";
    if (a->nequality_ids != b->nequality_ids ||
        (a->nequality_ids &&
         memcmp(a->equality_ids, b->equality_ids, (size_t)a->nequality_ids * sizeof(int32_t))))
        return "equality ids";
    if (!mc_str_eq(a->referenced_data_file, b->referenced_data_file)) return "referenced";
    if (a->content_offset != b->content_offset || a->content_size != b->content_size)
        return "blob range";
    if (a->first_row_id != b->first_row_id || a->sort_order_id != b->sort_order_id)
        return "row id/sort order";
    if (a->nstats != b->nstats) return "nstats";
    for (int32_t i = 0; i < a->nstats; i++) {
        const ice_col_stats *x = &a->stats[i], *y = &b->stats[i];
        if (x->field_id != y->field_id || x->value_count != y->value_count ||
            x->null_count != y->null_count || x->nan_count != y->nan_count ||
            x->has_lower != y->has_lower || x->has_upper != y->has_upper)
            return "stats";
        if (x->has_lower && !mc_bytes_eq(x->lower, x->lower_len, y->lower, y->lower_len))
            return "lower bound";
        if (x->has_upper && !mc_bytes_eq(x->upper, x->upper_len, y->upper, y->upper_len))
            return "upper bound";
    }
    return NULL;
}

/* One read of `data` as manifest `mf`; rc, entries in `arena`. */
static int mc_read(const uint8_t *data, size_t size, const ice_metadata *md,
                   const ice_manifest_file *mf, ice_manifest_read_opts opts, icd_arena *arena,
                   ice_manifest_entry **e, size_t *n, icd_error *err)
{
    icd_file *f;
    *e = NULL;
    *n = 0;
    memset(err, 0, sizeof *err);
    int rc = icd_memfile_open(data, size, mf->path, &f, err);
    if (rc) return rc;
    icd_avro_reader *r;
    if ((rc = icd_avro_reader_open_file(f, true, &r, err))) return rc;
    rc = ice_manifest_read_from(r, md, mf, &opts, arena, e, n, err);
    icd_avro_reader_free(r);
    return rc;
}

/* NULL when both decoders agree on `data` read as `mf` with `opts`. `why` gets details. */
static const char *manifest_compare(const uint8_t *data, size_t size, const ice_metadata *md,
                                    const ice_manifest_file *mf, ice_manifest_read_opts opts,
                                    char *why, size_t why_len)
{
    icd_arena a1 = ICD_ARENA_INIT, a2 = ICD_ARENA_INIT;
    ice_manifest_entry *e1, *e2;
    size_t n1, n2;
    static icd_error err1, err2;
    opts.generic_decoder = false;
    int rc1 = mc_read(data, size, md, mf, opts, &a1, &e1, &n1, &err1);
    opts.generic_decoder = true;
    int rc2 = mc_read(data, size, md, mf, opts, &a2, &e2, &n2, &err2);
    const char *diff = NULL;
    why[0] = '\0';
    if (rc1 != rc2 ||
        (rc1 && (err1.code != err2.code || err1.offset != err2.offset ||
                 strcmp(err1.message, err2.message) || strcmp(err1.file, err2.file)))) {
        diff = "error";
        snprintf(why, why_len, "fast rc %d [%s @%lld]; generic rc %d [%s @%lld]", rc1, err1.message,
                 (long long)err1.offset, rc2, err2.message, (long long)err2.offset);
    } else if (!rc1 && n1 != n2) {
        diff = "entry count";
        snprintf(why, why_len, "fast %zu entries, generic %zu", n1, n2);
    } else if (!rc1) {
        for (size_t i = 0; i < n1 && !diff; i++) {
            if (e1[i].status != e2[i].status)
                diff = "status";
            else
                diff = mc_file_eq(&e1[i].file, &e2[i].file);
            if (diff) snprintf(why, why_len, "entry %zu: %s", i, diff);
        }
    }
    icd_arena_free(&a1);
    icd_arena_free(&a2);
    return diff;
}

#endif
