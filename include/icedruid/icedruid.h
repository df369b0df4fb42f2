/*
 * libicedruid: read Apache Iceberg tables correctly (every delete applied) and hand the
 * rows to Apache Druid. This umbrella header includes the whole public API.
 */
#ifndef ICEDRUID_H
#define ICEDRUID_H

#include "icedruid/error.h"

#include "icedruid/version.h" /* ICEDRUID_VERSION, generated from CMakeLists.txt */

#ifdef __cplusplus
extern "C" {
#endif

/* The library version, e.g. "0.1.0". */
const char *icd_version(void);

#ifdef __cplusplus
}
#endif
#endif
