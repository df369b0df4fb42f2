/*
 * Loading a delete file into the scan-wide cache, written once for every file format
 * (delete_load.h): the file is read through the format adapter (adapter.h), its records
 * go through the one set of rules of delete_cache.h (posload, eqload).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/adapter.h"
#include "iceberg/deletes/delete_load.h"

static const ice_type T_STRING = {.kind = ICE_T_STRING};
static const ice_type T_LONG = {.kind = ICE_T_LONG};

/* Opens df (its size checked against the entry) through the adapter; its footer's row
 * count, where the format has one, is checked before anything is read. */
static int open_adapter(const ice_delete_load_ctx *c, const ice_content_file *df,
                        const ice_adapter_col *cols, size_t ncols, ice_adapter **out,
                        size_t *missing, icd_error *err)
{
    icd_file *f;
    ICD_TRY(ice_delete_open_entry(c->io, df, &f, err));
    ice_adapter_opts o = {.file = f,
                          .path = df->path,
                          .format = df->format,
                          .cols = cols,
                          .ncols = ncols,
                          .schema = c->schema,
                          .mapping = c->mapping};
    ICD_TRY(ice_adapter_open(out, &o, missing, err));
    int64_t rows = ice_adapter_num_rows(*out);
    int rc = rows >= 0 ? ice_delete_check_entry(df, 0, rows, false, err) : 0;
    if (rc) {
        ice_adapter_close(*out);
        *out = NULL;
    }
    return rc;
}

static int load_positions(const ice_delete_load_ctx *c, const ice_content_file *df, cache_entry *e,
                          icd_error *err)
{
    const ice_adapter_col cols[2] = {
        {ICE_FIELD_DELETE_FILE_PATH, &T_STRING, "file_path", "file_path"},
        {ICE_FIELD_DELETE_POS, &T_LONG, "pos", "pos"}};
    ice_adapter *a;
    size_t missing = SIZE_MAX; /* set when a column is missing (not when the file is) */
    int rc = open_adapter(c, df, cols, 2, &a, &missing, err);
    if (rc == ICD_ENOTFOUND && missing != SIZE_MAX)
        return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                        "position delete file lacks the file_path (string) and pos (long) columns");
    if (rc) return rc;
    ice_rd_posload pl;
    rc = ice_rd_posload_init(&pl, e, df, err);
    while (!rc) {
        const ice_vbatch *b;
        if ((rc = ice_adapter_next(a, &b, err)) || !b) break;
        const ice_tvalue *path = b->cols[0].v, *pos = b->cols[1].v;
        for (size_t i = 0; i < b->nrows && !rc; i++) {
            int64_t row = b->first_row + (int64_t)i;
            if (path[i].cls == ICE_TV_NULL)
                ice_rd_posload_null_path(&pl);
            else if (pos[i].cls == ICE_TV_NULL)
                rc = icd_fail(err, ICD_ECORRUPT, df->path, -1, "row %lld has a null pos",
                              (long long)row);
            else
                rc = ice_rd_posload_add(&pl, path[i].p, path[i].n, pos[i].i, row, err);
        }
    }
    if (!rc) rc = ice_rd_posload_finish(&pl, err);
    ice_rd_posload_free(&pl);
    ice_adapter_close(a);
    return rc;
}

static int load_equality(const ice_delete_load_ctx *c, const ice_content_file *df, cache_entry *e,
                         icd_error *err)
{
    size_t nk = df->nequality_ids > 0 ? (size_t)df->nequality_ids : 0;
    if (!nk)
        return icd_fail(err, ICD_ECORRUPT, df->path, -1,
                        "equality delete file without equality_ids");
    ice_adapter_col *cols = calloc(nk, sizeof *cols);
    if (!cols) return icd_fail_nomem(err);
    int rc = 0;
    for (size_t k = 0; k < nk && !rc; k++) {
        int32_t id = df->equality_ids[k];
        const ice_field *f = ice_metadata_field_any(c->md, c->schema, id);
        if (!f)
            rc = icd_fail(err, ICD_ECORRUPT, df->path, -1,
                          "equality field id %d is in no schema of the table", (int)id);
        else if (!ice_type_is_primitive(f->type))
            rc = icd_fail(err, ICD_EUNSUPPORTED, df->path, -1,
                          "equality field %s (id %d) is a %s, not a primitive", f->name, (int)id,
                          ice_type_kind_name(f->type->kind));
        else
            cols[k] = (ice_adapter_col){id, f->type, f->name, NULL};
    }
    ice_adapter *a = NULL;
    size_t missing = SIZE_MAX; /* set when a column is missing (not when the file is) */
    if (!rc) rc = open_adapter(c, df, cols, nk, &a, &missing, err);
    if (rc == ICD_ENOTFOUND && missing != SIZE_MAX)
        rc = icd_fail(err, ICD_ECORRUPT, df->path, -1,
                      "equality delete file lacks a column for field id %d (%s)",
                      (int)cols[missing].field_id, cols[missing].name);
    ice_rd_eqload el;
    memset(&el, 0, sizeof el); /* freed below whether or not it was initialised */
    if (!rc) rc = ice_rd_eqload_init(&el, e, df, err);
    while (!rc) {
        const ice_vbatch *b;
        if ((rc = ice_adapter_next(a, &b, err)) || !b) break;
        for (size_t i = 0; i < b->nrows && !rc; i++) {
            int64_t row = b->first_row + (int64_t)i;
            for (size_t k = 0; k < nk && !rc; k++)
                rc = ice_rd_eqload_value(&el, &b->cols[k].v[i], row, err);
            if (!rc) rc = ice_rd_eqload_end_record(&el, err);
        }
    }
    if (!rc) rc = ice_rd_eqload_finish(&el, err); /* rows decoded (the footer's count too) */
    ice_rd_eqload_free(&el);
    ice_adapter_close(a);
    free(cols);
    return rc;
}

int ice_delete_load(const ice_delete_load_ctx *c, const ice_content_file *df, cache_entry *e,
                    icd_error *err)
{
    if (ice_is_dv(df)) {
        e->kind = C_DV;
        return ice_delete_read_dv(c->io, df, e, err);
    }
    if (df->format != ICE_FORMAT_PARQUET && df->format != ICE_FORMAT_AVRO &&
        df->format != ICE_FORMAT_ORC)
        return icd_fail(err, ICD_EUNSUPPORTED, df->path, -1,
                        "%s delete files in %s format are not supported yet",
                        df->content == ICE_CONTENT_EQUALITY_DELETES ? "equality" : "position",
                        ice_file_format_name(df->format));
    if (df->content == ICE_CONTENT_POSITION_DELETES) {
        e->kind = C_POS;
        return load_positions(c, df, e, err);
    }
    e->kind = C_EQ;
    return load_equality(c, df, e, err);
}
