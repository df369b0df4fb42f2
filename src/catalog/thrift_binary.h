/*
 * Thrift BINARY protocol (the wire format of the Hive Metastore service): a writer that
 * appends big-endian values to an icd_buf, and a pull reader over one in-memory message.
 *
 * This is not Parquet's COMPACT protocol (src/formats/parquet/thrift.h): integers are fixed
 * width big-endian instead of zigzag varints, field headers carry the full 16-bit id instead
 * of a delta, booleans are one byte, and the type codes differ, so no decoding helper can be
 * shared beyond the idea of a bounded cursor.
 *
 * The reader checks every length against the bytes left and limits nesting, so any input is
 * either decoded or rejected with one error line. When the bytes end before the value does,
 * r->truncated is set as well: a caller reading an unframed reply from a socket uses that to
 * tell "read more" from "corrupt".
 */
#ifndef ICD_CATALOG_THRIFT_BINARY_H
#define ICD_CATALOG_THRIFT_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"

/* Binary protocol type codes. */
enum {
    CAT_TB_STOP = 0,
    CAT_TB_VOID = 1,
    CAT_TB_BOOL = 2,
    CAT_TB_BYTE = 3,
    CAT_TB_DOUBLE = 4,
    CAT_TB_I16 = 6,
    CAT_TB_I32 = 8,
    CAT_TB_I64 = 10,
    CAT_TB_STRING = 11,
    CAT_TB_STRUCT = 12,
    CAT_TB_MAP = 13,
    CAT_TB_SET = 14,
    CAT_TB_LIST = 15,
    CAT_TB_UUID = 16
};

/* Message types (the low byte of the strict version word 0x8001000T). */
enum { CAT_TB_CALL = 1, CAT_TB_REPLY = 2, CAT_TB_EXCEPTION = 3, CAT_TB_ONEWAY = 4 };

#define CAT_TB_VERSION_1 0x80010000u
#define CAT_TB_MAX_DEPTH 64

/* ---- writer ---------------------------------------------------------------------------- */

void cat_tb_put_i8(icd_buf *b, int8_t v);
void cat_tb_put_i16(icd_buf *b, int16_t v);
void cat_tb_put_i32(icd_buf *b, int32_t v);
void cat_tb_put_string(icd_buf *b, const char *s, size_t n);
/* A field header (type, id); end a struct with cat_tb_put_i8(b, CAT_TB_STOP). */
void cat_tb_put_field(icd_buf *b, int type, int16_t id);
/* A strict message header: version|type, name, sequence id. */
void cat_tb_put_message(icd_buf *b, const char *name, int type, int32_t seqid);

/* ---- reader ---------------------------------------------------------------------------- */

typedef struct cat_tb {
    const uint8_t *start;
    const uint8_t *p;
    const uint8_t *end;
    int depth;
    bool truncated;       /* an error came from running out of bytes */
    const char *location; /* named in errors (may be NULL) */
    icd_error *err;
} cat_tb;

void cat_tb_init(cat_tb *r, const void *p, size_t n, const char *location, icd_error *err);
static inline size_t cat_tb_pos(const cat_tb *r)
{
    return (size_t)(r->p - r->start);
}

int cat_tb_i8(cat_tb *r, int8_t *v);
int cat_tb_i16(cat_tb *r, int16_t *v);
int cat_tb_i32(cat_tb *r, int32_t *v);
int cat_tb_i64(cat_tb *r, int64_t *v);
/* A string/binary: points into the buffer (not NUL-terminated). */
int cat_tb_string(cat_tb *r, const uint8_t **p, uint32_t *n);
/* The same, copied and NUL-terminated (malloc'd). Embedded NUL bytes are corrupt. */
int cat_tb_string_dup(cat_tb *r, char **out);

/* A strict message header. Old unversioned headers are rejected (no server sends them
 * unless configured to). */
int cat_tb_message_begin(cat_tb *r, const uint8_t **name, uint32_t *name_len, int *type,
                         int32_t *seqid);

/* Struct fields: begin/end track nesting; cat_tb_field gives type CAT_TB_STOP at the end. */
int cat_tb_struct_begin(cat_tb *r);
void cat_tb_struct_end(cat_tb *r);
int cat_tb_field(cat_tb *r, int *type, int16_t *id);
/* Container headers; the counts are checked against the bytes left. Call
 * cat_tb_container_end after the elements. */
int cat_tb_map_begin(cat_tb *r, int *key_type, int *val_type, uint32_t *count);
int cat_tb_list_begin(cat_tb *r, int *elem_type, uint32_t *count);
void cat_tb_container_end(cat_tb *r);

/* Skips one value of any type, recursively. */
int cat_tb_skip(cat_tb *r, int type);

/* Records a corrupt-input error at the current position. */
int cat_tb_corrupt(cat_tb *r, const char *fmt, ...) ICD_PRINTF(2, 3);

#endif
