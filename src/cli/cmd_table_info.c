/*
 * Table inspection commands, as users know them from DuckDB (iceberg_snapshots,
 * iceberg_metadata) and pyiceberg (describe, schema, spec, files, list-refs):
 *   icedruid snapshots|history|refs|schema|partitions|files TABLE [--format table|json]
 * Each opens the table (cli_table_open: directory, metadata file or --catalog), fills a
 * grid of rows and prints it as aligned columns (the default on a terminal) or as one JSON
 * array of objects (the default on a pipe). Ids (snapshot ids, parents) are printed in JSON
 * both as numbers and as strings ("snapshot-id-str"): a 64-bit id does not survive tools
 * that read JSON numbers as doubles (jq 1.6, JavaScript).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/arena.h"
#include "base/array.h"
#include "base/jsonw.h"
#include "cli/inspect.h"
#include "cli/table_args.h"
#include "iceberg/scan_plan.h"
#include "iceberg/schema.h"
#include "iceberg/transform.h"
#include "iceberg/types.h"

typedef enum col_kind { COL_TEXT, COL_NUM, COL_ID, COL_BOOL } col_kind;

typedef struct grid_col {
    const char *name;
    col_kind kind;
} grid_col;

/* Rows of cells; a NULL cell is printed as "-" in a table and null in JSON. */
typedef struct grid {
    const grid_col *cols;
    size_t ncols;
    const char **cells; /* nrows * ncols */
    size_t nrows, cap;
    icd_arena arena;
    bool oom;
} grid;

static void grid_init(grid *g, const grid_col *cols, size_t ncols)
{
    memset(g, 0, sizeof *g);
    g->cols = cols;
    g->ncols = ncols;
    g->arena = (icd_arena)ICD_ARENA_INIT;
}

static void grid_free(grid *g)
{
    free(g->cells);
    icd_arena_free(&g->arena);
}

/* Starts a row; its cells are then set with cell_*(g, column, ...). */
static void grid_row(grid *g)
{
    if (g->oom) return;
    if (ICD_ARRAY_RESERVE(g->cells, g->cap, (g->nrows + 1) * g->ncols, 16 * g->ncols)) {
        g->oom = true;
        return;
    }
    for (size_t i = 0; i < g->ncols; i++)
        g->cells[g->nrows * g->ncols + i] = NULL;
    g->nrows++;
}

static void cell_str(grid *g, size_t col, const char *s)
{
    if (g->oom || !g->nrows || !s) return;
    char *c = icd_arena_strdup(&g->arena, s);
    if (!c) g->oom = true;
    g->cells[(g->nrows - 1) * g->ncols + col] = c;
}

static void cell_i64(grid *g, size_t col, int64_t v)
{
    char t[24];
    snprintf(t, sizeof t, "%lld", (long long)v);
    cell_str(g, col, t);
}

static void cell_time(grid *g, size_t col, int64_t ms)
{
    icd_buf b = ICD_BUF_INIT;
    int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
    icd_fmt_timestamp(&b, days, (ms - days * 86400000) * 1000000, 3, true);
    icd_buf_putc(&b, '\0');
    if (!icd_buf_ok(&b)) g->oom = true;
    cell_str(g, col, (const char *)b.data);
    icd_buf_free(&b);
}

static void print_json(const grid *g, icd_buf *b)
{
    icd_buf_putc(b, '[');
    for (size_t r = 0; r < g->nrows; r++) {
        icd_buf_puts(b, r ? ",\n{" : "{");
        for (size_t c = 0; c < g->ncols; c++) {
            const char *v = g->cells[r * g->ncols + c];
            if (c) icd_buf_putc(b, ',');
            icd_json_cstr(b, g->cols[c].name);
            icd_buf_putc(b, ':');
            if (!v)
                icd_buf_puts(b, "null");
            else if (g->cols[c].kind == COL_TEXT)
                icd_json_cstr(b, v);
            else
                icd_buf_puts(b, v);
            if (g->cols[c].kind == COL_ID) {
                icd_buf_putc(b, ',');
                icd_buf_printf(b, "\"%s-str\":", g->cols[c].name);
                if (v)
                    icd_json_cstr(b, v);
                else
                    icd_buf_puts(b, "null");
            }
        }
        icd_buf_putc(b, '}');
    }
    icd_buf_puts(b, "]\n");
}

static size_t utf8_width(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static void print_table(const grid *g, icd_buf *b)
{
    size_t w[32] = {0};
    for (size_t c = 0; c < g->ncols && c < 32; c++) {
        w[c] = utf8_width(g->cols[c].name);
        for (size_t r = 0; r < g->nrows; r++) {
            const char *v = g->cells[r * g->ncols + c];
            size_t l = v ? utf8_width(v) : 1;
            if (l > w[c]) w[c] = l;
        }
    }
    for (size_t r = 0; r <= g->nrows; r++) {
        for (size_t c = 0; c < g->ncols; c++) {
            const char *v = r ? g->cells[(r - 1) * g->ncols + c] : g->cols[c].name;
            if (!v) v = "-";
            bool last = c + 1 == g->ncols;
            size_t pad = w[c] - utf8_width(v);
            bool right = g->cols[c].kind != COL_TEXT;
            if (right)
                for (size_t k = 0; k < pad; k++)
                    icd_buf_putc(b, ' ');
            icd_buf_puts(b, v);
            if (!right && !last)
                for (size_t k = 0; k < pad; k++)
                    icd_buf_putc(b, ' ');
            if (!last) icd_buf_puts(b, "  ");
        }
        icd_buf_putc(b, '\n');
    }
    if (!g->nrows) icd_buf_puts(b, "(none)\n");
}

/* Prints the grid in the chosen --format on stdout (or -o FILE). */
static int grid_print(const grid *g, const cli_table_args *a)
{
    if (g->oom) return cli_report(&(icd_error){ICD_ENOMEM, -1, "", "out of memory"});
    bool table = a->format ? !strcmp(a->format, "table") : isatty(STDOUT_FILENO);
    cli_out out;
    cli_out_init(&out, stdout);
    if (table)
        print_table(g, &out.buf);
    else
        print_json(g, &out.buf);
    icd_error err;
    if (cli_out_finish(&out, &err)) return cli_report(&err);
    return CLI_OK;
}

/* ---- the commands ----------------------------------------------------------------------- */

typedef int (*fill_fn)(cli_table_args *a, const ice_metadata *md, grid *g, icd_error *err);

static bool is_ancestor(const ice_metadata *md, int64_t id)
{
    const ice_snapshot *s = ice_metadata_current_snapshot(md);
    for (size_t guard = 0; s && guard < 1000000; guard++) {
        if (s->snapshot_id == id) return true;
        s = s->has_parent ? ice_metadata_snapshot(md, s->parent_snapshot_id) : NULL;
    }
    return false;
}

static const grid_col SNAPSHOT_COLS[] = {{"snapshot-id", COL_ID},      {"parent-id", COL_ID},
                                         {"timestamp", COL_TEXT},      {"operation", COL_TEXT},
                                         {"sequence-number", COL_NUM}, {"schema-id", COL_NUM},
                                         {"current", COL_BOOL},        {"manifest-list", COL_TEXT}};

static int fill_snapshots(cli_table_args *a, const ice_metadata *md, grid *g, icd_error *err)
{
    const ice_snapshot *cur = ice_metadata_current_snapshot(md);
    for (size_t i = 0; i < ice_metadata_snapshot_count(md); i++) {
        const ice_snapshot *s = ice_metadata_snapshot_at(md, i);
        grid_row(g);
        cell_i64(g, 0, s->snapshot_id);
        if (s->has_parent) cell_i64(g, 1, s->parent_snapshot_id);
        cell_time(g, 2, s->timestamp_ms);
        cell_str(g, 3, s->operation);
        cell_i64(g, 4, s->sequence_number);
        if (s->has_schema_id) cell_i64(g, 5, s->schema_id);
        cell_str(g, 6, s == cur ? "true" : "false");
        cell_str(g, 7, s->manifest_list);
    }
    return 0;
}

static const grid_col HISTORY_COLS[] = {{"made-current-at", COL_TEXT},
                                        {"snapshot-id", COL_ID},
                                        {"parent-id", COL_ID},
                                        {"is-current-ancestor", COL_BOOL}};

static int fill_history(cli_table_args *a, const ice_metadata *md, grid *g, icd_error *err)
{
    for (size_t i = 0; i < ice_metadata_snapshot_log_count(md); i++) {
        const ice_snapshot_log_entry *e = ice_metadata_snapshot_log_at(md, i);
        const ice_snapshot *s = ice_metadata_snapshot(md, e->snapshot_id);
        grid_row(g);
        cell_time(g, 0, e->timestamp_ms);
        cell_i64(g, 1, e->snapshot_id);
        if (s && s->has_parent) cell_i64(g, 2, s->parent_snapshot_id);
        cell_str(g, 3, is_ancestor(md, e->snapshot_id) ? "true" : "false");
    }
    return 0;
}

static const grid_col REF_COLS[] = {{"name", COL_TEXT},
                                    {"type", COL_TEXT},
                                    {"snapshot-id", COL_ID},
                                    {"max-ref-age-ms", COL_NUM},
                                    {"min-snapshots-to-keep", COL_NUM},
                                    {"max-snapshot-age-ms", COL_NUM}};

static int fill_refs(cli_table_args *a, const ice_metadata *md, grid *g, icd_error *err)
{
    for (size_t i = 0; i < ice_metadata_ref_count(md); i++) {
        const ice_ref *r = ice_metadata_ref_at(md, i);
        grid_row(g);
        cell_str(g, 0, r->name);
        cell_str(g, 1, r->type == ICE_REF_TAG ? "tag" : "branch");
        cell_i64(g, 2, r->snapshot_id);
        if (r->has_max_ref_age_ms) cell_i64(g, 3, r->max_ref_age_ms);
        if (r->has_min_snapshots_to_keep) cell_i64(g, 4, r->min_snapshots_to_keep);
        if (r->has_max_snapshot_age_ms) cell_i64(g, 5, r->max_snapshot_age_ms);
    }
    return 0;
}

static const grid_col SCHEMA_COLS[] = {{"field-id", COL_NUM},
                                       {"name", COL_TEXT},
                                       {"type", COL_TEXT},
                                       {"required", COL_BOOL},
                                       {"doc", COL_TEXT}};

static int fill_schema(cli_table_args *a, const ice_metadata *md, grid *g, icd_error *err)
{
    const ice_schema *s = ice_metadata_current_schema(md);
    if (!s)
        return icd_fail(err, ICD_EINVALID, ice_metadata_file(md), -1, "the table has no schema");
    icd_buf b = ICD_BUF_INIT;
    /* top-level columns first, in schema order; nested fields follow by id */
    for (size_t i = 0; i < s->n_index; i++) {
        const ice_schema_entry *e = &s->index[i];
        grid_row(g);
        cell_i64(g, 0, e->id);
        cell_str(g, 1, e->full_name);
        icd_buf_clear(&b);
        ice_type_format(&b, e->field->type);
        icd_buf_putc(&b, '\0');
        if (!icd_buf_ok(&b)) g->oom = true;
        cell_str(g, 2, (const char *)b.data);
        cell_str(g, 3, e->field->required ? "true" : "false");
        cell_str(g, 4, e->field->doc);
    }
    icd_buf_free(&b);
    return 0;
}

static const grid_col PARTITION_COLS[] = {{"spec-id", COL_NUM},  {"default", COL_BOOL},
                                          {"field-id", COL_NUM}, {"name", COL_TEXT},
                                          {"source", COL_TEXT},  {"transform", COL_TEXT}};

static int fill_partitions(cli_table_args *a, const ice_metadata *md, grid *g, icd_error *err)
{
    const ice_partition_spec *def = ice_metadata_default_spec(md);
    const ice_schema *schema = ice_metadata_current_schema(md);
    icd_buf b = ICD_BUF_INIT;
    for (size_t i = 0; i < ice_metadata_spec_count(md); i++) {
        const ice_partition_spec *sp = ice_metadata_spec_at(md, i);
        for (size_t k = 0; k < sp->nfields; k++) {
            const ice_partition_field *f = &sp->fields[k];
            grid_row(g);
            cell_i64(g, 0, sp->spec_id);
            cell_str(g, 1, sp == def ? "true" : "false");
            cell_i64(g, 2, f->field_id);
            cell_str(g, 3, f->name);
            const ice_schema_entry *e =
                schema ? ice_schema_entry_by_id(schema, f->source_id) : NULL;
            if (e)
                cell_str(g, 4, e->full_name);
            else
                cell_i64(g, 4, f->source_id);
            icd_buf_clear(&b);
            ice_transform_format(&b, &f->transform);
            icd_buf_putc(&b, '\0');
            if (!icd_buf_ok(&b)) g->oom = true;
            cell_str(g, 5, (const char *)b.data);
        }
        if (!sp->nfields) {
            grid_row(g);
            cell_i64(g, 0, sp->spec_id);
            cell_str(g, 1, sp == def ? "true" : "false");
            cell_str(g, 3, "(unpartitioned)");
        }
    }
    icd_buf_free(&b);
    return 0;
}

static const grid_col FILE_COLS[] = {{"content", COL_TEXT},        {"format", COL_TEXT},
                                     {"record-count", COL_NUM},    {"file-size", COL_NUM},
                                     {"sequence-number", COL_NUM}, {"path", COL_TEXT}};

static int cmp_ptr(const void *x, const void *y)
{
    const void *a = *(const void *const *)x, *b = *(const void *const *)y;
    return a < b ? -1 : a > b;
}

static void file_row(grid *g, const ice_content_file *f)
{
    grid_row(g);
    cell_str(g, 0, ice_is_dv(f) ? "deletion-vector" : ice_content_name(f->content));
    cell_str(g, 1, ice_file_format_name(f->format));
    cell_i64(g, 2, f->record_count);
    cell_i64(g, 3, f->file_size);
    cell_i64(g, 4, f->data_seq);
    cell_str(g, 5, f->path);
}

static int fill_files(cli_table_args *a, const ice_metadata *md, grid *g, icd_error *err)
{
    ice_scan_opts opts = {cli_table_selector(a), NULL, true, a->threads, false, false};
    ice_scan_plan *plan;
    ICD_TRY(ice_scan_plan_build(cli_storage_fileio(a->storage), md, &opts, &plan, err));
    size_t n = ice_scan_plan_task_count(plan), nd = 0;
    for (size_t i = 0; i < n; i++)
        nd += ice_scan_plan_task(plan, i)->ndeletes;
    const ice_content_file **dels = calloc(nd ? nd : 1, sizeof *dels);
    if (!dels) {
        ice_scan_plan_free(plan);
        return icd_fail_nomem(err);
    }
    nd = 0;
    for (size_t i = 0; i < n; i++) {
        const ice_scan_task *t = ice_scan_plan_task(plan, i);
        file_row(g, t->data);
        for (size_t k = 0; k < t->ndeletes; k++)
            dels[nd++] = t->deletes[k];
    }
    /* a delete file applies to many data files: list it once */
    qsort(dels, nd, sizeof *dels, cmp_ptr);
    for (size_t i = 0; i < nd; i++)
        if (!i || dels[i] != dels[i - 1]) file_row(g, dels[i]);
    free(dels);
    ice_scan_plan_free(plan);
    return 0;
}

static int run_info(int argc, char **argv, const char *allowed, const grid_col *cols, size_t ncols,
                    fill_fn fill)
{
    cli_table_args a;
    int rc = cli_table_args_parse(&a, argc, argv, allowed);
    if (rc) {
        cli_table_args_free(&a);
        return rc;
    }
    icd_error err;
    icd_error_clear(&err);
    icd_table *t = NULL;
    grid g;
    grid_init(&g, cols, ncols);
    if (cli_table_open(&a, &t, &err) || fill(&a, cli_table_metadata(t), &g, &err))
        rc = cli_report(&err);
    else
        rc = grid_print(&g, &a);
    grid_free(&g);
    icd_table_free(t);
    cli_table_args_free(&a);
    return rc;
}

#define NCOLS(c) (sizeof c / sizeof c[0])

int cmd_snapshots(int argc, char **argv)
{
    return run_info(argc, argv, "format", SNAPSHOT_COLS, NCOLS(SNAPSHOT_COLS), fill_snapshots);
}

int cmd_history(int argc, char **argv)
{
    return run_info(argc, argv, "format", HISTORY_COLS, NCOLS(HISTORY_COLS), fill_history);
}

int cmd_refs(int argc, char **argv)
{
    return run_info(argc, argv, "format", REF_COLS, NCOLS(REF_COLS), fill_refs);
}

int cmd_schema(int argc, char **argv)
{
    return run_info(argc, argv, "format", SCHEMA_COLS, NCOLS(SCHEMA_COLS), fill_schema);
}

int cmd_partitions(int argc, char **argv)
{
    return run_info(argc, argv, "format", PARTITION_COLS, NCOLS(PARTITION_COLS), fill_partitions);
}

int cmd_files(int argc, char **argv)
{
    return run_info(argc, argv, "format,snapshot-id,as-of,ref,threads", FILE_COLS, NCOLS(FILE_COLS),
                    fill_files);
}
