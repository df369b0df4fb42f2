/*
 * `icedruid tasks TABLE [--snapshot-id ID | --as-of TIME | --ref NAME] [--filter FILTER.json]
 * [--remap FROM=TO]...`: the scan plan as JSON — the snapshot, its schema, and per data file
 * the delete files that apply to it (design.md §2), then the plan's counts and residual
 * (after the tasks: the plan is streamed in one pass over the data manifests). FILTER.json
 * is a Druid icebergFilter object; it prunes data files by partition values and column
 * metrics, and the output tells which tasks keep a residual (rows the filter still has to
 * be checked on).
 */
#include <stdio.h>
#include <string.h>

#include "base/jsonw.h"
#include "base/ptrtext.h"
#include "cli/inspect.h"
#include "cli/table_args.h"
#include "druid/rows/timestamp.h"
#include "druid/plan/to_iceberg.h"
#include "iceberg/literal.h"
#include "iceberg/scan_plan.h"
#include "iceberg/schema.h"

static void put_partition(icd_buf *b, const ice_content_file *f, const ice_metadata *md)
{
    const ice_partition_spec *spec = ice_metadata_spec(md, f->spec_id);
    icd_buf_putc(b, '{');
    for (int32_t i = 0; i < f->npartition; i++) {
        if (i) icd_buf_putc(b, ',');
        icd_json_cstr(b, spec && (size_t)i < spec->nfields ? spec->fields[i].name : "?");
        icd_buf_putc(b, ':');
        ice_literal_to_json(b, &f->partition[i]);
    }
    icd_buf_putc(b, '}');
}

/* (an icd_ptr_text writer: key is the delete file) */
static void put_delete(icd_buf *b, const void *key)
{
    const ice_content_file *d = key;
    icd_buf_puts(b, "{\"path\":");
    icd_json_cstr(b, d->path);
    icd_buf_puts(b, ",\"kind\":");
    icd_json_cstr(b, ice_is_dv(d) ? "deletion_vector" : ice_content_name(d->content));
    icd_buf_puts(b, ",\"format\":");
    icd_json_cstr(b, ice_file_format_name(d->format));
    icd_buf_puts(b, ",\"sequence_number\":");
    icd_json_i64(b, d->data_seq);
    icd_buf_puts(b, ",\"record_count\":");
    icd_json_i64(b, d->record_count);
    icd_buf_puts(b, ",\"file_size_in_bytes\":");
    icd_json_i64(b, d->file_size);
    if (d->content == ICE_CONTENT_EQUALITY_DELETES) {
        icd_buf_puts(b, ",\"equality_ids\":[");
        for (int32_t i = 0; i < d->nequality_ids; i++) {
            if (i) icd_buf_putc(b, ',');
            icd_json_i64(b, d->equality_ids[i]);
        }
        icd_buf_putc(b, ']');
    }
    if (d->referenced_data_file) {
        icd_buf_puts(b, ",\"referenced_data_file\":");
        icd_json_cstr(b, d->referenced_data_file);
    }
    if (ice_is_dv(d)) {
        icd_buf_puts(b, ",\"content_offset\":");
        icd_json_i64(b, d->content_offset);
        icd_buf_puts(b, ",\"content_size_in_bytes\":");
        icd_json_i64(b, d->content_size);
    }
    icd_buf_putc(b, '}');
}

/* The JSON text of each delete file, written once: a delete file applies to many data
 * files (a global equality delete to every one), and with a million data files the same
 * texts were formatted millions of times. Keyed by the entry's address (delete files live
 * as long as the stream); within ICD_PTR_TEXT_MAX bytes, beyond which texts are formatted each
 * time. */

/* A constant piece of text: its length is known at compile time. */
#define put_lit(b, text) icd_buf_append((b), (text), sizeof(text) - 1)

typedef struct task_writer {
    icd_jsonw *w;
    const ice_metadata *md;
    icd_ptr_text dels; /* entry address -> its text */
} task_writer;

static int put_tasks(void *ctx, ice_scan_batch *batch, icd_error *err)
{
    (void)err;
    task_writer *tw = ctx;
    icd_buf *b = &tw->w->buf;
    for (size_t j = 0; j < batch->ntasks; j++) {
        const ice_scan_task *t = &batch->tasks[j];
        const ice_content_file *d = t->data;
        ice_scan_tasks_prefetch(batch->tasks, batch->ntasks, j);
        /* (the literal pieces in as few appends as they can go; a format name needs no
         * escaping) */
        if (batch->first + j)
            put_lit(b, ",\n{\"data_file\":{\"path\":");
        else
            put_lit(b, "\n{\"data_file\":{\"path\":");
        icd_json_cstr(b, d->path);
        put_lit(b, ",\"format\":\"");
        icd_buf_puts(b, ice_file_format_name(d->format));
        put_lit(b, "\",\"file_size_in_bytes\":");
        icd_json_i64(b, d->file_size);
        icd_buf_puts(b, ",\"record_count\":");
        icd_json_i64(b, d->record_count);
        icd_buf_puts(b, ",\"spec_id\":");
        icd_json_i64(b, d->spec_id);
        icd_buf_puts(b, ",\"partition\":");
        put_partition(b, d, tw->md);
        icd_buf_puts(b, ",\"sequence_number\":");
        icd_json_i64(b, d->data_seq);
        icd_buf_puts(b, ",\"file_sequence_number\":");
        icd_json_i64(b, d->file_seq);
        icd_buf_puts(b, "},\"delete_files\":[");
        for (size_t k = 0; k < t->ndeletes; k++) {
            if (k) icd_buf_putc(b, ',');
            icd_ptr_text_put(&tw->dels, b, t->deletes[k], put_delete);
        }
        icd_buf_puts(b, "],\"residual\":");
        icd_buf_puts(b, t->has_residual ? "true" : "false");
        icd_buf_putc(b, '}');
        icd_jsonw_maybe_flush(tw->w);
    }
    return 0;
}

/* Streams the plan in one run: memory is the delete files and a window of data manifests,
 * plus one task's JSON and the stream's chunk, whatever the number of tasks. The counts
 * and the residual are known once every task is out, so they follow the task list. */
static int put_plan(icd_jsonw *w, ice_scan_stream *st, const ice_metadata *md, icd_error *err)
{
    icd_buf *b = &w->buf;
    const ice_snapshot *s = ice_scan_stream_snapshot(st);
    const ice_schema *schema = ice_scan_stream_schema(st);
    icd_buf_puts(b, "{\"snapshot_id\":");
    if (s)
        icd_json_i64(b, s->snapshot_id);
    else
        icd_buf_puts(b, "null");
    /* the id as a string too: JSON readers that use doubles round 64-bit ids */
    icd_buf_puts(b, ",\"snapshot_id_str\":");
    if (s)
        icd_buf_printf(b, "\"%lld\"", (long long)s->snapshot_id);
    else
        icd_buf_puts(b, "null");
    icd_buf_puts(b, ",\"sequence_number\":");
    if (s)
        icd_json_i64(b, s->sequence_number);
    else
        icd_buf_puts(b, "null");
    icd_buf_puts(b, ",\"schema_id\":");
    icd_json_i64(b, schema ? schema->schema_id : -1);
    icd_buf_puts(b, ",\"tasks\":[");
    task_writer tw = {w, md, {0}};
    icd_ptr_text_init(&tw.dels, ICD_PTR_TEXT_MAX);
    int rc = ice_scan_stream_run(st, put_tasks, &tw, err);
    icd_ptr_text_free(&tw.dels);
    ICD_TRY(rc);
    ice_scan_counts c = ice_scan_stream_counts(st);
    icd_buf_printf(b,
                   "\n],\"counts\":{\"manifests\":%zu,\"manifests_read\":%zu,\"data_files\":%zu,"
                   "\"delete_files\":%zu,\"delete_files_applied\":%zu,"
                   "\"position_delete_files\":%zu,\"equality_delete_files\":%zu,"
                   "\"deletion_vectors\":%zu,\"manifests_pruned\":%zu,"
                   "\"data_files_pruned\":%zu,\"data_files_total\":%zu}",
                   c.manifests_total, c.manifests_read, c.data_files, c.delete_files_total,
                   c.delete_files, c.position_delete_files, c.equality_delete_files,
                   c.deletion_vectors, c.manifests_pruned, c.data_files_pruned, c.data_files_total);
    const char *residual = NULL;
    icd_buf_puts(b, ",\"residual\":");
    if (ice_scan_stream_has_residual(st, &residual) && residual)
        icd_json_cstr(b, residual);
    else
        icd_buf_puts(b, "null");
    icd_buf_puts(b, "}\n");
    return 0;
}

/* Reads FILTER.json (a Druid icebergFilter object) as an unbound expression. */
static int load_filter(const char *path, icd_arena *a, const ice_expr **out, icd_error *err)
{
    json_error_t jerr;
    json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!j)
        return icd_fail(err, ICD_EINVALID, path, jerr.position,
                        "cannot read the filter: %s (line %d)", jerr.text, jerr.line);
    int rc = dr_filter_json_to_ice_expr(j, "icebergFilter", dr_now_ms(), a, out, err);
    json_decref(j);
    if (rc) icd_error_set_file(err, path);
    return rc;
}

int cmd_tasks(int argc, char **argv)
{
    cli_table_args a;
    int rc = cli_table_args_parse(&a, argc, argv, "snapshot-id,as-of,ref,threads,filter,output");
    if (rc) {
        cli_table_args_free(&a);
        return rc;
    }
    icd_error err;
    icd_error_clear(&err);
    icd_table *table = NULL;
    const ice_metadata *md = NULL;
    ice_scan_stream *plan = NULL;
    icd_arena farena = ICD_ARENA_INIT;
    const ice_expr *filter = NULL;
    if (a.filter_file && load_filter(a.filter_file, &farena, &filter, &err)) {
        rc = cli_report(&err);
        goto done;
    }
    if (cli_table_open(&a, &table, &err)) {
        rc = cli_report(&err);
        goto done;
    }
    md = cli_table_metadata(table);
    ice_scan_opts opts = {cli_table_selector(&a), filter, true, a.threads, false, true};
    if (ice_scan_stream_open(cli_storage_fileio(a.storage), md, &opts, &plan, &err)) {
        rc = cli_report(&err);
        goto done;
    }
    FILE *fp;
    if ((rc = cli_open_output(a.output, &fp))) goto done;
    icd_jsonw out;
    icd_jsonw_init_file(&out, fp);
    bool failed = false;
    if (put_plan(&out, plan, md, &err)) {
        /* A damaged data manifest is only met while the tasks are written: the text not
         * yet handed on is dropped, so a plan within one chunk leaves no output at all and
         * a longer one stops mid-document (the exit code and the message say why). */
        failed = true;
        rc = cli_report(&err);
        icd_error_clear(&err);
        icd_buf_clear(&out.buf);
        icd_jsonw_finish(&out, &err);
    } else if (icd_jsonw_finish(&out, &err)) {
        rc = cli_report(&err);
    }
    int crc = cli_close_output(fp, a.output);
    if (!rc) rc = crc;
    if (failed && fp != stdout) remove(a.output); /* (no partial plan left as FILE) */
done:
    ice_scan_stream_free(plan);
    icd_arena_free(&farena);
    icd_table_free(table);
    cli_table_args_free(&a);
    return rc;
}
