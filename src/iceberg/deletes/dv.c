/*
 * Deletion-vector decoding (see dv.h): blob framing (length, magic, CRC-32) and the 64-bit
 * portable Roaring layout. Each 32-bit bitmap is validated by ice_r32_parse (roaring32.c)
 * and handed to the ice_posset as it is — the set queries the portable bytes in place, so
 * decoding never goes through CRoaring. (CRoaring 0.2.66's portable_deserialize_safe only
 * bounds its reads: it accepts unsorted arrays, wrong bitmap cardinalities and
 * overlapping or overflowing runs, so it only ever sees bytes that passed the parser.)
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "iceberg/deletes/dv.h"
#include "iceberg/deletes/roaring32.h"

static const uint8_t DV_MAGIC[4] = {0xD1, 0xD3, 0x39, 0x64};

static uint32_t le32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}
static uint64_t le64(const uint8_t *b)
{
    return le32(b) | (uint64_t)le32(b + 4) << 32;
}
static uint32_t be32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* ---- the blob ---- */

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    while (n) {
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = crc32(crc, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return (uint32_t)crc;
}

static int dv_fail(icd_error *err, const char *location, uint64_t off, const char *fmt, ...)
    ICD_PRINTF(4, 5);
static int dv_fail(icd_error *err, const char *location, uint64_t off, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return icd_fail(err, ICD_ECORRUPT, location, (int64_t)off, "deletion vector: %s", msg);
}

int ice_dv_decode(const uint8_t *blob, size_t n, const char *location, uint64_t blob_offset,
                  int64_t expected_cardinality, unsigned flags, ice_posset **out, ice_dv_info *info,
                  icd_error *err)
{
    if (out) *out = NULL;
    ice_dv_info tmp;
    if (!info) info = &tmp;
    memset(info, 0, sizeof *info);
    if (n < ICE_DV_MIN_BYTES)
        return dv_fail(err, location, blob_offset,
                       "blob of %zu bytes is shorter than the minimum of %u", n, ICE_DV_MIN_BYTES);
    if (n > ICE_DV_MAX_BYTES)
        return icd_fail(err, ICD_EUNSUPPORTED, location, (int64_t)blob_offset,
                        "deletion vector of %zu bytes exceeds the 2 GiB limit", n);
    uint32_t len = be32(blob);
    if (len != n - 8)
        return dv_fail(err, location, blob_offset,
                       "length field is %u but the blob of %zu bytes holds %zu bytes of magic "
                       "and vector",
                       len, n, n - 8);
    if (memcmp(blob + 4, DV_MAGIC, 4))
        return dv_fail(err, location, blob_offset + 4,
                       "bad magic %02x %02x %02x %02x (want d1 d3 39 64)", blob[4], blob[5],
                       blob[6], blob[7]);
    info->crc_stored = be32(blob + n - 4);
    info->crc_computed = crc32_of(blob + 4, n - 8);
    info->crc_ok = info->crc_stored == info->crc_computed;
    if (!info->crc_ok && !(flags & ICE_DV_SKIP_CRC))
        return dv_fail(err, location, blob_offset + n - 4,
                       "CRC-32 mismatch: stored 0x%08x, computed 0x%08x", info->crc_stored,
                       info->crc_computed);

    const uint8_t *v = blob + 8;
    size_t vlen = n - 12;
    uint64_t vbase = blob_offset + 8; /* file offset of the vector */
    uint64_t count = le64(v);
    /* Each bitmap takes at least a key and an 8-byte empty no-run bitmap. */
    if (count > (vlen - 8) / 12)
        return dv_fail(err, location, vbase, "claims %llu bitmaps but only %zu bytes follow",
                       (unsigned long long)count, vlen - 8);
    info->nbitmaps = count;
    ice_posset *set = NULL;
    if (out) {
        int nrc = ice_posset_new(&set, err);
        if (nrc) return nrc;
    }
    size_t pos = 8;
    int64_t prev_key = -1;
    int rc = 0;
    for (uint64_t i = 0; i < count && !rc; i++) {
        if (vlen - pos < 4) {
            rc = dv_fail(err, location, vbase + pos, "bitmap %llu: key truncated",
                         (unsigned long long)i);
            break;
        }
        uint32_t key = le32(v + pos);
        if ((int64_t)key <= prev_key) {
            rc = dv_fail(err, location, vbase + pos,
                         "bitmap %llu: key %u is not greater than the previous key %lld",
                         (unsigned long long)i, key, (long long)prev_key);
            break;
        }
        if (key > 0x7FFFFFFFu) {
            rc = dv_fail(err, location, vbase + pos,
                         "bitmap %llu: key 0x%08x makes positions negative", (unsigned long long)i,
                         key);
            break;
        }
        prev_key = key;
        pos += 4;
        ice_r32 r;
        ice_r32_error why;
        if (ice_r32_parse(v + pos, vlen - pos, &r, &why)) {
            rc = why.nomem
                     ? icd_fail_nomem(err)
                     : dv_fail(err, location, vbase + pos + why.at, "bitmap %llu (key %u): %s",
                               (unsigned long long)i, key, why.msg);
            break;
        }
        info->cardinality += r.card;
        info->has_run_containers |= r.has_runs;
        size_t size = r.size;
        if (set) {
            /* The set keeps the validated bytes and reads them in place. */
            uint8_t *copy = malloc(size ? size : 1);
            if (!copy) {
                ice_r32_release(&r);
                rc = icd_fail_nomem(err);
                break;
            }
            memcpy(copy, v + pos, size);
            rc = ice_posset_adopt_portable(set, key, copy, &r, err);
        } else {
            ice_r32_release(&r);
        }
        pos += size;
    }
    if (!rc && pos != vlen)
        rc = dv_fail(err, location, vbase + pos, "%zu bytes after the last bitmap", vlen - pos);
    if (!rc && expected_cardinality >= 0 && info->cardinality != (uint64_t)expected_cardinality)
        rc = dv_fail(err, location, blob_offset, "holds %llu positions but the metadata says %lld",
                     (unsigned long long)info->cardinality, (long long)expected_cardinality);
    if (rc) {
        ice_posset_free(set);
        return rc;
    }
    if (out) *out = set;
    return 0;
}

static int check_range(const char *location, uint64_t file_size, int64_t offset, int64_t size,
                       icd_error *err)
{
    if (offset < 0 || size < 0)
        return icd_fail(err, ICD_ECORRUPT, location, offset,
                        "deletion vector: negative content offset %lld or size %lld",
                        (long long)offset, (long long)size);
    if ((uint64_t)size > ICE_DV_MAX_BYTES)
        return icd_fail(err, ICD_EUNSUPPORTED, location, offset,
                        "deletion vector of %lld bytes exceeds the 2 GiB limit", (long long)size);
    if ((uint64_t)offset > file_size || (uint64_t)size > file_size - (uint64_t)offset)
        return icd_fail(err, ICD_ECORRUPT, location, offset,
                        "deletion vector at offset %lld, size %lld lies beyond the end of the "
                        "file (%llu bytes)",
                        (long long)offset, (long long)size, (unsigned long long)file_size);
    return 0;
}

static int wrap_for(int rc, icd_error *err, const char *data_file)
{
    if (rc && data_file && err) icd_error_wrap(err, "for data file %s", data_file);
    return rc;
}

int ice_dv_read_at(icd_file *f, int64_t offset, int64_t size, const char *data_file,
                   int64_t expected_cardinality, ice_posset **out, icd_error *err)
{
    *out = NULL;
    ICD_TRY(
        wrap_for(check_range(f->location, icd_file_size(f), offset, size, err), err, data_file));
    uint8_t *buf = malloc(size ? (size_t)size : 1);
    if (!buf) return icd_fail_nomem(err);
    int rc = icd_file_read_at(f, (uint64_t)offset, buf, (size_t)size, err);
    if (!rc)
        rc = ice_dv_decode(buf, (size_t)size, f->location, (uint64_t)offset, expected_cardinality,
                           0, out, NULL, err);
    free(buf);
    return wrap_for(rc, err, data_file);
}

int ice_dv_read(icd_fileio *io, const char *location, int64_t offset, int64_t size,
                const char *data_file, int64_t expected_cardinality, ice_posset **out,
                icd_error *err)
{
    *out = NULL;
    icd_file *f;
    ICD_TRY(wrap_for(icd_file_open(io, location, &f, err), err, data_file));
    int rc = ice_dv_read_at(f, offset, size, data_file, expected_cardinality, out, err);
    icd_file_close(f);
    return rc;
}

/* Parses the "cardinality" property: decimal digits only. */
static int parse_card(const char *s, uint64_t *out)
{
    if (!s || !*s) return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10) return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

int ice_dv_read_blob(ice_puffin *p, const ice_puffin_blob *b, const char *data_file,
                     int64_t expected_cardinality, unsigned flags, ice_posset **out,
                     ice_dv_info *info, icd_error *err)
{
    if (out) *out = NULL;
    int64_t at = (int64_t)b->offset;
    if (strcmp(b->type, ICE_PUFFIN_BLOB_DV))
        return icd_fail(err, ICD_ECORRUPT, p->location, at,
                        "blob at offset %lld is a '%s', not a %s", (long long)at, b->type,
                        ICE_PUFFIN_BLOB_DV);
    if (b->codec)
        return icd_fail(err, ICD_ECORRUPT, p->location, at,
                        "deletion vector blob has compression-codec '%s' (must be absent)",
                        b->codec);
    const char *ref = ice_puffin_prop_get(b->props, b->nprops, "referenced-data-file");
    if (!ref)
        return icd_fail(err, ICD_ECORRUPT, p->location, at,
                        "deletion vector blob lacks the referenced-data-file property");
    if (data_file && strcmp(ref, data_file))
        return icd_fail(err, ICD_ECORRUPT, p->location, at,
                        "deletion vector references '%s', not the data file '%s'", ref, data_file);
    uint64_t card;
    if (parse_card(ice_puffin_prop_get(b->props, b->nprops, "cardinality"), &card))
        return icd_fail(err, ICD_ECORRUPT, p->location, at,
                        "deletion vector blob lacks a numeric cardinality property");
    if (expected_cardinality >= 0 && card != (uint64_t)expected_cardinality)
        return icd_fail(err, ICD_ECORRUPT, p->location, at,
                        "deletion vector blob cardinality %llu differs from the expected %lld",
                        (unsigned long long)card, (long long)expected_cardinality);
    if (card > INT64_MAX)
        return icd_fail(err, ICD_ECORRUPT, p->location, at,
                        "deletion vector cardinality %llu is out of range",
                        (unsigned long long)card);
    if (b->length > ICE_DV_MAX_BYTES)
        return icd_fail(err, ICD_EUNSUPPORTED, p->location, at,
                        "deletion vector of %llu bytes exceeds the 2 GiB limit",
                        (unsigned long long)b->length);
    uint8_t *buf = malloc(b->length ? (size_t)b->length : 1);
    if (!buf) return icd_fail_nomem(err);
    int rc = ice_puffin_read_at(p, b->offset, buf, (size_t)b->length, err);
    if (!rc)
        rc = ice_dv_decode(buf, (size_t)b->length, p->location, b->offset, (int64_t)card, flags,
                           out, info, err);
    free(buf);
    return rc;
}

int ice_dv_read_validated(icd_fileio *io, const char *location, int64_t offset, int64_t size,
                          const char *data_file, int64_t expected_cardinality, ice_posset **out,
                          icd_error *err)
{
    *out = NULL;
    ice_puffin *p;
    ICD_TRY(wrap_for(ice_puffin_open(io, location, &p, err), err, data_file));
    int rc = check_range(location, p->file_size, offset, size, err);
    const ice_puffin_blob *b = rc ? NULL : ice_puffin_find_blob(p, (uint64_t)offset);
    if (!rc && !b)
        rc = icd_fail(err, ICD_ECORRUPT, location, offset,
                      "the Puffin footer lists no blob at offset %lld", (long long)offset);
    if (!rc && b->length != (uint64_t)size)
        rc = icd_fail(err, ICD_ECORRUPT, location, offset,
                      "the Puffin footer gives the blob at offset %lld a length of %llu, the "
                      "manifest %lld",
                      (long long)offset, (unsigned long long)b->length, (long long)size);
    if (!rc) rc = ice_dv_read_blob(p, b, data_file, expected_cardinality, 0, out, NULL, err);
    ice_puffin_close(p);
    return wrap_for(rc, err, data_file);
}
