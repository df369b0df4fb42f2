/*
 * The merge-on-read step of every format (reader_internal.h, ice_mor_*): a task's delete
 * files are fetched from the scan-wide cache once per task (position delete files and
 * DVs folded into one position set of the data file, equality deletes as key sets), then
 * applied to each batch the format reader decoded:
 *
 *   selection = all rows; clear the deleted positions (one ice_posset_apply per batch);
 *   for each equality delete file: the canonical keys of the rows still selected
 *   (eq_key.h, from the batch's key columns) are probed as one
 *   batch (ice_eq_set_remove_batch); a row is counted under the first delete that
 *   removes it.
 *
 * Parquet, ORC and Avro data files all go through ice_mor_apply on the format-neutral
 * batch (vbatch.h): the keys are encoded here, from the key columns' typed values.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "iceberg/reader_internal.h"

/* The planner's promise (delete_index.h, the spec's scan planning rules): a position
 * delete or DV applies from the data file's own sequence number on, an equality delete
 * only to data files written strictly before it. A task that breaks it would delete rows
 * that were written after their delete: an error, whoever made the task. */
static inline bool delete_applies(const ice_content_file *data, const ice_content_file *df)
{
    if (df->content == ICE_CONTENT_EQUALITY_DELETES) return df->data_seq > data->data_seq;
    return df->data_seq >= data->data_seq;
}

int ice_mor_init(ice_mor *m, ice_scan_reader *r, const ice_scan_task *task, ice_read_stats *stats,
                 icd_error *err)
{
    memset(m, 0, sizeof *m);
    m->keys = (icd_buf)ICD_BUF_INIT;
    ICD_TRY(ice_rd_task_positions(r, task, stats, &m->pos, &m->pos_owned, err));
    for (size_t d = 0; d < task->ndeletes; d++) {
        const ice_content_file *df = task->deletes[d];
        if (!delete_applies(task->data, df)) /* (a hand-made split, say) */
            return icd_fail(err, ICD_EINVALID, df->path, -1,
                            "delete file of sequence number %lld does not apply to data file %s "
                            "of sequence number %lld: the task breaks the spec's planning rules",
                            (long long)df->data_seq, task->data->path,
                            (long long)task->data->data_seq);
        if (df->content != ICE_CONTENT_EQUALITY_DELETES) continue;
        const cache_entry *e;
        bool loaded = false;
        ICD_TRY(ice_rd_get_entry(r, df, &e, &loaded, err));
        if (loaded) stats->delete_files_loaded++;
        /* (its key columns' fields are looked up, and checked, as the task loop binds
         * them: alloc_keys in reader.c) */
        ice_mor_eq *ne = realloc(m->eq, (m->neq + 1) * sizeof *ne);
        if (!ne) return icd_fail_nomem(err);
        m->eq = ne;
        m->eq[m->neq].keys = e->keys;
        m->eq[m->neq].df = df;
        m->neq++;
    }
    return 0;
}

/* Appends the canonical key of row `row` of the batch (ice_key_put of each key column,
 * in equality_ids order). */
static int put_key(ice_rd_task *t, ice_vcol *const cols, size_t ncols, size_t row, icd_buf *k,
                   icd_error *err)
{
    for (size_t c = 0; c < ncols; c++) {
        const ice_vcol *kc = &cols[c];
        if (kc->kind == ICE_VCOL_CONST) {
            ice_key_put(k, &kc->constant);
            continue;
        }
        assert(kc->kind == ICE_VCOL_VALUES);
        const ice_tvalue *v = &kc->v[row];
        if (v->cls == ICE_TV_INT) {
            ice_key_put_int(k, v->i);
            continue;
        }
        if (kc->out_of_range && ice_tv_is_out_of_range(v)) return kc->range_error(t, kc, row, err);
        ice_key_put(k, v);
    }
    return 0;
}

int ice_mor_apply(ice_rd_task *t, uint8_t *sel, icd_error *err)
{
    ice_mor *m = &t->mor;
    ice_read_stats *stats = t->stats;
    size_t n = t->batch.nrows;
    assert(n == 0 || sel);
    memset(sel, 1, n);
    stats->rows_read += n;
    if (m->pos)
        stats->rows_deleted_position +=
            ice_posset_apply(m->pos, (uint64_t)t->batch.first_row, n, sel);
    if (!m->neq) return 0;
    if (n + 1 > m->offcap) {
        uint32_t *no = realloc(m->offs, (n + 1) * sizeof *no);
        if (!no) return icd_fail_nomem(err);
        m->offs = no;
        m->offcap = n + 1;
    }
    for (size_t e = 0; e < m->neq; e++) {
        const ice_content_file *df = m->eq[e].df;
        ice_vcol *cols = t->batch.keys[e];
        size_t ncols = (size_t)df->nequality_ids;
        icd_buf_clear(&m->keys);
        m->offs[0] = 0;
        for (size_t i = 0; i < n; i++) {
            if (sel[i]) ICD_TRY(put_key(t, cols, ncols, i, &m->keys, err));
            if (m->keys.len > UINT32_MAX)
                return icd_fail(err, ICD_EUNSUPPORTED, df->path, -1,
                                "equality keys of one batch exceed 4 GiB");
            m->offs[i + 1] = (uint32_t)m->keys.len;
        }
        if (!icd_buf_ok(&m->keys)) return icd_fail_nomem(err);
        size_t removed =
            ice_eq_set_remove_batch(m->eq[e].keys, (const uint8_t *)m->keys.data, m->offs, n, sel);
        assert(removed <= n); /* each row is counted under the first delete removing it */
        stats->rows_deleted_equality += removed;
    }
    return 0;
}

void ice_mor_free(ice_mor *m)
{
    free(m->eq);
    free(m->offs);
    icd_buf_free(&m->keys);
    ice_posset_free(m->pos_owned);
    memset(m, 0, sizeof *m);
}
