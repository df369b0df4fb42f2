/*
 * The Hive Metastore catalog, as Druid's `hive` iceberg catalog uses it: `catalogUri`
 * (thrift://host:port, or several separated by commas, tried in order), `warehousePath`
 * and `catalogProperties`.
 *
 * A table is resolved with one ThriftHiveMetastore.get_table(db, table) call over the Thrift
 * binary protocol (our own client: no Thrift library; tests check it against Apache
 * Thrift's). TLS and Kerberos failures are not retried: one line with the reason. Like Iceberg's
 * HiveTableOperations, the table's `parameters` must hold table_type=ICEBERG (any case) and name
 * the current metadata file in metadata_location.
 *
 * Properties read (Hive's own names):
 *   hive.metastore.thrift.framed.transport.enabled  true: framed transport (default false)
 *   hive.metastore.client.socket.timeout   per connect/send/receive (default 60s; Hive's
 *                                          default unit is seconds; "10s", "500ms" accepted)
 *   hive.metastore.connect.retries         retries after a transport failure (default 3)
 *   hive.metastore.client.connect.retry.delay  pause between retries (default 1s)
 * plus the storage settings of props.h (s3.*, fs.s3a.*), passed to FileIO.
 *   hive.metastore.sasl.enabled            true: Kerberos, SASL GSSAPI (sasl_gssapi.h) in
 *                                          Thrift's SASL transport, quality of protection
 *                                          "auth"; every message is then length-framed
 *   hive.metastore.kerberos.principal      the metastore's principal, _HOST -> URI host
 *   principal, keytab                      Druid's login; without them the ticket cache
 *   hive.metastore.use.SSL                 true: TLS (OpenSSL, certificate and host name
 *                                          verified) before SASL/Thrift
 *   hive.metastore.truststore.path         CA certificates (PEM); default: the system's
 *
 * Errors: a missing database or table is ICD_ENOTFOUND quoting the metastore's
 * NoSuchObjectException; a table that is not an Iceberg table is ICD_EINVALID; an
 * unreachable or silent metastore is ICD_EIO after the retries, naming the URI.
 * A client is used from one thread at a time.
 */
#ifndef ICD_CATALOG_HIVE_H
#define ICD_CATALOG_HIVE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/error.h"
#include "iceberg/metadata.h"
#include "io/fileio.h"

typedef struct cat_hive cat_hive;

/* Opens a client (no connection is made until the first call). `io` (kept, not owned)
 * receives the storage settings of `props`. */
int cat_hive_open(icd_fileio *io, const char *uri, const json_t *props, cat_hive **out,
                  icd_error *err);
void cat_hive_free(cat_hive *c);

/* What get_table tells about a table (strings malloc'd, NULL when absent). */
typedef struct cat_hive_table {
    char *db_name;
    char *table_name;
    char *table_type;        /* Hive's tableType, e.g. EXTERNAL_TABLE */
    char *location;          /* sd.location */
    char *iceberg_type;      /* parameters["table_type"] */
    char *metadata_location; /* parameters["metadata_location"] */
} cat_hive_table;

void cat_hive_table_free(cat_hive_table *t);

/* get_table(db, table). */
int cat_hive_get_table(cat_hive *c, const char *db, const char *table, cat_hive_table **out,
                       icd_error *err);
/* get_table + the Iceberg checks: the current metadata location (malloc'd). */
int cat_hive_resolve(cat_hive *c, const char *db, const char *table, char **metadata_location,
                     icd_error *err);
/* cat_hive_resolve + ice_metadata_load. */
int cat_hive_load(cat_hive *c, const char *db, const char *table, ice_metadata **out,
                  icd_error *err);

/* Transport statistics (tests): connections opened and get_table calls sent. */
unsigned cat_hive_connects(const cat_hive *c);

/* ---- the codec, exposed for tests and the fuzz target ---------------------------------- */

/* Appends a get_table CALL message (with the 4-byte length prefix when framed). */
void cat_hive_encode_get_table(icd_buf *out, const char *db, const char *table, int32_t seqid,
                               bool framed);

/* Decodes a get_table reply message (unframed bytes). On success *out is the table and
 * *used the bytes the message took. Exceptions the server declared (NoSuchObjectException,
 * MetaException) and TApplicationException are errors with their message. When the bytes
 * end before the message does, the error has *truncated set (read more and try again). */
int cat_hive_parse_reply(const void *p, size_t n, int32_t seqid, const char *location,
                         cat_hive_table **out, size_t *used, bool *truncated, icd_error *err);

#endif
