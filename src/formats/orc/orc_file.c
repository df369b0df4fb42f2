/*
 * ORC file tail: the last byte (postscript length), the postscript (compression, block
 * size, footer and metadata lengths, version, magic), the footer (stripes, types, column
 * statistics, row count) and the metadata section (stripe statistics), all protobuf
 * messages decoded by protobuf-c from orc_proto.proto. Every length is checked against the
 * file size before anything is read, and all reads are positional (icd_file_read_at): the
 * tail is read, the stripes are not. The schema tree (orc_type) with the Iceberg attributes
 * is built here; orc_reader.c reads stripes on top of it.
 */
#include <stdlib.h>
#include <string.h>

#include "formats/orc/orc_codec.h"
#include "formats/orc/orc_internal.h"

const char *orc_kind_name(orc_kind kind)
{
    static const char *names[] = {"boolean",
                                  "tinyint",
                                  "smallint",
                                  "int",
                                  "bigint",
                                  "float",
                                  "double",
                                  "string",
                                  "binary",
                                  "timestamp",
                                  "array",
                                  "map",
                                  "struct",
                                  "uniontype",
                                  "decimal",
                                  "date",
                                  "varchar",
                                  "char",
                                  "timestamp with local time zone"};
    if ((unsigned)kind >= sizeof names / sizeof names[0]) return "unknown";
    return names[kind];
}

int orc_file_decode_part(const orc_file *f, const uint8_t *raw, size_t len, uint64_t file_off,
                         const char *what, const uint8_t **out, size_t *out_len, uint8_t **owned,
                         icd_error *err)
{
    *owned = NULL;
    if (f->compression == ORC_COMP_NONE) {
        *out = raw;
        *out_len = len;
        return 0;
    }
    icd_buf b = ICD_BUF_INIT;
    int rc = orc_decompress(f->compression, f->block_size, raw, len, f->max_stream, &b, err);
    if (rc) {
        icd_buf_free(&b);
        if (rc != ICD_ENOMEM) {
            int64_t rel = err->offset >= 0 ? err->offset : 0;
            err->offset = (int64_t)file_off + rel;
            icd_error_set_file(err, f->location);
            icd_error_wrap(err, "%s", what);
        }
        return rc;
    }
    if (!b.data) { /* empty part */
        *out = (const uint8_t *)"";
        *out_len = 0;
        return 0;
    }
    *out_len = b.len;
    *owned = (uint8_t *)icd_buf_detach(&b);
    *out = *owned;
    return 0;
}

/* ---- schema ---- */

/* A NUL-terminated arena copy of protobuf bytes (whose data may be NULL when empty). */
static char *bin_dup(icd_arena *a, bool has, const ProtobufCBinaryData *b)
{
    if (!has || !b->data) return icd_arena_strndup(a, "", 0);
    return icd_arena_strndup(a, (const char *)b->data, b->len);
}

/* "123" -> 123; anything else (sign, junk, overflow) -> -1. */
static int64_t parse_field_id(const Orcpb__Type *t)
{
    for (size_t i = 0; i < t->n_attributes; i++) {
        const Orcpb__StringPair *a = t->attributes[i];
        if (!a->has_key || a->key.len != 10 || memcmp(a->key.data, "iceberg.id", 10)) continue;
        if (!a->has_value || a->value.len == 0 || a->value.len > 10) return -1;
        int64_t v = 0;
        for (size_t k = 0; k < a->value.len; k++) {
            uint8_t c = a->value.data[k];
            if (c < '0' || c > '9') return -1;
            v = v * 10 + (c - '0');
        }
        return v <= INT32_MAX ? v : -1;
    }
    return -1;
}

static int expected_children(orc_kind kind)
{
    switch (kind) {
    case ORC_LIST:
        return 1;
    case ORC_MAP:
        return 2;
    case ORC_STRUCT:
    case ORC_UNION:
        return -1; /* any number (a union needs at least one) */
    default:
        return 0;
    }
}

static int build_types(orc_file *f, icd_error *err)
{
    const Orcpb__Footer *ft = f->footer;
    size_t n = ft->n_types;
    if (n == 0) return icd_fail(err, ICD_ECORRUPT, f->location, -1, "ORC footer has no types");
    f->types = icd_arena_calloc(&f->arena, n * sizeof *f->types);
    uint32_t *parent_of = calloc(n, sizeof *parent_of);
    if (!f->types || !parent_of) {
        free(parent_of);
        return icd_fail_nomem(err);
    }
    f->ntypes = n;
    for (size_t i = 0; i < n; i++)
        f->types[i].name = "";
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const Orcpb__Type *pt = ft->types[i];
        orc_type *t = &f->types[i];
        t->id = (uint32_t)i;
        if (!pt->has_kind || pt->kind > ORC_TIMESTAMP_INSTANT) {
            rc = icd_fail(err, ICD_EUNSUPPORTED, f->location, -1,
                          "ORC column %zu has unknown type kind %u", i,
                          pt->has_kind ? pt->kind : 0u);
            break;
        }
        t->kind = (orc_kind)pt->kind;
        int want = expected_children(t->kind);
        if ((want >= 0 && pt->n_subtypes != (size_t)want) ||
            (t->kind == ORC_UNION && pt->n_subtypes == 0)) {
            rc =
                icd_fail(err, ICD_ECORRUPT, f->location, -1, "ORC column %zu (%s) has %zu subtypes",
                         i, orc_kind_name(t->kind), pt->n_subtypes);
            break;
        }
        if (t->kind == ORC_STRUCT && pt->n_fieldnames != pt->n_subtypes) {
            rc = icd_fail(err, ICD_ECORRUPT, f->location, -1,
                          "ORC struct column %zu has %zu field names for %zu fields", i,
                          pt->n_fieldnames, pt->n_subtypes);
            break;
        }
        t->nchildren = (uint32_t)pt->n_subtypes;
        t->children = icd_arena_alloc(&f->arena, (pt->n_subtypes + 1) * sizeof *t->children);
        t->attrs = icd_arena_alloc(&f->arena, (pt->n_attributes + 1) * sizeof *t->attrs);
        if (!t->children || !t->attrs) {
            rc = icd_fail_nomem(err);
            break;
        }
        for (size_t k = 0; k < pt->n_subtypes; k++) {
            uint32_t c = pt->subtypes[k];
            /* Pre-order ids: a child comes after its parent, and has one parent. */
            if (c <= i || c >= n || parent_of[c]) {
                rc = icd_fail(err, ICD_ECORRUPT, f->location, -1,
                              "ORC column %zu lists an invalid subtype %u (types must form a "
                              "tree in pre-order)",
                              i, c);
                break;
            }
            parent_of[c] = (uint32_t)i + 1;
            t->children[k] = &f->types[c];
            f->types[c].parent = t;
            if (t->kind == ORC_STRUCT) {
                char *s = bin_dup(&f->arena, true, &pt->fieldnames[k]);
                if (!s) {
                    rc = icd_fail_nomem(err);
                    break;
                }
                f->types[c].name = s;
            }
        }
        if (rc) break;
        for (size_t k = 0; k < pt->n_attributes; k++) {
            const Orcpb__StringPair *a = pt->attributes[k];
            t->attrs[k].key = bin_dup(&f->arena, a->has_key, &a->key);
            t->attrs[k].value = bin_dup(&f->arena, a->has_value, &a->value);
            if (!t->attrs[k].key || !t->attrs[k].value) {
                rc = icd_fail_nomem(err);
                break;
            }
        }
        t->nattrs = (uint32_t)pt->n_attributes;
        t->field_id = parse_field_id(pt);
        for (uint32_t k = 0; k < t->nattrs; k++)
            if (!strcmp(t->attrs[k].key, "iceberg.required"))
                t->required = !strcmp(t->attrs[k].value, "true");
        t->precision = pt->has_precision ? pt->precision : 0;
        t->scale = pt->has_scale ? pt->scale : 0;
        t->max_length = pt->has_maximumlength ? pt->maximumlength : 0;
        if (t->kind == ORC_DECIMAL) {
            if (t->precision == 0) t->precision = 38;
            if (t->precision > 38 || t->scale > t->precision) {
                rc = icd_fail(err, ICD_EUNSUPPORTED, f->location, -1,
                              "ORC column %zu: decimal(%u,%u) is not supported", i, t->precision,
                              t->scale);
                break;
            }
        }
    }
    for (size_t i = 1; i < n && !rc; i++)
        if (!parent_of[i])
            rc = icd_fail(err, ICD_ECORRUPT, f->location, -1,
                          "ORC column %zu is not reachable from the root type", i);
    free(parent_of);
    return rc;
}

/* ---- stripes ---- */

static int build_stripes(orc_file *f, uint64_t content_end, icd_error *err)
{
    const Orcpb__Footer *ft = f->footer;
    f->nstripes = ft->n_stripes;
    f->stripes = icd_arena_calloc(&f->arena, (ft->n_stripes + 1) * sizeof *f->stripes);
    if (!f->stripes) return icd_fail_nomem(err);
    uint64_t row = 0;
    for (size_t i = 0; i < ft->n_stripes; i++) {
        const Orcpb__StripeInformation *si = ft->stripes[i];
        orc_stripe_info *s = &f->stripes[i];
        s->offset = si->offset;
        s->index_length = si->indexlength;
        s->data_length = si->datalength;
        s->footer_length = si->footerlength;
        s->rows = si->numberofrows;
        s->first_row = row;
        uint64_t end = s->offset;
        bool ok = s->offset >= 3 && s->footer_length > 0;
        ok = ok && end <= UINT64_MAX - s->index_length;
        end += s->index_length;
        ok = ok && end <= UINT64_MAX - s->data_length;
        end += s->data_length;
        ok = ok && end <= UINT64_MAX - s->footer_length;
        end += s->footer_length;
        if (!ok || end > content_end)
            return icd_fail(err, ICD_ECORRUPT, f->location, (int64_t)s->offset,
                            "ORC stripe %zu (offset %llu, %llu+%llu+%llu bytes) lies outside "
                            "the file body (%llu bytes)",
                            i, (unsigned long long)s->offset, (unsigned long long)s->index_length,
                            (unsigned long long)s->data_length,
                            (unsigned long long)s->footer_length, (unsigned long long)content_end);
        if (s->footer_length > f->max_stream)
            return icd_fail(err, ICD_EUNSUPPORTED, f->location, (int64_t)s->offset,
                            "ORC stripe %zu footer is too large (%llu bytes)", i,
                            (unsigned long long)s->footer_length);
        if (row > UINT64_MAX - s->rows)
            return icd_fail(err, ICD_ECORRUPT, f->location, -1, "ORC stripe row counts overflow");
        row += s->rows;
    }
    if (ft->has_numberofrows && ft->numberofrows != row)
        return icd_fail(err, ICD_ECORRUPT, f->location, -1,
                        "ORC footer says %llu rows but its stripes hold %llu",
                        (unsigned long long)ft->numberofrows, (unsigned long long)row);
    f->rows = row;
    return 0;
}

/* ---- opening ---- */

static int parse_ps(orc_file *f, const uint8_t *p, size_t len, uint64_t off, icd_error *err)
{
    f->ps = orcpb__post_script__unpack(NULL, len, p);
    if (!f->ps)
        return icd_fail(err, ICD_ECORRUPT, f->location, (int64_t)off,
                        "malformed ORC postscript (%zu bytes)", len);
    const Orcpb__PostScript *ps = f->ps;
    if (ps->has_magic && (ps->magic.len != 3 || memcmp(ps->magic.data, "ORC", 3)))
        return icd_fail(err, ICD_ECORRUPT, f->location, (int64_t)off,
                        "ORC postscript magic is not \"ORC\"");
    if (!ps->has_footerlength || ps->footerlength == 0)
        return icd_fail(err, ICD_ECORRUPT, f->location, (int64_t)off,
                        "ORC postscript has no footer length");
    f->compression = ps->has_compression ? (int)ps->compression : ORC_COMP_NONE;
    if (ps->has_compression && ps->compression > ORC_COMP_ZSTD)
        return icd_fail(err, ICD_EUNSUPPORTED, f->location, (int64_t)off,
                        "unknown ORC compression kind %u", ps->compression);
    if (f->compression == ORC_COMP_LZO)
        return icd_fail(err, ICD_EUNSUPPORTED, f->location, (int64_t)off,
                        "ORC compression LZO is not supported");
    f->block_size =
        ps->has_compressionblocksize ? ps->compressionblocksize : ORC_DEFAULT_BLOCK_SIZE;
    if (f->compression != ORC_COMP_NONE &&
        (f->block_size == 0 || f->block_size > ORC_MAX_BLOCK_SIZE))
        return icd_fail(err, ICD_EUNSUPPORTED, f->location, (int64_t)off,
                        "ORC compression block size %llu is outside 1..%llu",
                        (unsigned long long)f->block_size, (unsigned long long)ORC_MAX_BLOCK_SIZE);
    f->version[0] = ps->n_version > 0 ? ps->version[0] : 0;
    f->version[1] = ps->n_version > 1 ? ps->version[1] : 0;
    /* Java's "UNSTABLE-PRE-2.0" files (version 1.9999) write DECIMAL_64. */
    f->decimal64 = f->version[0] >= 1;
    return 0;
}

static int read_tail(orc_file *f, const orc_open_opts *opts, icd_error *err)
{
    uint64_t size = f->size;
    uint8_t head[3];
    if (size < 4)
        return icd_fail(err, ICD_ECORRUPT, f->location, 0,
                        "file of %llu bytes is too small to be an ORC file",
                        (unsigned long long)size);
    ICD_TRY(icd_file_read_at(f->file, 0, head, 3, err));
    if (memcmp(head, "ORC", 3))
        return icd_fail(err, ICD_ECORRUPT, f->location, 0, "not an ORC file (no \"ORC\" magic)");

    uint8_t psbuf[256];
    ICD_TRY(icd_file_read_at(f->file, size - 1, psbuf, 1, err));
    size_t pslen = psbuf[0];
    if (pslen == 0 || pslen > size - 4)
        return icd_fail(err, ICD_ECORRUPT, f->location, (int64_t)size - 1,
                        "ORC postscript length %zu does not fit the file (%llu bytes)", pslen,
                        (unsigned long long)size);
    uint64_t ps_off = size - 1 - pslen;
    ICD_TRY(icd_file_read_at(f->file, ps_off, psbuf, pslen, err));
    ICD_TRY(parse_ps(f, psbuf, pslen, ps_off, err));

    uint64_t flen = f->ps->footerlength;
    uint64_t mlen = f->ps->has_metadatalength ? f->ps->metadatalength : 0;
    size_t max_tail = opts && opts->max_tail_bytes ? opts->max_tail_bytes : ORC_DEFAULT_MAX_TAIL;
    /* header (3) + metadata + footer must fit before the postscript */
    if (flen > ps_off - 3 || mlen > ps_off - 3 - flen)
        return icd_fail(err, ICD_ECORRUPT, f->location, (int64_t)ps_off,
                        "ORC footer (%llu bytes) and metadata (%llu bytes) do not fit before the "
                        "postscript at byte %llu",
                        (unsigned long long)flen, (unsigned long long)mlen,
                        (unsigned long long)ps_off);
    if (flen + mlen > max_tail)
        return icd_fail(err, ICD_EUNSUPPORTED, f->location, (int64_t)ps_off,
                        "ORC footer and metadata (%llu bytes) exceed the limit of %zu bytes",
                        (unsigned long long)(flen + mlen), max_tail);
    uint64_t foot_off = ps_off - flen;
    uint64_t meta_off = foot_off - mlen;
    size_t tlen = (size_t)(flen + mlen);
    uint8_t *tail = malloc(tlen);
    if (!tail) return icd_fail_nomem(err);
    int rc = icd_file_read_at(f->file, meta_off, tail, tlen, err);
    const uint8_t *p;
    size_t plen;
    uint8_t *owned = NULL;
    if (!rc)
        rc = orc_file_decode_part(f, tail + mlen, (size_t)flen, foot_off, "ORC footer", &p, &plen,
                                  &owned, err);
    if (!rc) {
        f->footer = orcpb__footer__unpack(NULL, plen, p);
        if (!f->footer)
            rc = icd_fail(err, ICD_ECORRUPT, f->location, (int64_t)foot_off,
                          "malformed ORC footer (%zu bytes after decompression)", plen);
        free(owned);
        owned = NULL;
    }
    if (!rc && mlen) {
        rc = orc_file_decode_part(f, tail, (size_t)mlen, meta_off, "ORC metadata", &p, &plen,
                                  &owned, err);
        if (!rc) {
            f->meta = orcpb__metadata__unpack(NULL, plen, p);
            if (!f->meta)
                rc = icd_fail(err, ICD_ECORRUPT, f->location, (int64_t)meta_off,
                              "malformed ORC metadata section (%zu bytes after decompression)",
                              plen);
        }
        free(owned);
    }
    free(tail);
    ICD_TRY(rc);
    ICD_TRY(build_types(f, err));
    f->software_version =
        bin_dup(&f->arena, f->footer->has_softwareversion, &f->footer->softwareversion);
    if (!f->software_version) return icd_fail_nomem(err);
    return build_stripes(f, meta_off, err);
}

int orc_file_open_file(orc_file **out, icd_file *file, bool own, const orc_open_opts *opts,
                       icd_error *err)
{
    *out = NULL;
    orc_file *f = calloc(1, sizeof *f);
    if (!f) {
        if (own) icd_file_close(file);
        return icd_fail_nomem(err);
    }
    f->file = file;
    f->own = own;
    f->size = icd_file_size(file);
    f->location = strdup(file->location ? file->location : "");
    f->max_stream =
        opts && opts->max_stream_bytes ? opts->max_stream_bytes : ORC_DEFAULT_MAX_STREAM;
    if (!f->location) {
        orc_file_free(f);
        return icd_fail_nomem(err);
    }
    int rc = read_tail(f, opts, err);
    if (rc) {
        orc_file_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

int orc_file_open(orc_file **out, icd_fileio *io, const char *location, const orc_open_opts *opts,
                  icd_error *err)
{
    *out = NULL;
    icd_file *file;
    ICD_TRY(icd_file_open(io, location, &file, err));
    return orc_file_open_file(out, file, true, opts, err);
}

void orc_file_free(orc_file *f)
{
    if (!f) return;
    if (f->ps) orcpb__post_script__free_unpacked(f->ps, NULL);
    if (f->footer) orcpb__footer__free_unpacked(f->footer, NULL);
    if (f->meta) orcpb__metadata__free_unpacked(f->meta, NULL);
    if (f->own) icd_file_close(f->file);
    icd_arena_free(&f->arena);
    free(f->location);
    free(f);
}

/* ---- accessors ---- */

const char *orc_file_location(const orc_file *f)
{
    return f->location;
}
uint64_t orc_file_rows(const orc_file *f)
{
    return f->rows;
}
int orc_file_compression(const orc_file *f)
{
    return f->compression;
}
uint64_t orc_file_block_size(const orc_file *f)
{
    return f->block_size;
}
void orc_file_version(const orc_file *f, uint32_t *major, uint32_t *minor)
{
    *major = f->version[0];
    *minor = f->version[1];
}
uint32_t orc_file_writer_version(const orc_file *f)
{
    return f->ps->has_writerversion ? f->ps->writerversion : 0;
}
int64_t orc_file_writer(const orc_file *f)
{
    return f->footer->has_writer ? (int64_t)f->footer->writer : -1;
}
const char *orc_file_software_version(const orc_file *f)
{
    return f->software_version;
}
uint32_t orc_file_row_index_stride(const orc_file *f)
{
    return f->footer->has_rowindexstride ? f->footer->rowindexstride : 0;
}
const orc_type *orc_file_root(const orc_file *f)
{
    return &f->types[0];
}
size_t orc_file_ncolumns(const orc_file *f)
{
    return f->ntypes;
}
const orc_type *orc_file_column(const orc_file *f, uint32_t id)
{
    return id < f->ntypes ? &f->types[id] : NULL;
}
const orc_type *orc_file_find_field_id(const orc_file *f, int64_t field_id)
{
    for (size_t i = 0; i < f->ntypes; i++)
        if (f->types[i].field_id == field_id && field_id >= 0) return &f->types[i];
    return NULL;
}
const orc_type *orc_file_find_name(const orc_file *f, const char *name)
{
    const orc_type *root = &f->types[0];
    if (root->kind != ORC_STRUCT) return NULL;
    for (uint32_t i = 0; i < root->nchildren; i++)
        if (!strcmp(root->children[i]->name, name)) return root->children[i];
    return NULL;
}
size_t orc_file_nstripes(const orc_file *f)
{
    return f->nstripes;
}
const orc_stripe_info *orc_file_stripe(const orc_file *f, size_t i)
{
    return i < f->nstripes ? &f->stripes[i] : NULL;
}
size_t orc_file_nmetadata(const orc_file *f)
{
    return f->footer->n_metadata;
}
void orc_file_metadata(const orc_file *f, size_t i, const uint8_t **key, size_t *key_len,
                       const uint8_t **value, size_t *value_len)
{
    const Orcpb__UserMetadataItem *m = f->footer->metadata[i];
    *key = m->has_name ? m->name.data : (const uint8_t *)"";
    *key_len = m->has_name ? m->name.len : 0;
    *value = m->has_value ? m->value.data : (const uint8_t *)"";
    *value_len = m->has_value ? m->value.len : 0;
}

/* ---- statistics ---- */

/* String and decimal statistics both carry their bounds as bytes (text). */
static void text_bounds(orc_stats *o, bool has_min, ProtobufCBinaryData min, bool has_max,
                        ProtobufCBinaryData max)
{
    o->has_min = has_min;
    o->min_s = min.data;
    o->min_len = min.len;
    o->has_max = has_max;
    o->max_s = max.data;
    o->max_len = max.len;
}

static void decode_stats(const orc_type *t, const Orcpb__ColumnStatistics *cs, orc_stats *o)
{
    memset(o, 0, sizeof *o);
    if (!cs) return;
    o->present = true;
    o->has_count = cs->has_numberofvalues;
    o->count = cs->numberofvalues;
    o->has_null_known = cs->has_hasnull;
    o->has_null = cs->hasnull;
    switch (t->kind) {
    case ORC_BYTE:
    case ORC_SHORT:
    case ORC_INT:
    case ORC_LONG:
        if (cs->intstatistics) {
            o->kind = ORC_STATS_INT;
            o->has_min = cs->intstatistics->has_minimum;
            o->min_i = cs->intstatistics->minimum;
            o->has_max = cs->intstatistics->has_maximum;
            o->max_i = cs->intstatistics->maximum;
            o->has_sum = cs->intstatistics->has_sum;
            o->sum_i = cs->intstatistics->sum;
        }
        break;
    case ORC_FLOAT:
    case ORC_DOUBLE:
        if (cs->doublestatistics) {
            o->kind = ORC_STATS_DOUBLE;
            o->has_min = cs->doublestatistics->has_minimum;
            o->min_d = cs->doublestatistics->minimum;
            o->has_max = cs->doublestatistics->has_maximum;
            o->max_d = cs->doublestatistics->maximum;
            o->has_sum = cs->doublestatistics->has_sum;
            o->sum_d = cs->doublestatistics->sum;
        }
        break;
    case ORC_STRING:
    case ORC_VARCHAR:
    case ORC_CHAR:
        if (cs->stringstatistics) {
            const Orcpb__StringStatistics *s = cs->stringstatistics;
            o->kind = ORC_STATS_STRING;
            text_bounds(o, s->has_minimum, s->minimum, s->has_maximum, s->maximum);
            o->has_sum = s->has_sum;
            o->sum_i = s->sum;
        }
        break;
    case ORC_BOOLEAN:
        if (cs->bucketstatistics && cs->bucketstatistics->n_count > 0) {
            o->kind = ORC_STATS_BOOLEAN;
            o->true_count = cs->bucketstatistics->count[0];
        }
        break;
    case ORC_DECIMAL:
        if (cs->decimalstatistics) {
            const Orcpb__DecimalStatistics *s = cs->decimalstatistics;
            o->kind = ORC_STATS_DECIMAL;
            text_bounds(o, s->has_minimum, s->minimum, s->has_maximum, s->maximum);
        }
        break;
    case ORC_DATE:
        if (cs->datestatistics) {
            o->kind = ORC_STATS_DATE;
            o->has_min = cs->datestatistics->has_minimum;
            o->min_i = cs->datestatistics->minimum;
            o->has_max = cs->datestatistics->has_maximum;
            o->max_i = cs->datestatistics->maximum;
        }
        break;
    case ORC_TIMESTAMP:
    case ORC_TIMESTAMP_INSTANT:
        if (cs->timestampstatistics) {
            const Orcpb__TimestampStatistics *s = cs->timestampstatistics;
            o->kind = ORC_STATS_TIMESTAMP;
            o->has_min = s->has_minimumutc;
            o->min_i = s->minimumutc;
            o->min_ns = s->has_minimumnanos && s->minimumnanos > 0 ? s->minimumnanos - 1 : 0;
            o->has_max = s->has_maximumutc;
            o->max_i = s->maximumutc;
            o->max_ns = s->has_maximumnanos && s->maximumnanos > 0 ? s->maximumnanos - 1 : 999999;
        }
        break;
    case ORC_BINARY:
        if (cs->binarystatistics) {
            o->kind = ORC_STATS_BINARY;
            o->has_sum = cs->binarystatistics->has_sum;
            o->sum_i = cs->binarystatistics->sum;
        }
        break;
    case ORC_LIST:
    case ORC_MAP:
        if (cs->collectionstatistics) {
            o->kind = ORC_STATS_COLLECTION;
            o->has_min = cs->collectionstatistics->has_minchildren;
            o->min_i = (int64_t)cs->collectionstatistics->minchildren;
            o->has_max = cs->collectionstatistics->has_maxchildren;
            o->max_i = (int64_t)cs->collectionstatistics->maxchildren;
            o->has_sum = cs->collectionstatistics->has_totalchildren;
            o->sum_i = (int64_t)cs->collectionstatistics->totalchildren;
        }
        break;
    default:
        break;
    }
}

void orc_file_column_stats(const orc_file *f, uint32_t column, orc_stats *out)
{
    const Orcpb__ColumnStatistics *cs = NULL;
    if (column < f->ntypes && column < f->footer->n_statistics) cs = f->footer->statistics[column];
    decode_stats(column < f->ntypes ? &f->types[column] : &f->types[0], cs, out);
}

void orc_file_stripe_stats(const orc_file *f, size_t stripe, uint32_t column, orc_stats *out)
{
    const Orcpb__ColumnStatistics *cs = NULL;
    if (f->meta && stripe < f->meta->n_stripestats && column < f->ntypes) {
        const Orcpb__StripeStatistics *ss = f->meta->stripestats[stripe];
        if (column < ss->n_colstats) cs = ss->colstats[column];
    }
    decode_stats(column < f->ntypes ? &f->types[column] : &f->types[0], cs, out);
}
