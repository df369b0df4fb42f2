/*
 * The canonical key encoding (see eq_key.h).
 */
#include "iceberg/deletes/eq_key.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "iceberg/types.h"

uint64_t ice_key_double_bits(double d)
{
    if (isnan(d)) return 0x7ff8000000000000ull; /* every NaN is one value */
    uint64_t bits;
    memcpy(&bits, &d, 8); /* -0.0 and +0.0 stay distinct */
    return bits;
}

/* A present value's canonical bytes: the presence byte, then the 4-byte length when
 * `var`, then the n bytes; one room check (keys are built for every row probed). */
static inline void put_value(icd_buf *k, const void *p, size_t n, bool var)
{
    size_t need = (var ? 5u : 1u) + n;
    if (k->len + need + 1 > k->cap && !icd_buf_grow(k, need + 1)) return;
    uint8_t *o = (uint8_t *)k->data + k->len;
    *o++ = 1;
    if (var) {
        uint32_t len = (uint32_t)n;
        memcpy(o, &len, 4);
        o += 4;
    }
    if (n) memcpy(o, p, n);
    o[n] = 0;
    k->len += need;
}

void ice_key_put(icd_buf *k, const ice_tvalue *v)
{
    switch (v->cls) {
    case ICE_TV_BOOL:
    case ICE_TV_INT:
    case ICE_TV_DATE:
    case ICE_TV_TIME:
    case ICE_TV_TS:
        ice_key_put_int(k, v->i);
        return;
    case ICE_TV_NULL:
        icd_buf_putc(k, 0);
        return;
    case ICE_TV_FLOAT:
    case ICE_TV_DOUBLE: {
        uint64_t bits = ice_key_double_bits(v->cls == ICE_TV_FLOAT ? (double)v->f : v->d);
        put_value(k, &bits, 8, false);
        return;
    }
    case ICE_TV_DEC64:
    case ICE_TV_DECBE: {
        ice_i128 x = v->i;
        if (v->cls == ICE_TV_DECBE && !ice_decimal_to_i128(v->p, v->n, &x))
            put_value(k, v->p, v->n, true); /* over 16 bytes (cannot occur for P <= 38) */
        else
            put_value(k, &x, sizeof x, false);
        return;
    }
    default:
        put_value(k, v->p, v->n, true);
    }
}

void ice_key_put_literal(icd_buf *k, const ice_literal *l)
{
    if (!l->is_null && l->kind == ICE_T_STRING) {
        /* (a string partition value, every data file's: the bytes ice_key_put writes for
         * its tvalue, without making one) */
        put_value(k, l->v.bytes.ptr, l->v.bytes.len, true);
        return;
    }
    ice_type t;
    memset(&t, 0, sizeof t);
    t.kind = l->kind;
    ice_tvalue v = ice_literal_tvalue(l, &t);
    ice_key_put(k, &v);
}
