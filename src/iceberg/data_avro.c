/*
 * Avro data files in the one task loop of the merge-on-read reader (reader_internal.h,
 * ice_data_avro). Records are decoded in batches of at most AVRO_BATCH_ROWS, never across
 * a container block (the values point into it); fields are bound once per file by their
 * field-id in the writer schema (an Avro data file's schema carries the ids), and a field
 * the file lacks reads as its identity-partition value, its initial-default, or null. The row
 * count is known only once the file is read: the task loop checks it at the end.
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
    icd_avro_value *recs;      /* the records of the current batch */
    icd_arena arena;           /* their values */
    int *field_at;             /* per reader field: its index in the file's record, or -1 */
    size_t *name_len;          /* per reader field */
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

/* Appends the key of record `row` of the current batch for equality delete file e. */
static void avro_key(void *ctx, size_t e, size_t row, icd_buf *k)
{
    ice_rd_task *t = ctx;
    const avro_src *p = t->src;
    const ice_content_file *del = t->mor.eq[e].df;
    const icd_avro_value *rec = &p->recs[row];
    for (int32_t c = 0; c < del->nequality_ids; c++) {
        int32_t id = del->equality_ids[c];
        const ice_field *f = ice_rd_schema_field(t->r, id); /* checked by ice_mor_init */
        const icd_avro_value *v = ice_avro_find_id(rec, id);
        char what[96];
        bool bad = v && !ice_avro_ts_in_range(v, f->type, what, sizeof what);
        if (bad && !t->key_rc)
            t->key_rc = ice_time_value_range_error(&t->key_err, t->task->data->path, f->name,
                                                   p->first + (int64_t)row, f->type, what);
        ice_tvalue tv = {0}; /* out of range: no value (the read fails after the batch) */
        if (!bad)
            tv = v ? ice_avro_tvalue(v, f->type) /* else the file predates the column */
                   : ice_rd_absent_value(t->r, t->task->data, f);
        ice_key_put(k, &tv);
    }
}

/* ice_data_ops.emit */
static int avro_emit(ice_rd_task *t, const uint8_t *sel, size_t n, icd_error *err)
{
    const avro_src *p = t->src;
    ice_scan_reader *r = t->r;
    const ice_content_file *df = t->task->data;
    const ice_row_sink *s = t->sink;
    for (size_t i = 0; i < n; i++) {
        if (!sel[i]) continue;
        const icd_avro_value *rec = &p->recs[i];
        int64_t pos = p->first + (int64_t)i;
        s->begin_row(s->ctx, df->path, pos);
        for (size_t k = 0; k < r->nfields; k++) {
            const ice_field *f = r->fields[k];
            s->field(s->ctx, f->name, p->name_len[k]);
            const icd_avro_value *v = rec->schema == p->ws
                                          ? icd_avro_value_field_at(rec, p->field_at[k])
                                          : icd_avro_value_field_by_id(rec, f->id);
            char what[96];
            if (v && !ice_avro_ts_in_range(v, f->type, what, sizeof what))
                /* a value out of range: nothing of the row is ended */
                return ice_time_value_range_error(err, df->path, f->name, pos, f->type, what);
            if (v) {
                emit_avro(s, v, f->type);
            } else {
                const ice_literal *l = ice_rd_partition_value(r, df, f->id);
                ice_emit_literal(s, l ? l : f->initial_default, f->type);
            }
        }
        ICD_TRY(ice_rd_end_row(t, err));
    }
    return 0;
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
    ICD_TRY(icd_avro_reader_open_file(file, true, &p->ar, err));
    size_t nf = r->nfields ? r->nfields : 1;
    p->field_at = malloc(nf * sizeof *p->field_at);
    p->name_len = malloc(nf * sizeof *p->name_len);
    if (!p->field_at || !p->name_len) return icd_fail_nomem(err);
    p->ws = icd_avro_reader_schema(p->ar);
    for (size_t k = 0; k < r->nfields; k++) {
        p->field_at[k] = icd_avro_schema_field_index_by_id(p->ws, r->fields[k]->id);
        p->name_len[k] = strlen(r->fields[k]->name);
    }
    return 0;
}

/* ice_data_ops.next: up to AVRO_BATCH_ROWS records of one container block. */
static int avro_next(ice_rd_task *t, uint64_t *first_row, size_t *nrows, icd_error *err)
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
    *first_row = (uint64_t)p->first;
    *nrows = p->n;
    return p->n > 0;
}

static void avro_close(ice_rd_task *t)
{
    avro_src *p = t->src;
    if (!p) return;
    icd_arena_free(&p->arena);
    icd_avro_reader_free(p->ar);
    free(p->recs);
    free(p->field_at);
    free(p->name_len);
    free(p);
    t->src = NULL;
}

const ice_data_ops ice_data_avro = {avro_open, NULL,      NULL,      avro_next,
                                    avro_key,  avro_emit, avro_close};
