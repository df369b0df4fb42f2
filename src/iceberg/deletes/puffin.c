/*
 * Puffin footer reader and blob access (see puffin.h). Reads the last 12 bytes (payload
 * size, flags, magic), then the footer magic and payload, undoes the optional LZ4 frame,
 * parses the JSON with jansson and copies it into an arena-backed ice_puffin. Everything
 * taken from the file (sizes, offsets, JSON types) is checked before use; a bad value is
 * an ICD_ECORRUPT error naming the file and the byte offset concerned.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "base/bits.h"
#include "base/decompress.h"
#include "iceberg/deletes/puffin.h"

#define TAIL_SIZE 12u /* payload size, flags, magic */

int ice_puffin_read_at(ice_puffin *p, uint64_t offset, void *buf, size_t n, icd_error *err)
{
    if (p->file) return icd_file_read_at(p->file, offset, buf, n, err);
    if (offset > p->file_size || n > p->file_size - offset)
        return icd_fail(err, ICD_ECORRUPT, p->location, (int64_t)offset,
                        "truncated: %zu bytes needed at offset %llu but the file has %llu", n,
                        (unsigned long long)offset, (unsigned long long)p->file_size);
    if (n) memcpy(buf, p->data + offset, n);
    return 0;
}

/* ---- decompression of one LZ4 or Zstandard frame ---- */

int ice_puffin_decompress(const char *codec, const uint8_t *in, size_t n, size_t max_out,
                          const char *location, uint64_t offset, uint8_t **out, size_t *out_len,
                          icd_error *err)
{
    icd_codec c;
    if (!strcmp(codec, "lz4")) {
        c = ICD_CODEC_LZ4_FRAME;
    } else if (!strcmp(codec, "zstd")) {
        c = ICD_CODEC_ZSTD;
        /* a blob is one frame (base/decompress.h would go on into a second one) */
        size_t fsize = ZSTD_findFrameCompressedSize(in, n);
        if (!ZSTD_isError(fsize) && fsize != n)
            return icd_fail(err, ICD_ECORRUPT, location, (int64_t)(offset + fsize),
                            "%zu bytes after the end of the Zstandard frame", n - fsize);
    } else {
        return icd_fail(err, ICD_EUNSUPPORTED, location, (int64_t)offset,
                        "unknown Puffin compression codec '%s'", codec);
    }
    icd_buf b = ICD_BUF_INIT;
    int rc = icd_decompress_buf(c, in, n, max_out, &b, err);
    if (rc) {
        icd_buf_free(&b);
        if (rc != ICD_ENOMEM) {
            icd_error_set_file(err, location);
            err->offset = (int64_t)offset;
            icd_error_wrap(err, "%s blob", c == ICD_CODEC_ZSTD ? "Zstandard" : "LZ4");
        }
        return rc;
    }
    *out_len = b.len;
    *out = (uint8_t *)icd_buf_detach(&b);
    return *out ? 0 : icd_fail_nomem(err);
}

/* ---- footer JSON ---- */

typedef struct json_ctx {
    ice_puffin *p;
    icd_error *err;
    int64_t off; /* offset errors point at: the footer payload */
} json_ctx;

static int json_long(json_ctx *c, json_t *obj, const char *name, size_t blob, int64_t *out)
{
    json_t *v = json_object_get(obj, name);
    if (!v)
        return icd_fail(c->err, ICD_ECORRUPT, c->p->location, c->off,
                        "Puffin footer: blob %zu lacks the required field \"%s\"", blob, name);
    if (!json_is_integer(v))
        return icd_fail(c->err, ICD_ECORRUPT, c->p->location, c->off,
                        "Puffin footer: blob %zu field \"%s\" is not an integer", blob, name);
    *out = (int64_t)json_integer_value(v);
    return 0;
}

static int copy_props(json_ctx *c, json_t *obj, const char *owner, const ice_puffin_prop **out,
                      size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!obj || json_is_null(obj)) return 0;
    if (!json_is_object(obj))
        return icd_fail(c->err, ICD_ECORRUPT, c->p->location, c->off,
                        "Puffin footer: %s properties are not a JSON object", owner);
    size_t count = json_object_size(obj);
    ice_puffin_prop *props = icd_arena_alloc(&c->p->arena, (count ? count : 1) * sizeof *props);
    if (!props) return icd_fail_nomem(c->err);
    const char *key;
    json_t *v;
    size_t i = 0;
    json_object_foreach(obj, key, v)
    {
        if (!json_is_string(v))
            return icd_fail(c->err, ICD_ECORRUPT, c->p->location, c->off,
                            "Puffin footer: %s property \"%s\" is not a string", owner, key);
        props[i].key = icd_arena_strdup(&c->p->arena, key);
        props[i].value =
            icd_arena_strndup(&c->p->arena, json_string_value(v), json_string_length(v));
        if (!props[i].key || !props[i].value) return icd_fail_nomem(c->err);
        i++;
    }
    *out = props;
    *n = i;
    return 0;
}

static int parse_blob(json_ctx *c, json_t *jb, size_t idx, ice_puffin_blob *b)
{
    ice_puffin *p = c->p;
    if (!json_is_object(jb))
        return icd_fail(c->err, ICD_ECORRUPT, p->location, c->off,
                        "Puffin footer: blob %zu is not a JSON object", idx);
    json_t *type = json_object_get(jb, "type");
    if (!json_is_string(type))
        return icd_fail(c->err, ICD_ECORRUPT, p->location, c->off,
                        "Puffin footer: blob %zu has no string \"type\"", idx);
    b->type = icd_arena_strdup(&p->arena, json_string_value(type));
    json_t *fields = json_object_get(jb, "fields");
    if (!json_is_array(fields))
        return icd_fail(c->err, ICD_ECORRUPT, p->location, c->off,
                        "Puffin footer: blob %zu has no \"fields\" list", idx);
    size_t nf = json_array_size(fields);
    int32_t *f = icd_arena_alloc(&p->arena, (nf ? nf : 1) * sizeof *f);
    if (!b->type || !f) return icd_fail_nomem(c->err);
    for (size_t i = 0; i < nf; i++) {
        json_t *v = json_array_get(fields, i);
        if (!json_is_integer(v) || json_integer_value(v) < INT32_MIN ||
            json_integer_value(v) > INT32_MAX)
            return icd_fail(c->err, ICD_ECORRUPT, p->location, c->off,
                            "Puffin footer: blob %zu field id %zu is not a 32-bit integer", idx, i);
        f[i] = (int32_t)json_integer_value(v);
    }
    b->fields = f;
    b->nfields = nf;
    int64_t off, len;
    ICD_TRY(json_long(c, jb, "snapshot-id", idx, &b->snapshot_id));
    ICD_TRY(json_long(c, jb, "sequence-number", idx, &b->sequence_number));
    ICD_TRY(json_long(c, jb, "offset", idx, &off));
    ICD_TRY(json_long(c, jb, "length", idx, &len));
    /* Blobs lie between the leading magic and the footer. */
    if (off < 4 || len < 0 || (uint64_t)off > p->footer_offset ||
        (uint64_t)len > p->footer_offset - (uint64_t)off)
        return icd_fail(c->err, ICD_ECORRUPT, p->location, off,
                        "Puffin footer: blob %zu (offset %lld, length %lld) lies outside the "
                        "blob area [4, %llu)",
                        idx, (long long)off, (long long)len, (unsigned long long)p->footer_offset);
    b->offset = (uint64_t)off;
    b->length = (uint64_t)len;
    json_t *codec = json_object_get(jb, "compression-codec");
    b->codec = NULL;
    if (codec && !json_is_null(codec)) {
        if (!json_is_string(codec))
            return icd_fail(c->err, ICD_ECORRUPT, p->location, c->off,
                            "Puffin footer: blob %zu compression-codec is not a string", idx);
        b->codec = icd_arena_strdup(&p->arena, json_string_value(codec));
        if (!b->codec) return icd_fail_nomem(c->err);
    }
    char owner[48];
    snprintf(owner, sizeof owner, "blob %zu", idx);
    return copy_props(c, json_object_get(jb, "properties"), owner, &b->props, &b->nprops);
}

static int parse_footer_json(ice_puffin *p, const char *text, size_t n, int64_t off, icd_error *err)
{
    json_error_t jerr;
    json_t *root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return icd_fail(err, ICD_ECORRUPT, p->location,
                        p->compressed ? off : off + (int64_t)jerr.position,
                        "Puffin footer is not valid JSON: %s", jerr.text);
    json_ctx c = {p, err, off};
    int rc = 0;
    json_t *blobs = json_object_get(root, "blobs");
    if (!json_is_object(root) || !json_is_array(blobs)) {
        rc = icd_fail(err, ICD_ECORRUPT, p->location, off,
                      "Puffin footer: no \"blobs\" list in the FileMetadata object");
        goto done;
    }
    size_t nb = json_array_size(blobs);
    ice_puffin_blob *bl = icd_arena_calloc(&p->arena, (nb ? nb : 1) * sizeof *bl);
    if (!bl) {
        rc = icd_fail_nomem(err);
        goto done;
    }
    for (size_t i = 0; i < nb && !rc; i++)
        rc = parse_blob(&c, json_array_get(blobs, i), i, &bl[i]);
    if (rc) goto done;
    p->blobs = bl;
    p->nblobs = nb;
    rc = copy_props(&c, json_object_get(root, "properties"), "file", &p->props, &p->nprops);
done:
    json_decref(root);
    return rc;
}

/* ---- opening ---- */

static int read_footer(ice_puffin *p, icd_error *err)
{
    uint8_t head[4], tail[TAIL_SIZE];
    if (p->file_size < 4 + 4 + TAIL_SIZE)
        return icd_fail(err, ICD_ECORRUPT, p->location, 0,
                        "not a Puffin file: %llu bytes is too short",
                        (unsigned long long)p->file_size);
    ICD_TRY(ice_puffin_read_at(p, 0, head, 4, err));
    if (memcmp(head, ICE_PUFFIN_MAGIC, 4))
        return icd_fail(err, ICD_ECORRUPT, p->location, 0,
                        "not a Puffin file: no PFA1 magic at the start");
    uint64_t tail_off = p->file_size - TAIL_SIZE;
    ICD_TRY(ice_puffin_read_at(p, tail_off, tail, TAIL_SIZE, err));
    if (memcmp(tail + 8, ICE_PUFFIN_MAGIC, 4))
        return icd_fail(err, ICD_ECORRUPT, p->location, (int64_t)tail_off + 8,
                        "not a Puffin file: no PFA1 magic at the end");
    uint32_t size = icd_load_le32(tail);
    p->flags = icd_load_le32(tail + 4);
    if (size > INT32_MAX || size > tail_off - 8) /* room for both magics */
        return icd_fail(err, ICD_ECORRUPT, p->location, (int64_t)tail_off,
                        "Puffin footer payload size %u does not fit in the file of %llu bytes",
                        size, (unsigned long long)p->file_size);
    if (size > ICE_PUFFIN_MAX_FOOTER)
        return icd_fail(err, ICD_EUNSUPPORTED, p->location, (int64_t)tail_off,
                        "Puffin footer payload of %u bytes exceeds the limit of %u", size,
                        ICE_PUFFIN_MAX_FOOTER);
    if (p->flags & ~1u)
        return icd_fail(err, ICD_EUNSUPPORTED, p->location, (int64_t)tail_off + 4,
                        "Puffin footer has unknown flags 0x%08x", p->flags);
    p->compressed = p->flags & 1u;
    p->payload_size = size;
    p->footer_offset = tail_off - size - 4;
    uint8_t *payload = malloc((size_t)size + 4);
    if (!payload) return icd_fail_nomem(err);
    int rc = ice_puffin_read_at(p, p->footer_offset, payload, (size_t)size + 4, err);
    if (!rc && memcmp(payload, ICE_PUFFIN_MAGIC, 4))
        rc = icd_fail(err, ICD_ECORRUPT, p->location, (int64_t)p->footer_offset,
                      "Puffin footer does not start with the PFA1 magic (payload size %u)", size);
    if (!rc) {
        int64_t off = (int64_t)p->footer_offset + 4;
        if (p->compressed) {
            uint8_t *json;
            size_t jlen;
            rc = ice_puffin_decompress("lz4", payload + 4, size, ICE_PUFFIN_MAX_FOOTER, p->location,
                                       (uint64_t)off, &json, &jlen, err);
            if (!rc) {
                rc = parse_footer_json(p, (const char *)json, jlen, off, err);
                free(json);
            }
        } else {
            rc = parse_footer_json(p, (const char *)payload + 4, size, off, err);
        }
    }
    free(payload);
    return rc;
}

static int open_common(ice_puffin *p, const char *location, icd_error *err)
{
    p->location = icd_arena_strdup(&p->arena, location ? location : "");
    if (!p->location) return icd_fail_nomem(err);
    return read_footer(p, err);
}

int ice_puffin_open(icd_fileio *io, const char *location, ice_puffin **out, icd_error *err)
{
    *out = NULL;
    ice_puffin *p = calloc(1, sizeof *p);
    if (!p) return icd_fail_nomem(err);
    int rc = icd_file_open(io, location, &p->file, err);
    if (!rc) {
        p->file_size = icd_file_size(p->file);
        rc = open_common(p, location, err);
    }
    if (rc) {
        ice_puffin_close(p);
        return rc;
    }
    *out = p;
    return 0;
}

int ice_puffin_open_buffer(const uint8_t *data, size_t len, const char *location, ice_puffin **out,
                           icd_error *err)
{
    *out = NULL;
    ice_puffin *p = calloc(1, sizeof *p);
    if (!p) return icd_fail_nomem(err);
    p->data = data;
    p->file_size = len;
    int rc = open_common(p, location, err);
    if (rc) {
        ice_puffin_close(p);
        return rc;
    }
    *out = p;
    return 0;
}

void ice_puffin_close(ice_puffin *p)
{
    if (!p) return;
    if (p->file) icd_file_close(p->file);
    icd_arena_free(&p->arena);
    free(p);
}

const char *ice_puffin_prop_get(const ice_puffin_prop *props, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(props[i].key, key)) return props[i].value;
    return NULL;
}

const ice_puffin_blob *ice_puffin_find_blob(const ice_puffin *p, uint64_t offset)
{
    for (size_t i = 0; i < p->nblobs; i++)
        if (p->blobs[i].offset == offset) return &p->blobs[i];
    return NULL;
}

int ice_puffin_read_blob(ice_puffin *p, const ice_puffin_blob *b, size_t max_bytes, uint8_t **out,
                         size_t *len, icd_error *err)
{
    *out = NULL;
    *len = 0;
    if (!b->codec && b->length > max_bytes)
        return icd_fail(err, ICD_EUNSUPPORTED, p->location, (int64_t)b->offset,
                        "Puffin blob of %llu bytes exceeds the limit of %zu",
                        (unsigned long long)b->length, max_bytes);
    if (b->codec && strcmp(b->codec, "lz4") && strcmp(b->codec, "zstd"))
        return icd_fail(err, ICD_EUNSUPPORTED, p->location, (int64_t)b->offset,
                        "unknown Puffin compression codec '%s'", b->codec);
    if (b->length > SIZE_MAX - 1 || (b->codec && b->length > ICE_PUFFIN_MAX_FOOTER * 16ull))
        return icd_fail(err, ICD_EUNSUPPORTED, p->location, (int64_t)b->offset,
                        "compressed Puffin blob of %llu bytes is too large",
                        (unsigned long long)b->length);
    uint8_t *raw = malloc(b->length ? (size_t)b->length : 1);
    if (!raw) return icd_fail_nomem(err);
    int rc = ice_puffin_read_at(p, b->offset, raw, (size_t)b->length, err);
    if (rc) {
        free(raw);
        return rc;
    }
    if (!b->codec) {
        *out = raw;
        *len = (size_t)b->length;
        return 0;
    }
    rc = ice_puffin_decompress(b->codec, raw, (size_t)b->length, max_bytes, p->location, b->offset,
                               out, len, err);
    free(raw);
    return rc;
}
