/*
 * Java's number text (see javanum.c): what Druid, a Java program, accepts and prints.
 */
#ifndef ICD_BASE_JAVANUM_H
#define ICD_BASE_JAVANUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* Java's Long.parseLong (optional sign, digits, no spaces, no overflow). */
bool icd_java_parse_long(const char *s, size_t n, int64_t *out);
/* Java's Double.parseDouble over decimal text (also NaN, Infinity). */
bool icd_java_parse_double(const char *s, size_t n, double *out);
/* Java's Double.toString / Float.toString text (shortest digits; "1.0E10" style outside
 * [1e-3, 1e7)). Used where Druid stringifies numbers (map keys, timestamp patterns). */
void icd_java_fmt_double(icd_buf *b, double v);
void icd_java_fmt_float(icd_buf *b, float v);
/* Java's (long) cast of a double: NaN → 0, saturating at the int64 range. */
int64_t icd_java_d2l(double d);

#endif
