/*
 * Drives the native Parquet writer (formats/parquet/writer.h through iceberg/pq_write.h)
 * for its tests and benchmark: the Iceberg read of every Parquet data file of a table's
 * current snapshot, written as one Parquet file each, the original file's schema
 * mirrored.
 *
 * Usage: tool_pqwrite METADATA.json OUTDIR [--remap FROM=TO]... [--codec NAME]
 *          [--page-rows N] [--rg-bytes N] [--dict-bytes N] [--no-dict] [--no-mirror]
 *          [--no-verify] [--only SUBSTRING]
 *
 * For task i it writes OUTDIR/i.parquet and OUTDIR/i.pos (the file positions of the rows
 * kept, one per line), and prints one JSON line:
 *   {"task": i, "data_file": original path (local), "written": path, "rows": n,
 *    "deletes": number of delete files, "bytes": file size,
 *    "rows_equal": the written file read back through the Iceberg reader (no deletes)
 *                  gives exactly the JSON rows of the original task (with its deletes),
 *    "schema_diffs": [{"field_id", "path", "read_type", "original", "written"}, ...]
 *                    every field id of the written schema whose physical type, length,
 *                    converted / logical annotation, repetition or group shape differs
 *                    from the original file's node of that id}
 * Data files that are not Parquet print {"task": i, "skipped": "ORC"}. --no-verify
 * leaves out the read-back and the schema comparison, --ignore-deletes writes the data
 * rows as they are (both for the benchmark). At the end one JSON line on stderr:
 * {"rows", "bytes", "seconds" (reading + writing, all tasks), "maxRssKiB"}. Exit status 1
 * on the first error (one line on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "base/arena.h"
#include "base/buf.h"
#include "formats/parquet/parquet.h"
#include "formats/parquet/writer.h"
#include "iceberg/metadata.h"
#include "iceberg/pq_write.h"
#include "iceberg/reader.h"
#include "iceberg/scan_json.h"
#include "iceberg/scan_plan.h"
#include "io/fileio.h"

static int file_write(void *ctx, const void *p, size_t n, icd_error *err)
{
    if (fwrite(p, 1, n, ctx) != n) return icd_fail(err, ICD_EIO, NULL, -1, "write failed");
    return 0;
}

/* The JSON sink with begin_row wrapped to record the row positions. */
static ice_row_sink g_json_sink;
static FILE *g_pos;
static void pos_begin_row(void *ctx, const char *file, int64_t pos)
{
    if (g_pos) fprintf(g_pos, "%lld\n", (long long)pos);
    g_json_sink.begin_row(ctx, file, pos);
}

static int read_json(ice_scan_reader *r, const ice_scan_task *t, icd_buf *out, FILE *pos,
                     icd_error *err)
{
    ice_scan_json j;
    memset(&j, 0, sizeof j);
    j.out = out;
    ice_scan_json_sink(&j, &g_json_sink);
    ice_row_sink s = g_json_sink;
    s.begin_row = pos_begin_row;
    s.columns = NULL; /* row by row: whole batches call no begin_row */
    g_pos = pos;
    ice_read_stats st = {0};
    int rc = ice_scan_reader_read_task(r, t, &s, &st, err);
    g_pos = NULL;
    ice_scan_json_free(&j);
    return rc;
}

static void logical_text(icd_buf *b, const pq_node *n)
{
    const pq_logical_type *l = &n->logical;
    icd_buf_printf(b, "%s", n->physical_type >= 0 ? pq_type_name(n->physical_type) : "group");
    if (n->physical_type == PQ_FIXED_LEN_BYTE_ARRAY) icd_buf_printf(b, "[%d]", n->type_length);
    icd_buf_printf(b, " %s", pq_repetition_name(n->repetition));
    if (n->converted != PQ_CONV_NONE)
        icd_buf_printf(b, " conv=%s", pq_converted_name(n->converted));
    if (l->kind != PQ_LT_NONE) {
        icd_buf_printf(b, " logical=%s", pq_logical_name(l->kind));
        if (l->kind == PQ_LT_DECIMAL) icd_buf_printf(b, "(%d,%d)", l->precision, l->scale);
        if (l->kind == PQ_LT_TIME || l->kind == PQ_LT_TIMESTAMP)
            icd_buf_printf(b, "(%s,%s)",
                           l->unit == PQ_UNIT_MILLIS  ? "MILLIS"
                           : l->unit == PQ_UNIT_NANOS ? "NANOS"
                                                      : "MICROS",
                           l->utc ? "utc" : "local");
        if (l->kind == PQ_LT_INTEGER)
            icd_buf_printf(b, "(%d,%s)", l->bit_width, l->is_signed ? "signed" : "unsigned");
    }
    if (n->elem->has_scale || n->elem->has_precision)
        icd_buf_printf(b, " dec=(%d,%d)", n->elem->precision, n->elem->scale);
    if (n->kind == PQ_NODE_LIST)
        icd_buf_printf(b, " list(%s,%s)", n->repeated->name, n->element_is_repeated ? "2" : "3");
    if (n->kind == PQ_NODE_MAP) icd_buf_printf(b, " map(%s)", n->repeated->name);
}

static void json_str(icd_buf *b, const char *s)
{
    icd_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') icd_buf_putc(b, '\\');
        if ((unsigned char)*s < 0x20)
            icd_buf_printf(b, "\\u%04x", *s);
        else
            icd_buf_putc(b, *s);
    }
    icd_buf_putc(b, '"');
}

static const ice_field *find_field(const ice_type *t, int32_t id)
{
    if (!t) return NULL;
    const ice_field *kids[2] = {t->key, t->value};
    if (t->kind == ICE_T_STRUCT)
        for (size_t i = 0; i < t->nfields; i++) {
            if (t->fields[i].id == id) return &t->fields[i];
            const ice_field *f = find_field(t->fields[i].type, id);
            if (f) return f;
        }
    if (t->kind == ICE_T_LIST) {
        if (t->element->id == id) return t->element;
        return find_field(t->element->type, id);
    }
    if (t->kind == ICE_T_MAP)
        for (int i = 0; i < 2; i++) {
            if (kids[i]->id == id) return kids[i];
            const ice_field *f = find_field(kids[i]->type, id);
            if (f) return f;
        }
    return NULL;
}

/* Appends the schema differences (JSON array items) between written and original. */
static void schema_diffs(icd_buf *b, const pq_schema *w, const pq_schema *o, const ice_type *root)
{
    bool first = true;
    for (uint32_t i = 1; i < w->num_nodes; i++) {
        const pq_node *n = &w->nodes[i];
        if (!n->has_field_id) continue;
        const pq_node *m = pq_schema_find_field_id(o, n->field_id);
        if (!m) continue; /* a column the file lacks */
        icd_buf x = ICD_BUF_INIT, y = ICD_BUF_INIT;
        logical_text(&x, n);
        logical_text(&y, m);
        if (strcmp(x.data, y.data)) {
            icd_buf t = ICD_BUF_INIT;
            const ice_field *f = find_field(root, n->field_id);
            if (f) ice_type_format(&t, f->type);
            icd_buf_printf(b, "%s{\"field_id\":%d,\"path\":", first ? "" : ",", n->field_id);
            json_str(b, n->dotted);
            icd_buf_puts(b, ",\"read_type\":");
            json_str(b, t.data ? t.data : "?");
            icd_buf_puts(b, ",\"original\":");
            json_str(b, y.data);
            icd_buf_puts(b, ",\"written\":");
            json_str(b, x.data);
            icd_buf_putc(b, '}');
            first = false;
            icd_buf_free(&t);
        }
        icd_buf_free(&x);
        icd_buf_free(&y);
    }
}

static int parse_codec(const char *s)
{
    if (!strcmp(s, "uncompressed")) return PQ_CODEC_UNCOMPRESSED;
    if (!strcmp(s, "snappy")) return PQ_CODEC_SNAPPY;
    if (!strcmp(s, "gzip")) return PQ_CODEC_GZIP;
    if (!strcmp(s, "zstd")) return PQ_CODEC_ZSTD;
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: tool_pqwrite METADATA.json OUTDIR [options]\n");
        return 2;
    }
    const char *mdpath = argv[1], *outdir = argv[2];
#ifdef __GLIBC__
    /* as `icedruid stage` does (cli_keep_freed_memory): the buffers of the next file reuse
     * the heap instead of faulting fresh pages in */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
    icd_error err;
    icd_error_clear(&err);
    icd_fileio *io;
    if (icd_fileio_new(&io, &err)) return 1;
    ice_metadata *md = NULL;
    ice_scan_plan *plan = NULL;
    ice_scan_reader *r = NULL;
    pq_write_options wo = {.codec = PQ_CODEC_SNAPPY};
    bool mirror = true, verify = true, ignore_deletes = false;
    const char *only = NULL;
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--remap") && v) {
            if (icd_fileio_add_remap_arg(io, v, &err)) goto fail;
            i++;
        } else if (!strcmp(a, "--codec") && v) {
            wo.codec = parse_codec(v);
            if (wo.codec < 0) {
                fprintf(stderr, "unknown codec %s\n", v);
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--page-rows") && v) {
            wo.page_rows = (size_t)atoll(v);
            i++;
        } else if (!strcmp(a, "--rg-bytes") && v) {
            wo.row_group_bytes = (size_t)atoll(v);
            i++;
        } else if (!strcmp(a, "--dict-bytes") && v) {
            wo.dict_bytes = (size_t)atoll(v);
            i++;
        } else if (!strcmp(a, "--only") && v) {
            only = v;
            i++;
        } else if (!strcmp(a, "--no-dict")) {
            wo.no_dictionary = true;
        } else if (!strcmp(a, "--no-mirror")) {
            mirror = false;
        } else if (!strcmp(a, "--no-verify")) {
            verify = false;
        } else if (!strcmp(a, "--ignore-deletes")) {
            ignore_deletes = true;
        } else {
            fprintf(stderr, "unknown option %s\n", a);
            return 2;
        }
    }
    if (ice_metadata_load(io, mdpath, &md, &err)) goto fail;
    ice_scan_opts so = {.select = {.kind = ICE_SELECT_CURRENT}, .case_sensitive = true};
    if (ice_scan_plan_build(io, md, &so, &plan, &err)) goto fail;
    const ice_schema *schema = ice_scan_plan_schema(plan);
    if (ice_scan_reader_new(io, md, schema, NULL, 0, &r, &err)) goto fail;
    const ice_field *fields = schema->root.fields;
    size_t nfields = schema->root.nfields;
    double write_secs = 0;
    int64_t total_rows = 0, total_bytes = 0;
    for (size_t i = 0; i < ice_scan_plan_task_count(plan); i++) {
        const ice_scan_task *t = ice_scan_plan_task(plan, i);
        ice_scan_task nodel;
        if (ignore_deletes) { /* the data rows as they are (the benchmark) */
            nodel = *t;
            nodel.ndeletes = 0;
            nodel.deletes = NULL;
            t = &nodel;
        }
        if (only && !strstr(t->data->path, only)) continue;
        if (t->data->format != ICE_FORMAT_PARQUET) {
            printf("{\"task\":%zu,\"skipped\":\"%s\"}\n", i,
                   t->data->format == ICE_FORMAT_ORC ? "ORC" : "AVRO");
            continue;
        }
        char *local = icd_fileio_resolve(io, t->data->path);
        pq_file *orig = NULL;
        if (!local || pq_file_open(io, t->data->path, &orig, &err)) {
            free(local);
            goto fail;
        }
        char wpath[4096], ppath[4096];
        snprintf(wpath, sizeof wpath, "%s/%zu.parquet", outdir, i);
        snprintf(ppath, sizeof ppath, "%s/%zu.pos", outdir, i);
        icd_arena arena = ICD_ARENA_INIT;
        pq_schema_element *els;
        size_t nels;
        pq_writer *w = NULL;
        ice_pqw_sink *ps = NULL;
        FILE *f = fopen(wpath, "wb");
        int rc = f ? 0 : icd_fail(&err, ICD_EIO, wpath, -1, "cannot create");
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (!rc)
            rc = ice_pqw_schema(fields, nfields, mirror ? pq_file_schema(orig) : NULL, &arena, &els,
                                &nels, &err);
        if (!rc) rc = pq_writer_new(els, nels, &wo, file_write, f, &w, &err);
        if (!rc) rc = ice_pqw_sink_new(w, fields, nfields, &ps, &err);
        ice_read_stats st = {0};
        if (!rc) rc = ice_scan_reader_read_task(r, t, ice_pqw_sink_get(ps), &st, &err);
        if (!rc) rc = ice_pqw_sink_finish(ps, &err);
        if (!rc) rc = pq_writer_close(w, &err);
        int64_t rows = ps ? ice_pqw_sink_rows(ps) : 0;
        int64_t bytes = w ? pq_writer_bytes_written(w) : 0;
        ice_pqw_sink_free(ps);
        pq_writer_free(w);
        if (f && fclose(f) && !rc) rc = icd_fail(&err, ICD_EIO, wpath, -1, "write failed");
        clock_gettime(CLOCK_MONOTONIC, &t1);
        write_secs += (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        total_rows += rows;
        total_bytes += bytes;
        icd_buf line = ICD_BUF_INIT;
        if (!rc) {
            icd_buf_printf(&line, "{\"task\":%zu,\"data_file\":", i);
            json_str(&line, local);
            icd_buf_puts(&line, ",\"written\":");
            json_str(&line, wpath);
            icd_buf_printf(&line, ",\"rows\":%lld,\"deletes\":%zu,\"bytes\":%lld", (long long)rows,
                           t->ndeletes, (long long)bytes);
        }
        if (!rc && verify) {
            /* the original task's rows (deletes applied) vs the written file's rows */
            icd_buf a = ICD_BUF_INIT, b = ICD_BUF_INIT;
            FILE *pf = fopen(ppath, "w");
            rc = read_json(r, t, &a, pf, &err);
            if (pf) fclose(pf);
            ice_content_file cf = *t->data;
            cf.path = wpath;
            cf.record_count = rows;
            cf.file_size = bytes;
            cf.stats = NULL;
            cf.nstats = 0;
            ice_scan_task wt = {.data = &cf};
            if (!rc) rc = read_json(r, &wt, &b, NULL, &err);
            pq_file *wf = NULL;
            if (!rc) rc = pq_file_open(io, wpath, &wf, &err);
            if (!rc) {
                bool eq = a.len == b.len && (!a.len || !memcmp(a.data, b.data, a.len));
                icd_buf_printf(&line, ",\"rows_equal\":%s,\"schema_diffs\":[",
                               eq ? "true" : "false");
                schema_diffs(&line, pq_file_schema(wf), pq_file_schema(orig), &schema->root);
                icd_buf_putc(&line, ']');
                if (!eq && getenv("PQW_DUMP")) {
                    fprintf(stderr, "--- original\n%.2000s\n--- written\n%.2000s\n", a.data,
                            b.data);
                }
            }
            pq_file_close(wf);
            icd_buf_free(&a);
            icd_buf_free(&b);
        }
        if (!rc) {
            icd_buf_putc(&line, '}');
            puts(line.data);
        }
        icd_buf_free(&line);
        icd_arena_free(&arena);
        pq_file_close(orig);
        if (rc) {
            icd_error_set_file(&err, local);
            free(local);
            goto fail;
        }
        free(local);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(stderr, "{\"rows\":%lld,\"bytes\":%lld,\"seconds\":%.3f,\"maxRssKiB\":%ld}\n",
            (long long)total_rows, (long long)total_bytes, write_secs, ru.ru_maxrss);
    ice_scan_reader_free(r);
    ice_scan_plan_free(plan);
    ice_metadata_free(md);
    icd_fileio_free(io);
    return 0;
fail : {
    char msg[2200];
    icd_error_format(&err, msg, sizeof msg);
    fprintf(stderr, "tool_pqwrite: %s\n", msg);
    ice_scan_reader_free(r);
    ice_scan_plan_free(plan);
    ice_metadata_free(md);
    icd_fileio_free(io);
    return 1;
}
}
