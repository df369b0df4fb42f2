/*
 * Deletion-vector decoding (see dv.h): blob framing (length, magic, CRC-32), the 64-bit
 * portable Roaring layout, and a strict validator of the 32-bit portable Roaring format
 * (RoaringFormatSpec) run before CRoaring deserializes each bitmap into the ice_posset the
 * merge-on-read reader queries. The validator is the part that keeps malformed input from
 * reaching CRoaring 0.2.66, whose portable_deserialize_safe bounds its reads but accepts
 * unsorted arrays, wrong bitmap cardinalities and overlapping or overflowing runs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "iceberg/dv.h"

static const uint8_t DV_MAGIC[4] = {0xD1, 0xD3, 0x39, 0x64};

#define COOKIE_NO_RUN 12346u /* then a 32-bit container count, offsets always present */
#define COOKIE_RUN 12347u    /* low 16 bits; high 16 bits = container count - 1 */
#define NO_OFFSET_THRESHOLD 4u
#define ARRAY_MAX 4096u
#define BITMAP_BYTES 8192u

static uint32_t le16(const uint8_t *b) { return (uint32_t)b[0] | (uint32_t)b[1] << 8; }
static uint32_t le32(const uint8_t *b) { return le16(b) | le16(b + 2) << 16; }
static uint64_t le64(const uint8_t *b) { return le32(b) | (uint64_t)le32(b + 4) << 32; }
static uint32_t be32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* ---- 32-bit portable Roaring validation ---- */

typedef struct r32_result {
    size_t size;          /* bytes of the serialized bitmap */
    uint64_t cardinality; /* values in it */
    bool has_runs;
    const char *why; /* on failure: what is wrong ... */
    size_t at;       /* ... and where, relative to the bitmap's first byte */
    char msg[160];
} r32_result;

static int r32_fail(r32_result *r, size_t at, const char *fmt, ...) ICD_PRINTF(3, 4);
static int r32_fail(r32_result *r, size_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    r->why = r->msg;
    r->at = at;
    return -1;
}

static int check_array(const uint8_t *c, uint32_t card, size_t at, size_t ci, r32_result *r)
{
    uint32_t prev = le16(c);
    for (uint32_t k = 1; k < card; k++) {
        uint32_t v = le16(c + 2 * k);
        if (v <= prev)
            return r32_fail(r, at + 2 * k, "container %zu: array values not increasing", ci);
        prev = v;
    }
    return 0;
}

static int check_bitmap(const uint8_t *c, uint32_t card, size_t at, size_t ci, r32_result *r)
{
    uint64_t pop = 0;
    for (size_t w = 0; w < BITMAP_BYTES / 8; w++)
        pop += (uint64_t)__builtin_popcountll(le64(c + 8 * w));
    if (pop != card)
        return r32_fail(r, at, "container %zu: bitmap holds %llu values, header says %u", ci,
                        (unsigned long long)pop, card);
    return 0;
}

/* Run container at c: 2-byte run count then (start, length - 1) pairs. */
static int check_runs(const uint8_t *c, size_t avail, uint32_t card, size_t at, size_t ci,
                      size_t *size, r32_result *r)
{
    if (avail < 2)
        return r32_fail(r, at, "container %zu: run count truncated", ci);
    uint32_t nruns = le16(c);
    if ((size_t)nruns * 4 > avail - 2)
        return r32_fail(r, at, "container %zu: %u runs overrun the buffer", ci, nruns);
    uint64_t sum = 0;
    int64_t prev_end = -1;
    for (uint32_t k = 0; k < nruns; k++) {
        uint32_t start = le16(c + 2 + 4 * k), len = le16(c + 4 + 4 * k);
        if (start + len > 0xFFFF)
            return r32_fail(r, at + 2 + 4 * k, "container %zu: run %u passes 65535", ci, k);
        if ((int64_t)start <= prev_end)
            return r32_fail(r, at + 2 + 4 * k, "container %zu: runs overlap or are unsorted",
                            ci);
        prev_end = start + len;
        sum += len + 1u;
    }
    if (sum != card)
        return r32_fail(r, at, "container %zu: runs hold %llu values, header says %u", ci,
                        (unsigned long long)sum, card);
    *size = 2 + (size_t)nruns * 4;
    return 0;
}

/* Validates one portable 32-bit Roaring bitmap at p (at most `avail` bytes). */
static int check_roaring32(const uint8_t *p, size_t avail, r32_result *r)
{
    memset(r, 0, sizeof *r);
    if (avail < 4)
        return r32_fail(r, 0, "bitmap cookie truncated");
    uint32_t cookie = le32(p);
    size_t n, pos;
    const uint8_t *runflags = NULL;
    if ((cookie & 0xFFFF) == COOKIE_RUN) {
        n = (cookie >> 16) + 1;
        runflags = p + 4;
        pos = 4 + (n + 7) / 8;
        r->has_runs = true;
    } else if (cookie == COOKIE_NO_RUN) {
        if (avail < 8)
            return r32_fail(r, 4, "container count truncated");
        n = le32(p + 4);
        if (n > 65536)
            return r32_fail(r, 4, "container count %zu exceeds 65536", n);
        pos = 8;
    } else {
        return r32_fail(r, 0, "unknown Roaring cookie 0x%08x (want %u or %u)", cookie,
                        COOKIE_NO_RUN, COOKIE_RUN);
    }
    bool offsets = !runflags || n >= NO_OFFSET_THRESHOLD;
    size_t header = n * 4 + (offsets ? n * 4 : 0);
    if (pos > avail || header > avail - pos)
        return r32_fail(r, pos, "header of %zu containers is truncated", n);
    const uint8_t *desc = p + pos, *offs = p + pos + n * 4;
    pos += header;
    uint32_t prev_key = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t key = le16(desc + 4 * i), card = le16(desc + 4 * i + 2) + 1;
        if (i > 0 && key <= prev_key)
            return r32_fail(r, (size_t)(desc - p) + 4 * i, "container keys not increasing");
        prev_key = key;
        if (offsets && (size_t)le32(offs + 4 * i) != pos)
            return r32_fail(r, (size_t)(offs - p) + 4 * i,
                            "container %zu offset %u, but it starts at %zu", i,
                            le32(offs + 4 * i), pos);
        size_t left = avail - pos, size = 0;
        if (runflags && (runflags[i / 8] >> (i % 8) & 1)) {
            if (check_runs(p + pos, left, card, pos, i, &size, r))
                return -1;
        } else if (card <= ARRAY_MAX) {
            size = (size_t)card * 2;
            if (size > left)
                return r32_fail(r, pos, "container %zu: array of %u values truncated", i, card);
            if (check_array(p + pos, card, pos, i, r))
                return -1;
        } else {
            size = BITMAP_BYTES;
            if (size > left)
                return r32_fail(r, pos, "container %zu: bitmap truncated", i);
            if (check_bitmap(p + pos, card, pos, i, r))
                return -1;
        }
        pos += size;
        r->cardinality += card;
    }
    r->size = pos;
    return 0;
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
                  int64_t expected_cardinality, unsigned flags, ice_posset **out,
                  ice_dv_info *info, icd_error *err)
{
    if (out)
        *out = NULL;
    ice_dv_info tmp;
    if (!info)
        info = &tmp;
    memset(info, 0, sizeof *info);
    if (n < ICE_DV_MIN_BYTES)
        return dv_fail(err, location, blob_offset,
                       "blob of %zu bytes is shorter than the minimum of %u", n,
                       ICE_DV_MIN_BYTES);
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
        return dv_fail(err, location, vbase,
                       "claims %llu bitmaps but only %zu bytes follow",
                       (unsigned long long)count, vlen - 8);
    info->nbitmaps = count;
    ice_posset *set = NULL;
    if (out) {
        int nrc = ice_posset_new(&set, err);
        if (nrc)
            return nrc;
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
                         "bitmap %llu: key 0x%08x makes positions negative",
                         (unsigned long long)i, key);
            break;
        }
        prev_key = key;
        pos += 4;
        r32_result r;
        if (check_roaring32(v + pos, vlen - pos, &r)) {
            rc = dv_fail(err, location, vbase + pos + r.at, "bitmap %llu (key %u): %s",
                         (unsigned long long)i, key, r.why);
            break;
        }
        info->cardinality += r.cardinality;
        info->has_run_containers |= r.has_runs;
        if (set) {
            roaring_bitmap_t *bm =
                roaring_bitmap_portable_deserialize_safe((const char *)v + pos, r.size);
            if (!bm) {
                rc = icd_fail_nomem(err);
                break;
            }
            if (roaring_bitmap_get_cardinality(bm) != r.cardinality) {
                roaring_bitmap_free(bm);
                rc = icd_fail(err, ICD_EINTERNAL, location, (int64_t)(vbase + pos),
                              "deletion vector: CRoaring read %llu values where %llu were "
                              "validated",
                              (unsigned long long)roaring_bitmap_get_cardinality(bm),
                              (unsigned long long)r.cardinality);
                break;
            }
            rc = ice_posset_adopt32(set, key, bm, err);
        }
        pos += r.size;
    }
    if (!rc && pos != vlen)
        rc = dv_fail(err, location, vbase + pos, "%zu bytes after the last bitmap",
                     vlen - pos);
    if (!rc && expected_cardinality >= 0 &&
        info->cardinality != (uint64_t)expected_cardinality)
        rc = dv_fail(err, location, blob_offset,
                     "holds %llu positions but the metadata says %lld",
                     (unsigned long long)info->cardinality, (long long)expected_cardinality);
    if (rc) {
        ice_posset_free(set);
        return rc;
    }
    if (out)
        *out = set;
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
                        "deletion vector of %lld bytes exceeds the 2 GiB limit",
                        (long long)size);
    if ((uint64_t)offset > file_size || (uint64_t)size > file_size - (uint64_t)offset)
        return icd_fail(err, ICD_ECORRUPT, location, offset,
                        "deletion vector at offset %lld, size %lld lies beyond the end of the "
                        "file (%llu bytes)",
                        (long long)offset, (long long)size, (unsigned long long)file_size);
    return 0;
}

static int wrap_for(int rc, icd_error *err, const char *data_file)
{
    if (rc && data_file && err)
        icd_error_wrap(err, "for data file %s", data_file);
    return rc;
}

int ice_dv_read_at(icd_file *f, int64_t offset, int64_t size, const char *data_file,
                   int64_t expected_cardinality, ice_posset **out, icd_error *err)
{
    *out = NULL;
    ICD_TRY(wrap_for(check_range(f->location, icd_file_size(f), offset, size, err), err,
                     data_file));
    uint8_t *buf = malloc(size ? (size_t)size : 1);
    if (!buf)
        return icd_fail_nomem(err);
    int rc = icd_file_read_at(f, (uint64_t)offset, buf, (size_t)size, err);
    if (!rc)
        rc = ice_dv_decode(buf, (size_t)size, f->location, (uint64_t)offset,
                           expected_cardinality, 0, out, NULL, err);
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
    if (!s || !*s)
        return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

int ice_dv_read_blob(ice_puffin *p, const ice_puffin_blob *b, const char *data_file,
                     int64_t expected_cardinality, unsigned flags, ice_posset **out,
                     ice_dv_info *info, icd_error *err)
{
    if (out)
        *out = NULL;
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
                        "deletion vector references '%s', not the data file '%s'", ref,
                        data_file);
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
    if (!buf)
        return icd_fail_nomem(err);
    int rc = ice_puffin_read_at(p, b->offset, buf, (size_t)b->length, err);
    if (!rc)
        rc = ice_dv_decode(buf, (size_t)b->length, p->location, b->offset, (int64_t)card, flags,
                           out, info, err);
    free(buf);
    return rc;
}

int ice_dv_read_validated(icd_fileio *io, const char *location, int64_t offset, int64_t size,
                          const char *data_file, int64_t expected_cardinality,
                          ice_posset **out, icd_error *err)
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
    if (!rc)
        rc = ice_dv_read_blob(p, b, data_file, expected_cardinality, 0, out, NULL, err);
    ice_puffin_close(p);
    return wrap_for(rc, err, data_file);
}
