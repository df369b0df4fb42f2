/*
 * The format adapter's common part (adapter.h): dispatch by format, the batch's value
 * arrays, and the one wording of a missing column.
 */
#include <stdlib.h>
#include <string.h>

#include "base/array.h"
#include "base/bigmem.h"
#include "iceberg/adapter.h"

int ice_adapter_reserve(ice_adapter *a, size_t n, icd_error *err)
{
    if (n <= a->cap) return 0;
    size_t cap = a->cap ? a->cap : 1024;
    while (cap < n)
        cap *= 2;
    for (size_t c = 0; c < a->ncols; c++) {
        ice_tvalue *nv = icd_bigbuf_realloc(a->vals[c], cap * sizeof *nv);
        if (!nv) return icd_fail_nomem(err);
        a->vals[c] = nv;
        a->vcols[c].v = nv;
    }
    a->cap = cap;
    return 0;
}

int ice_adapter_missing(const ice_adapter_opts *o, size_t k, size_t *missing, icd_error *err)
{
    if (missing) *missing = k;
    const ice_adapter_col *c = &o->cols[k];
    return icd_fail(err, ICD_ENOTFOUND, o->path, -1, "%s file lacks a column for field id %d (%s)",
                    ice_file_format_name(o->format), (int)c->field_id, c->name);
}

int ice_adapter_open(ice_adapter **out, const ice_adapter_opts *o, size_t *missing, icd_error *err)
{
    *out = NULL;
    ice_adapter *a = calloc(1, sizeof *a);
    ice_tvalue **vals = calloc(o->ncols ? o->ncols : 1, sizeof *vals);
    ice_vcol *vcols = calloc(o->ncols ? o->ncols : 1, sizeof *vcols);
    if (!a || !vals || !vcols) {
        free(a);
        free(vals);
        free(vcols);
        icd_file_close(o->file);
        return icd_fail_nomem(err);
    }
    a->path = o->path;
    a->cols = o->cols;
    a->ncols = o->ncols;
    a->vals = vals;
    a->num_rows = -1;
    a->num_units = 1;
    for (size_t c = 0; c < o->ncols; c++)
        vcols[c].kind = ICE_VCOL_VALUES; /* (field NULL: the adapter's columns are ids) */
    a->vcols = vcols;
    a->batch.cols = vcols;
    a->batch.ncols = o->ncols;
    int rc;
    switch (o->format) {
    case ICE_FORMAT_PARQUET:
        rc = ice_adapter_open_parquet(a, o, missing, err);
        break;
    case ICE_FORMAT_AVRO:
        rc = ice_adapter_open_avro(a, o, missing, err);
        break;
    case ICE_FORMAT_ORC:
        rc = ice_adapter_open_orc(a, o, missing, err);
        break;
    default:
        icd_file_close(o->file);
        rc = icd_fail(err, ICD_EUNSUPPORTED, o->path, -1, "%s files cannot be read as rows",
                      ice_file_format_name(o->format));
        break;
    }
    if (rc) {
        ice_adapter_close(a); /* the implementation left nothing open (ops NULL) */
        return rc;
    }
    *out = a;
    return 0;
}

int64_t ice_adapter_num_rows(const ice_adapter *a)
{
    return a->num_rows;
}

size_t ice_adapter_num_units(const ice_adapter *a)
{
    return a->num_units;
}

int ice_adapter_select_units(ice_adapter *a, size_t first, size_t count, icd_error *err)
{
    if (first > a->num_units || count > a->num_units - first)
        return icd_fail(err, ICD_EINTERNAL, a->path, -1, "units %zu..%zu of a file of %zu", first,
                        first + count, a->num_units);
    if (!a->ops->select_units) { /* one unit: a restart is a new read */
        if (first == 0 && count == 1 && !a->started) return 0;
        return icd_fail(err, ICD_EINTERNAL, a->path, -1,
                        "a file of one unit cannot be read again through the same adapter");
    }
    return a->ops->select_units(a, first, count, err);
}

int ice_adapter_next(ice_adapter *a, const ice_vbatch **out, icd_error *err)
{
    *out = NULL;
    a->batch.nrows = 0;
    a->started = true;
    ICD_TRY(a->ops->next(a, err));
    if (a->batch.nrows) *out = &a->batch;
    return 0;
}

void ice_adapter_close(ice_adapter *a)
{
    if (!a) return;
    if (a->ops) a->ops->close(a);
    for (size_t c = 0; c < a->ncols; c++)
        icd_bigbuf_free(a->vals[c]);
    free(a->vals);
    free(a->vcols);
    free(a);
}
