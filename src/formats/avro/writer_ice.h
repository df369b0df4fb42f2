/*
 * Writing the Iceberg read of a data file as an Avro container file (the materialized
 * files of Avro tables, druid/stage/stage.h): the Avro schema of the read schema's fields by
 * Iceberg's Avro mapping, and an ice_row_sink that encodes the merge-on-read reader's rows
 * as Avro datums into an icd_avro_writer.
 *
 * Mapping (Iceberg spec, "Avro"): optional fields are ["null", T] with default null;
 * every field carries "field-id"; boolean, int, long, float, double, string, binary
 * (bytes) as themselves; date int/date; time long/time-micros; timestamp(tz)
 * long/timestamp-micros (timestamp-nanos for the _ns types) with adjust-to-utc;
 * decimal(P,S) fixed[minimal bytes for P]/decimal; uuid fixed[16]/uuid; fixed[L] fixed;
 * struct record "r<id>"; list array with element-id; map with string keys map with
 * key-id/value-id, other keys an array of "k<id>_v<id>" records with logicalType map.
 * The top-level record is named "table", as Iceberg's writer names it.
 */
#ifndef ICD_AVRO_WRITER_ICE_H
#define ICD_AVRO_WRITER_ICE_H

#include <stddef.h>

#include "base/buf.h"
#include "base/error.h"
#include "formats/avro/writer.h"
#include "iceberg/row_sink.h"
#include "iceberg/types.h"

/* The schema JSON of the top-level fields, appended to `out`. variant, unknown and geo
 * types fail with ICD_EUNSUPPORTED naming the column. */
int icd_avro_ice_schema_json(const ice_field *fields, size_t nfields, icd_buf *out, icd_error *err);

typedef struct icd_avro_ice_sink icd_avro_ice_sink;

/* A sink writing to `w` (its schema from icd_avro_ice_schema_json of the same fields).
 * Borrows w and fields. */
int icd_avro_ice_sink_new(icd_avro_writer *w, const ice_field *fields, size_t nfields,
                          icd_avro_ice_sink **out, icd_error *err);
/* end_row fails (stopping the scan) on a value the schema cannot hold (a null in a
 * required field, a fixed of the wrong length, a decimal that does not fit, a value of
 * another type than the field's). */
const ice_row_sink *icd_avro_ice_sink_get(icd_avro_ice_sink *s);
int64_t icd_avro_ice_sink_rows(const icd_avro_ice_sink *s);
void icd_avro_ice_sink_free(icd_avro_ice_sink *s);

#endif
