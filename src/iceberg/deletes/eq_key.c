/*
 * The canonical key encoding (see eq_key.h).
 */
#include "iceberg/deletes/eq_key.h"

#include <math.h>
#include <string.h>

#include "iceberg/types.h"

uint64_t ice_key_double_bits(double d)
{
    if (isnan(d)) return 0x7ff8000000000000ull; /* every NaN is one value */
    uint64_t bits;
    memcpy(&bits, &d, 8); /* -0.0 and +0.0 stay distinct */
    return bits;
}

static void put_bytes(icd_buf *k, const uint8_t *p, size_t n)
{
    uint32_t len = (uint32_t)n;
    icd_buf_append(k, &len, 4);
    if (n) icd_buf_append(k, p, n);
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
    default:
        break;
    }
    icd_buf_putc(k, v->cls == ICE_TV_NULL ? 0 : 1);
    switch (v->cls) {
    case ICE_TV_NULL:
        return;
    case ICE_TV_FLOAT:
    case ICE_TV_DOUBLE: {
        uint64_t bits = ice_key_double_bits(v->cls == ICE_TV_FLOAT ? (double)v->f : v->d);
        icd_buf_append(k, &bits, 8);
        return;
    }
    case ICE_TV_DEC64:
    case ICE_TV_DECBE: {
        ice_i128 x = v->i;
        if (v->cls == ICE_TV_DECBE && !ice_decimal_to_i128(v->p, v->n, &x)) {
            put_bytes(k, v->p, v->n); /* over 16 bytes (cannot occur for P <= 38) */
            return;
        }
        icd_buf_append(k, &x, sizeof x);
        return;
    }
    default:
        put_bytes(k, v->p, v->n);
    }
}

void ice_key_put_literal(icd_buf *k, const ice_literal *l)
{
    if (!l->is_null && l->kind == ICE_T_STRING) {
        /* (a string partition value, every data file's: the bytes ice_key_put writes for
         * its tvalue, without making one) */
        icd_buf_putc(k, 1);
        put_bytes(k, l->v.bytes.ptr, l->v.bytes.len);
        return;
    }
    ice_type t;
    memset(&t, 0, sizeof t);
    t.kind = l->kind;
    ice_tvalue v = ice_literal_tvalue(l, &t);
    ice_key_put(k, &v);
}
