/*
 * Avro data files in the one task loop of the merge-on-read reader (reader_internal.h,
 * ice_data_avro). Records are decoded in batches of at most AVRO_BATCH_ROWS, never across
 * a container block (the values point into it); fields are bound once per file by their
 * field-id in the writer schema (an Avro data file's schema carries the ids), and a field
 * the file lacks reads as its identity-partition value, its initial-default, or null. The row
 * count is known only once the file is read: the task loop checks it at the end.
 *
 * A batch becomes the format-neutral batch (vbatch.h): primitive fields and equality key
 * columns (looked up by id, also inside structs) as typed VALUES, nested fields as NESTED
 * cursors over the records.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "formats/avro/container.h"
#include "iceberg/adapter.h"
#include "iceberg/literal.h"
#include "iceberg/reader_internal.h"
#include "iceberg/tvalue.h"

#define AVRO_BATCH_ROWS 1024

/* The state of one Avro data file being read (ice_rd_task.src). */
typedef struct avro_src {
    icd_avro_reader *ar;
    icd_avro_value *recs;       /* the records of the current batch */
    icd_arena arena;            /* their values */
    ice_vcol *cols;             /* the batch's columns: one per field of the reader */
    int *field_at;              /* per reader field: its index in the file's record, or -1 */
    const ice_literal **absent; /* per reader field: its value in records without it */
    ice_vcol *kcols;            /* all equality key columns, grouped by delete file */
    ice_vcol **keys;            /* per equality delete file: its first key column in kcols */
    size_t nkcols;
    const icd_avro_schema *ws; /* the writer schema field_at indexes (a record) */
    int64_t first;             /* the file position of recs[0] */
    size_t n;
    bool eof;
} avro_src;

static void emit_avro(const ice_row_sink *s, const icd_avro_value *v, const ice_type *t)
{
    if (icd_avro_value_is_null(v)) {
        s->null_value(s->ctx);
        return;
    }
    if (ice_type_is_primitive(t)) {
        ice_tvalue tv = ice_avro_tvalue(v, t);
        ice_emit_tvalue(s, &tv, t);
        return;
    }
    if (t->kind == ICE_T_STRUCT) {
        s->struct_begin(s->ctx);
        for (size_t i = 0; i < t->nfields; i++) {
            const ice_field *f = &t->fields[i];
            s->field(s->ctx, f->name, strlen(f->name));
            const icd_avro_value *fv =
                v->type == AVRO_RECORD ? icd_avro_value_field_by_id(v, f->id) : NULL;
            if (fv)
                emit_avro(s, fv, f->type);
            else
                ice_emit_literal(s, f->initial_default, f->type);
        }
        s->struct_end(s->ctx);
    } else if (t->kind == ICE_T_LIST) {
        s->list_begin(s->ctx);
        for (size_t i = 0; v->type == AVRO_ARRAY && i < v->u.list.count; i++)
            emit_avro(s, &v->u.list.items[i], t->element->type);
        s->list_end(s->ctx);
    } else {
        s->map_begin(s->ctx);
        if (v->type == AVRO_MAP) {
            for (size_t i = 0; i < v->u.map.count; i++) {
                s->string(s->ctx, (const char *)v->u.map.keys[i].ptr, v->u.map.keys[i].len);
                emit_avro(s, &v->u.map.values[i], t->value->type);
            }
        } else if (v->type == AVRO_ARRAY) { /* non-string keys: array of {key, value} */
            for (size_t i = 0; i < v->u.list.count; i++) {
                const icd_avro_value *kv = &v->u.list.items[i];
                emit_avro(s, icd_avro_value_field(kv, "key"), t->key->type);
                emit_avro(s, icd_avro_value_field(kv, "value"), t->value->type);
            }
        }
        s->map_end(s->ctx);
    }
}

static bool has_variant(const ice_type *t)
{
    if (t->kind == ICE_T_VARIANT) return true;
    if (t->kind == ICE_T_STRUCT) {
        for (size_t i = 0; i < t->nfields; i++)
            if (has_variant(t->fields[i].type)) return true;
    } else if (t->kind == ICE_T_LIST) {
        return has_variant(t->element->type);
    } else if (t->kind == ICE_T_MAP) {
        return has_variant(t->key->type) || has_variant(t->value->type);
    }
    return false;
}

/* The value of reader field k in record `row`, or NULL when the record lacks it. */
static const icd_avro_value *field_value(const ice_rd_task *t, size_t k, size_t row)
{
    const avro_src *p = t->src;
    const icd_avro_value *rec = &p->recs[row];
    return rec->schema == p->ws ? icd_avro_value_field_at(rec, p->field_at[k])
                                : icd_avro_value_field_by_id(rec, t->batch.cols[k].field->id);
}

/* The value of a VALUES column in record `row`: an output field (impl NULL; k its index)
 * or an equality key column (impl non-NULL), looked up by id, also inside structs. */
static const icd_avro_value *column_value(const ice_rd_task *t, const ice_vcol *c, size_t row)
{
    const avro_src *p = t->src;
    if (c->impl) return ice_avro_find_id(&p->recs[row], c->field->id);
    return field_value(t, (size_t)(c - t->batch.cols), row);
}

/* ice_vcol.range_error */
static int avro_range_error(ice_rd_task *t, const ice_vcol *c, size_t row, icd_error *err)
{
    const avro_src *p = t->src;
    const icd_avro_value *v = column_value(t, c, row);
    char what[96];
    if (v && !ice_avro_ts_in_range(v, c->field->type, what, sizeof what))
        return ice_time_value_range_error(err, t->task->data->path, c->field->name,
                                          p->first + (int64_t)row, c->field->type, what);
    return icd_fail(err, ICD_EINTERNAL, t->task->data->path, -1, "value in range");
}

/* ice_vcol.nested_row */
static int avro_nested_row(ice_rd_task *t, ice_vcol *c, size_t row, icd_error *err)
{
    const avro_src *p = t->src;
    size_t k = (size_t)(c - t->batch.cols);
    const icd_avro_value *v = field_value(t, k, row);
    if (v)
        emit_avro(t->sink, v, c->field->type);
    else
        ice_emit_literal(t->sink, p->absent[k], c->field->type);
    (void)err;
    return 0;
}

/* ice_data_ops.bind: every primitive field a VALUES column, every other one NESTED. */
static int avro_bind(ice_rd_task *t, icd_error *err)
{
    avro_src *p = t->src;
    ice_scan_reader *r = t->r;
    size_t nf = t->batch.ncols ? t->batch.ncols : 1;
    p->field_at = malloc(nf * sizeof *p->field_at);
    p->absent = malloc(nf * sizeof *p->absent);
    if (!p->field_at || !p->absent) return icd_fail_nomem(err);
    p->ws = icd_avro_reader_schema(p->ar);
    for (size_t k = 0; k < t->batch.ncols; k++) {
        ice_vcol *c = &t->batch.cols[k];
        const ice_field *f = c->field;
        p->field_at[k] = icd_avro_schema_field_index_by_id(p->ws, f->id);
        const ice_literal *l = ice_rd_partition_value(r, t->task->data, f->id);
        p->absent[k] = l ? l : f->initial_default;
        if (ice_type_is_primitive(f->type)) {
            c->kind = ICE_VCOL_VALUES;
            c->range_error = avro_range_error;
        } else {
            c->kind = ICE_VCOL_NESTED;
            c->nested_row = avro_nested_row;
        }
    }
    return 0;
}

/* ice_data_ops.prepare: the key columns, read by field id from each record (also inside
 * structs; a file that predates the column gives its absent value). */
static int avro_prepare(ice_rd_task *t, icd_error *err)
{
    (void)err;
    for (size_t j = 0; j < t->nkcols; j++) {
        ice_vcol *kc = &t->kcols[j];
        kc->kind = ICE_VCOL_VALUES;
        kc->impl = kc; /* (non-NULL: a key column, looked up by id in each record) */
        kc->range_error = avro_range_error;
    }
    return 0;
}

/* The cells of a VALUES column for the records of the batch. */
static void fill_column(ice_rd_task *t, ice_vcol *c)
{
    const avro_src *p = t->src;
    const ice_type *type = c->field->type;
    /* a record without the field: the file predates the column */
    ice_tvalue absent = ice_rd_absent_value(t->r, t->task->data, c->field);
    c->out_of_range = false;
    for (size_t i = 0; i < p->n; i++) {
        const icd_avro_value *v = column_value(t, c, i);
        char what[96];
        if (!v) {
            c->v[i] = absent;
        } else if (icd_avro_value_is_null(v)) {
            c->v[i] = (ice_tvalue){0};
        } else if (!ice_avro_ts_in_range(v, type, what, sizeof what)) {
            ice_tv_mark_out_of_range(&c->v[i]);
            c->out_of_range = true;
        } else {
            c->v[i] = ice_avro_tvalue(v, type);
        }
    }
}

/* ice_data_ops.open */
static int avro_open(ice_rd_task *t, int64_t *num_rows, icd_error *err)
{
    ice_scan_reader *r = t->r;
    const ice_content_file *df = t->task->data;
    *num_rows = -1;
    for (size_t k = 0; k < r->nfields; k++)
        if (has_variant(r->fields[k]->type))
            return icd_fail(err, ICD_EUNSUPPORTED, df->path, -1,
                            "column %s: variant values in Avro data files are not supported yet",
                            r->fields[k]->name);
    avro_src *p = calloc(1, sizeof *p);
    if (!p) return icd_fail_nomem(err);
    t->src = p;
    p->arena = (icd_arena)ICD_ARENA_INIT;
    if (!(p->recs = malloc(AVRO_BATCH_ROWS * sizeof *p->recs))) return icd_fail_nomem(err);
    icd_file *file;
    ICD_TRY(ice_rd_open_entry(r, df, &file, err));
    return icd_avro_reader_open_file(file, true, &p->ar, err);
}

/* ice_data_ops.next: up to AVRO_BATCH_ROWS records of one container block. */
static int avro_next(ice_rd_task *t, icd_error *err)
{
    avro_src *p = t->src;
    p->first += (int64_t)p->n; /* the previous batch is done with */
    p->n = 0;
    icd_arena_reset(&p->arena);
    while (!p->eof) {
        ICD_TRY(icd_avro_reader_next(p->ar, &p->arena, &p->recs[p->n], &p->eof, err));
        if (!p->eof) p->n++;
        bool block_done = icd_avro_reader_block_read(p->ar) >= icd_avro_reader_block_count(p->ar);
        if (p->n && (p->eof || p->n == AVRO_BATCH_ROWS || block_done)) break;
    }
    if (!p->n) return 0;
    ICD_TRY(ice_rd_batch_begin(t, p->n, err));
    for (size_t k = 0; k < t->batch.ncols + t->nkcols; k++) {
        ice_vcol *c = ice_rd_col(t, k);
        if (c->kind == ICE_VCOL_VALUES) fill_column(t, c);
    }
    t->batch.first_row = p->first;
    t->batch.nrows = p->n;
    return 1;
}

static void avro_close(ice_rd_task *t)
{
    avro_src *p = t->src;
    if (!p) return;
    icd_arena_free(&p->arena);
    icd_avro_reader_free(p->ar);
    free(p->recs);
    free(p->field_at);
    free(p->absent);
    free(p);
    t->src = NULL;
}

const ice_data_ops ice_data_avro = {avro_open, avro_bind, avro_prepare, avro_next, avro_close};
