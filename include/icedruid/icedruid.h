/*
 * libicedruid: read Apache Iceberg tables correctly (every delete applied) and hand the
 * rows to Apache Druid. This umbrella header includes the whole public API:
 *
 *   error.h   the error model (icd_error, icd_code)
 *   table.h   storage settings and opening a table (directly or through a catalog)
 *   scan.h    planning a snapshot and reading its rows, deletes applied
 *   druid.h   a Druid ingestion spec: its plan, the spec to submit, phase 2 (diff and
 *             re-ingestion statements)
 */
#ifndef ICEDRUID_H
#define ICEDRUID_H

#include "icedruid/common.h"
#include "icedruid/druid.h"
#include "icedruid/error.h"
#include "icedruid/scan.h"
#include "icedruid/table.h"

#include "icedruid/version.h" /* ICEDRUID_VERSION, generated from CMakeLists.txt */

#ifdef __cplusplus
extern "C" {
#endif

/* The library version, e.g. "0.1.0" (the run-time library's, which may differ from the
 * ICEDRUID_VERSION the caller was compiled against). */
ICD_EXTERN const char *icd_version(void);

#ifdef __cplusplus
}
#endif
#endif
