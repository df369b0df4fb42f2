/*
 * Avro values as JSON text (design.md §3): the NDJSON rows of `icedruid cat FILE.avro` and
 * of the fuzz target. Logical types decide the text (decimal, uuid, date, time,
 * timestamp); every value goes through base/jsonw.h.
 */
#ifndef ICD_AVRO_JSON_H
#define ICD_AVRO_JSON_H

#include "base/buf.h"
#include "base/error.h"
#include "formats/avro/decode.h"

/* Appends `v` as one JSON value. Fails (ICD_ECORRUPT) only for a decimal whose bytes are
 * longer than its precision allows. */
int icd_avro_value_json(icd_buf *b, const icd_avro_value *v, icd_error *err);

#endif
