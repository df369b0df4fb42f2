/*
 * `icedruid inspect METADATA.json | TABLE_DIR`: a normalized JSON summary of a table's
 * metadata (format version, location, schemas with types, partition specs, snapshots with
 * sequence numbers, operations and schema ids, refs, properties, logs). A directory is
 * resolved to its current metadata file by the local (Hadoop) catalog first.
 *
 * Output: one JSON object on one line; keys follow Iceberg's own spelling, plus
 * "metadata-file", "unpartitioned" per spec, and "timestamp" (ISO) per snapshot.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/jsonw.h"
#include "catalog/local.h"
#include "cli/inspect.h"
#include "iceberg/metadata.h"

bool cli_inspect_is_metadata(icd_fileio *io, const char *path)
{
    if (cat_local_is_metadata_file_name(path)) return true;
    /* local directory or S3 prefix; when that cannot be told, the table loader reports why */
    icd_error err;
    return icd_fileio_is_dir(io, path, &err) != 0;
}

static void key(icd_buf *b, bool *first, const char *k)
{
    if (!*first) icd_buf_putc(b, ',');
    *first = false;
    icd_json_cstr(b, k);
    icd_buf_putc(b, ':');
}

static void kv_i64(icd_buf *b, bool *first, const char *k, int64_t v)
{
    key(b, first, k);
    icd_json_i64(b, v);
}

static void kv_str(icd_buf *b, bool *first, const char *k, const char *v)
{
    key(b, first, k);
    if (v)
        icd_json_cstr(b, v);
    else
        icd_buf_puts(b, "null");
}

static void props_json(icd_buf *b, const ice_property *p, size_t n)
{
    icd_buf_putc(b, '{');
    for (size_t i = 0; i < n; i++) {
        if (i) icd_buf_putc(b, ',');
        icd_json_cstr(b, p[i].key);
        icd_buf_putc(b, ':');
        icd_json_cstr(b, p[i].value);
    }
    icd_buf_putc(b, '}');
}

static void mapping_json(icd_buf *b, const ice_name_mapping *m)
{
    icd_buf_putc(b, '[');
    for (size_t i = 0; i < m->n; i++) {
        const ice_mapped_field *f = &m->fields[i];
        bool first = true;
        icd_buf_puts(b, i ? ",{" : "{");
        if (f->has_field_id) kv_i64(b, &first, "field-id", f->field_id);
        key(b, &first, "names");
        icd_buf_putc(b, '[');
        for (size_t k = 0; k < f->n_names; k++) {
            if (k) icd_buf_putc(b, ',');
            icd_json_cstr(b, f->names[k]);
        }
        icd_buf_putc(b, ']');
        if (f->fields) {
            key(b, &first, "fields");
            mapping_json(b, f->fields);
        }
        icd_buf_putc(b, '}');
    }
    icd_buf_putc(b, ']');
}

static void snapshot_json(icd_buf *b, const ice_snapshot *s)
{
    bool first = true;
    icd_buf_putc(b, '{');
    kv_i64(b, &first, "snapshot-id", s->snapshot_id);
    if (s->has_parent) kv_i64(b, &first, "parent-snapshot-id", s->parent_snapshot_id);
    kv_i64(b, &first, "sequence-number", s->sequence_number);
    kv_i64(b, &first, "timestamp-ms", s->timestamp_ms);
    key(b, &first, "timestamp");
    icd_json_timestamp(b, s->timestamp_ms, 3, true);
    kv_str(b, &first, "operation", s->operation);
    if (s->has_schema_id) kv_i64(b, &first, "schema-id", s->schema_id);
    if (s->manifest_list) {
        kv_str(b, &first, "manifest-list", s->manifest_list);
    } else {
        key(b, &first, "manifests");
        icd_buf_putc(b, '[');
        for (size_t i = 0; i < s->n_manifests; i++) {
            if (i) icd_buf_putc(b, ',');
            icd_json_cstr(b, s->manifests[i]);
        }
        icd_buf_putc(b, ']');
    }
    if (s->has_first_row_id) kv_i64(b, &first, "first-row-id", s->first_row_id);
    if (s->has_added_rows) kv_i64(b, &first, "added-rows", s->added_rows);
    if (s->key_id) kv_str(b, &first, "key-id", s->key_id);
    key(b, &first, "summary");
    props_json(b, s->summary, s->n_summary);
    icd_buf_putc(b, '}');
}

static void sort_orders_json(icd_buf *b, const ice_metadata *md)
{
    icd_buf_putc(b, '[');
    for (size_t i = 0; i < ice_metadata_sort_order_count(md); i++) {
        const ice_sort_order *o = ice_metadata_sort_order_at(md, i);
        icd_buf_printf(b, "%s{\"order-id\":%d,\"fields\":[", i ? "," : "", (int)o->order_id);
        for (size_t k = 0; k < o->nfields; k++) {
            const ice_sort_field *f = &o->fields[k];
            icd_buf_puts(b, k ? ",{\"transform\":" : "{\"transform\":");
            icd_json_cstr(b, f->transform.text ? f->transform.text : "");
            icd_buf_puts(b, ",\"source-ids\":[");
            for (size_t m = 0; m < f->n_source_ids; m++)
                icd_buf_printf(b, "%s%d", m ? "," : "", (int)f->source_ids[m]);
            icd_buf_printf(b, "],\"direction\":\"%s\",\"null-order\":\"%s\"}",
                           f->descending ? "desc" : "asc",
                           f->nulls_first ? "nulls-first" : "nulls-last");
        }
        icd_buf_puts(b, "]}");
    }
    icd_buf_putc(b, ']');
}

static void summary_json(icd_buf *b, const ice_metadata *md)
{
    bool first = true;
    icd_buf_putc(b, '{');
    kv_str(b, &first, "metadata-file", ice_metadata_file(md));
    kv_i64(b, &first, "format-version", ice_metadata_format_version(md));
    kv_str(b, &first, "table-uuid", ice_metadata_table_uuid(md));
    kv_str(b, &first, "location", ice_metadata_location(md));
    kv_i64(b, &first, "last-sequence-number", ice_metadata_last_sequence_number(md));
    kv_i64(b, &first, "last-updated-ms", ice_metadata_last_updated_ms(md));
    kv_i64(b, &first, "last-column-id", ice_metadata_last_column_id(md));
    kv_i64(b, &first, "last-partition-id", ice_metadata_last_partition_id(md));
    int64_t next_row_id;
    if (ice_metadata_next_row_id(md, &next_row_id)) kv_i64(b, &first, "next-row-id", next_row_id);
    kv_i64(b, &first, "current-schema-id", ice_metadata_current_schema(md)->schema_id);
    kv_i64(b, &first, "default-spec-id", ice_metadata_default_spec(md)->spec_id);
    kv_i64(b, &first, "default-sort-order-id", ice_metadata_default_sort_order_id(md));
    const ice_snapshot *cur = ice_metadata_current_snapshot(md);
    key(b, &first, "current-snapshot-id");
    if (cur)
        icd_json_i64(b, cur->snapshot_id);
    else
        icd_buf_puts(b, "null");

    key(b, &first, "schemas");
    icd_buf_putc(b, '[');
    for (size_t i = 0; i < ice_metadata_schema_count(md); i++) {
        if (i) icd_buf_putc(b, ',');
        ice_schema_to_json(b, ice_metadata_schema_at(md, i));
    }
    icd_buf_putc(b, ']');

    key(b, &first, "partition-specs");
    icd_buf_putc(b, '[');
    for (size_t i = 0; i < ice_metadata_spec_count(md); i++) {
        const ice_partition_spec *s = ice_metadata_spec_at(md, i);
        if (i) icd_buf_putc(b, ',');
        ice_partition_spec_to_json(b, s);
        if (b->len && b->data[b->len - 1] == '}') b->len--; /* reopen the object to add one key */
        icd_buf_printf(b, ",\"unpartitioned\":%s}",
                       ice_partition_spec_is_unpartitioned(s) ? "true" : "false");
    }
    icd_buf_putc(b, ']');

    key(b, &first, "sort-orders");
    sort_orders_json(b, md);

    key(b, &first, "properties");
    props_json(b, ice_metadata_property_count(md) ? ice_metadata_property_at(md, 0) : NULL,
               ice_metadata_property_count(md));
    icd_error nerr;
    icd_error_clear(&nerr);
    const ice_name_mapping *nm = NULL;
    if (ice_metadata_name_mapping(md, &nm, &nerr)) {
        kv_str(b, &first, "name-mapping-error", nerr.message);
    } else if (nm) {
        key(b, &first, "name-mapping");
        mapping_json(b, nm);
    }

    key(b, &first, "refs");
    icd_buf_putc(b, '{');
    for (size_t i = 0; i < ice_metadata_ref_count(md); i++) {
        const ice_ref *r = ice_metadata_ref_at(md, i);
        bool f2 = true;
        if (i) icd_buf_putc(b, ',');
        icd_json_cstr(b, r->name);
        icd_buf_puts(b, ":{");
        kv_i64(b, &f2, "snapshot-id", r->snapshot_id);
        kv_str(b, &f2, "type", r->type == ICE_REF_TAG ? "tag" : "branch");
        if (r->has_min_snapshots_to_keep)
            kv_i64(b, &f2, "min-snapshots-to-keep", r->min_snapshots_to_keep);
        if (r->has_max_snapshot_age_ms)
            kv_i64(b, &f2, "max-snapshot-age-ms", r->max_snapshot_age_ms);
        if (r->has_max_ref_age_ms) kv_i64(b, &f2, "max-ref-age-ms", r->max_ref_age_ms);
        icd_buf_putc(b, '}');
    }
    icd_buf_putc(b, '}');

    key(b, &first, "snapshots");
    icd_buf_putc(b, '[');
    for (size_t i = 0; i < ice_metadata_snapshot_count(md); i++) {
        if (i) icd_buf_putc(b, ',');
        snapshot_json(b, ice_metadata_snapshot_at(md, i));
    }
    icd_buf_putc(b, ']');

    key(b, &first, "snapshot-log");
    icd_buf_putc(b, '[');
    for (size_t i = 0; i < ice_metadata_snapshot_log_count(md); i++) {
        const ice_snapshot_log_entry *e = ice_metadata_snapshot_log_at(md, i);
        icd_buf_printf(b, "%s{\"timestamp-ms\":", i ? "," : "");
        icd_json_i64(b, e->timestamp_ms);
        icd_buf_puts(b, ",\"snapshot-id\":");
        icd_json_i64(b, e->snapshot_id);
        icd_buf_putc(b, '}');
    }
    icd_buf_putc(b, ']');

    key(b, &first, "metadata-log");
    icd_buf_putc(b, '[');
    for (size_t i = 0; i < ice_metadata_metadata_log_count(md); i++) {
        const ice_metadata_log_entry *e = ice_metadata_metadata_log_at(md, i);
        icd_buf_printf(b, "%s{\"timestamp-ms\":", i ? "," : "");
        icd_json_i64(b, e->timestamp_ms);
        icd_buf_puts(b, ",\"metadata-file\":");
        icd_json_cstr(b, e->metadata_file);
        icd_buf_putc(b, '}');
    }
    icd_buf_putc(b, ']');

    if (ice_metadata_encryption_key_count(md)) {
        key(b, &first, "encryption-keys");
        icd_buf_putc(b, '[');
        for (size_t i = 0; i < ice_metadata_encryption_key_count(md); i++) {
            const ice_encryption_key *k = ice_metadata_encryption_key_at(md, i);
            bool f2 = true;
            icd_buf_puts(b, i ? ",{" : "{");
            kv_str(b, &f2, "key-id", k->key_id);
            if (k->encrypted_key_metadata)
                kv_str(b, &f2, "encrypted-key-metadata", k->encrypted_key_metadata);
            if (k->encrypted_by_id) kv_str(b, &f2, "encrypted-by-id", k->encrypted_by_id);
            icd_buf_putc(b, '}');
        }
        icd_buf_putc(b, ']');
    }
    icd_buf_puts(b, "}\n");
}

int cli_inspect_metadata(icd_fileio *io, const char *path, cli_out *out, icd_error *err)
{
    ice_metadata *md;
    /* A directory is a table (local catalog); any other path is a metadata file. */
    if (!cat_local_is_metadata_file_name(path) && cli_inspect_is_metadata(io, path))
        ICD_TRY(cat_local_load(io, path, &md, err));
    else
        ICD_TRY(ice_metadata_load(io, path, &md, err));
    summary_json(&out->buf, md);
    ice_metadata_free(md);
    cli_out_maybe_flush(out);
    return 0;
}
