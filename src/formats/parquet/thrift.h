/*
 * Thrift compact protocol reader and writer: the wire format of Parquet's footer (FileMetaData) and
 * page headers. A pull parser over one in-memory buffer; every length taken from the input
 * is checked against the bytes left, and nesting is limited so hostile input can neither
 * read out of bounds nor exhaust the stack.
 *
 * Usage for a struct:
 *     int16_t last = 0; pq_tfield f;
 *     ICD_TRY(pq_thrift_struct_begin(r));
 *     while ((rc = pq_thrift_field(r, &last, &f)) == 0 && f.type != PQ_T_STOP) {
 *         switch (f.id) { case 1: ICD_TRY(pq_thrift_i32(r, &x)); break;
 *                         default: ICD_TRY(pq_thrift_skip(r, f.type)); }
 *     }
 *     pq_thrift_struct_end(r);
 */
#ifndef ICD_PQ_THRIFT_H
#define ICD_PQ_THRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct icd_buf;

/* Compact protocol type codes (the low nibble of a field header / list header). */
enum {
    PQ_T_STOP = 0,
    PQ_T_TRUE = 1, /* boolean true (field header) or boolean element type in a list */
    PQ_T_FALSE = 2,
    PQ_T_BYTE = 3,
    PQ_T_I16 = 4,
    PQ_T_I32 = 5,
    PQ_T_I64 = 6,
    PQ_T_DOUBLE = 7,
    PQ_T_BINARY = 8,
    PQ_T_LIST = 9,
    PQ_T_SET = 10,
    PQ_T_MAP = 11,
    PQ_T_STRUCT = 12
};

/* Nesting beyond this many structs/containers is treated as corrupt input. */
#define PQ_THRIFT_MAX_DEPTH 64

typedef struct pq_thrift {
    const uint8_t *start; /* first byte of the buffer */
    const uint8_t *p;     /* next byte to read */
    const uint8_t *end;
    int depth;
    const char *location; /* file named in errors (may be NULL) */
    int64_t base_offset;  /* file offset of `start`, for error offsets (-1: unknown) */
    const char *what;     /* what is being decoded ("footer", "page header") */
    icd_error *err;
} pq_thrift;

/* A field header: its type and its id (after applying the delta). For boolean fields the
 * value is carried by the type: PQ_T_TRUE or PQ_T_FALSE. */
typedef struct pq_tfield {
    int type;
    int16_t id;
} pq_tfield;

void pq_thrift_init(pq_thrift *r, const uint8_t *p, size_t n, const char *location,
                    int64_t base_offset, const char *what, icd_error *err);
/* Bytes consumed so far. */
static inline size_t pq_thrift_pos(const pq_thrift *r)
{
    return (size_t)(r->p - r->start);
}

/* Records a corrupt-input error at the current position: "<what>: <message>". */
int pq_thrift_corrupt(pq_thrift *r, const char *fmt, ...) ICD_PRINTF(2, 3);

int pq_thrift_varint(pq_thrift *r, uint64_t *v);
int pq_thrift_i64(pq_thrift *r, int64_t *v); /* zigzag varint */
int pq_thrift_i32(pq_thrift *r, int32_t *v); /* zigzag varint, range-checked */
int pq_thrift_i16(pq_thrift *r, int16_t *v);
int pq_thrift_byte(pq_thrift *r, int8_t *v);
int pq_thrift_double(pq_thrift *r, double *v); /* 8 bytes little-endian */
/* A binary/string: points into the buffer (not NUL-terminated). */
int pq_thrift_binary(pq_thrift *r, const uint8_t **p, uint32_t *n);
/* A boolean field's value from its header type (fails if the type is not boolean). */
int pq_thrift_bool_field(pq_thrift *r, const pq_tfield *f, bool *v);
/* A boolean list element (one byte). */
int pq_thrift_bool_elem(pq_thrift *r, bool *v);

/* Structs: begin/end track nesting depth; pq_thrift_field reads the next field header and
 * returns type PQ_T_STOP at the end of the struct. `last_id` holds the previous field id of
 * this struct (start it at 0). */
int pq_thrift_struct_begin(pq_thrift *r);
void pq_thrift_struct_end(pq_thrift *r);
int pq_thrift_field(pq_thrift *r, int16_t *last_id, pq_tfield *f);

/* A list or set header: element type and element count. The count is checked against the
 * bytes left (every element takes at least one byte). Call pq_thrift_container_end after
 * the elements. */
int pq_thrift_list_begin(pq_thrift *r, int *elem_type, uint32_t *count);
/* A map header: count, key and value types (both PQ_T_STOP for an empty map). */
int pq_thrift_map_begin(pq_thrift *r, int *key_type, int *val_type, uint32_t *count);
void pq_thrift_container_end(pq_thrift *r);

/* Skips one value of the given type (recursively for containers and structs). */
int pq_thrift_skip(pq_thrift *r, int type);
/* Skips one list/set/map element (a boolean element takes one byte there). */
int pq_thrift_skip_elem(pq_thrift *r, int type);

/* Checks that a field has the expected wire type (PQ_T_TRUE/FALSE both mean boolean). */
int pq_thrift_expect(pq_thrift *r, const pq_tfield *f, int type);

/* --- writer (the encoder of the same protocol; used by the Parquet writer) ---
 *
 * Appends to an icd_buf (allocation failures surface through icd_buf_ok, checked once by
 * the caller). Field ids are delta-encoded against the previous field of the same
 * struct, so struct_begin/struct_end keep a stack of the last ids:
 *     pq_tw_struct_begin(w); pq_tw_field_i32(w, 1, v); ...; pq_tw_struct_end(w);
 * A struct field: pq_tw_field_begin(w, id, PQ_T_STRUCT) then pq_tw_struct_begin(w).
 * A list field: pq_tw_field_begin(w, id, PQ_T_LIST), pq_tw_list_begin(w, type, n), then
 * n elements written with the bare value calls (pq_tw_i32, pq_tw_binary, or a struct). */
typedef struct pq_tw {
    struct icd_buf *out;
    int depth;
    int16_t last[PQ_THRIFT_MAX_DEPTH];
} pq_tw;

void pq_tw_init(pq_tw *w, struct icd_buf *out);
void pq_tw_struct_begin(pq_tw *w);
void pq_tw_struct_end(pq_tw *w); /* writes the STOP byte */
/* A field header (for PQ_T_TRUE / PQ_T_FALSE the header carries a boolean's value). */
void pq_tw_field_begin(pq_tw *w, int16_t id, int type);
void pq_tw_list_begin(pq_tw *w, int elem_type, uint32_t count);
void pq_tw_varint(pq_tw *w, uint64_t v);
void pq_tw_i64(pq_tw *w, int64_t v); /* zigzag varint (also i32, i16) */
void pq_tw_binary(pq_tw *w, const void *p, size_t n);
void pq_tw_field_i32(pq_tw *w, int16_t id, int32_t v);
void pq_tw_field_i64(pq_tw *w, int16_t id, int64_t v);
void pq_tw_field_i8(pq_tw *w, int16_t id, int8_t v);
void pq_tw_field_bool(pq_tw *w, int16_t id, bool v);
void pq_tw_field_binary(pq_tw *w, int16_t id, const void *p, size_t n);
/* A field whose value is an empty struct (Thrift unions of empty structs: StringType,
 * TypeDefinedOrder, MICROS, ...). */
void pq_tw_field_empty_struct(pq_tw *w, int16_t id);

#endif
