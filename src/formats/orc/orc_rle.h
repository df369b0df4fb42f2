/*
 * ORC run-length decoders over one decompressed stream held in memory: byte RLE, boolean
 * RLE (bits of byte RLE, most significant first), integer RLE v1 and v2 (signed values are
 * zigzag encoded), plus the base-128 varints they and the decimal DATA stream use. Each
 * decoder is stateful and hands out values in any batch size; the column readers in
 * orc_reader.c own one per stream.
 *
 * Errors are ICD_ECORRUPT with a message naming what was malformed and err->offset set to
 * the byte offset inside the (decompressed) stream; the column reader adds the column,
 * stream and file.
 */
#ifndef ICD_ORC_RLE_H
#define ICD_ORC_RLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/varint.h"
#include "base/error.h"

/* A read position in a decompressed stream. */
typedef struct orc_cursor {
    const uint8_t *base; /* start of the stream (for offsets in errors) */
    const uint8_t *p;
    const uint8_t *end;
} orc_cursor;

/* An absent stream reads as an empty one at a real address, so that advancing by
 * zero and handing out zero-length values never touches a null pointer. */
static inline void orc_cursor_init(orc_cursor *c, const uint8_t *p, size_t len)
{
    static const uint8_t none[1];
    if (!p) {
        p = none;
        len = 0;
    }
    c->base = c->p = p;
    c->end = p + len;
}
static inline size_t orc_cursor_left(const orc_cursor *c)
{
    return (size_t)(c->end - c->p);
}
static inline int64_t orc_cursor_offset(const orc_cursor *c)
{
    return (int64_t)(c->p - c->base);
}

/* Unsigned base-128 varint (at most 10 bytes, value fits 64 bits). */
int orc_read_uvarint(orc_cursor *c, uint64_t *out, icd_error *err);
/* Zigzag-decoded signed varint. */
int orc_read_svarint(orc_cursor *c, int64_t *out, icd_error *err);
static inline int64_t orc_unzigzag(uint64_t v)
{
    return icd_unzigzag64(v);
}

/* An unbounded zigzag varint as used by decimal DATA streams, decoded into a 128-bit two's
 * complement value (hi:lo). Values that do not fit 128 bits are an error. */
int orc_read_varint128(orc_cursor *c, int64_t *hi, uint64_t *lo, icd_error *err);

typedef struct orc_byte_rle {
    orc_cursor in;
    uint8_t buf[130];
    size_t n, pos; /* buffered run: buf[pos..n) */
} orc_byte_rle;

void orc_byte_rle_init(orc_byte_rle *d, const uint8_t *p, size_t len);
int orc_byte_rle_next(orc_byte_rle *d, uint8_t *out, size_t count, icd_error *err);

typedef struct orc_bool_rle {
    orc_byte_rle bytes;
    uint8_t cur;
    int bits_left;
} orc_bool_rle;

void orc_bool_rle_init(orc_bool_rle *d, const uint8_t *p, size_t len);
/* Writes `count` values 0/1 to out. */
int orc_bool_rle_next(orc_bool_rle *d, uint8_t *out, size_t count, icd_error *err);

typedef struct orc_int_rle {
    orc_cursor in;
    bool v2;
    bool is_signed;
    int64_t buf[512];
    size_t n, pos;
} orc_int_rle;

void orc_int_rle_init(orc_int_rle *d, const uint8_t *p, size_t len, bool v2, bool is_signed);
int orc_int_rle_next(orc_int_rle *d, int64_t *out, size_t count, icd_error *err);

/* The RLEv2 5-bit width code -> bits (the delta flavour maps code 0 to width 0). */
int orc_rle2_width(unsigned code, bool delta);

#endif
