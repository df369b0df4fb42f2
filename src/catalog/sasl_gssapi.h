/*
 * The client side of the SASL GSSAPI mechanism (RFC 4752) over MIT Kerberos' GSS-API, as
 * the Hive Metastore's Kerberos authentication uses it (hive.c carries the tokens in
 * Thrift's SASL transport frames): security context establishment with the metastore's
 * service principal, then the security-layer negotiation (no layer: "auth" quality of
 * protection, which is what Hive clients ask for by default).
 *
 * Credentials: with a keytab, the client principal's initial ticket is obtained from it
 * (into a private in-memory cache, so nothing touches the user's ticket cache); without
 * one, the default ticket cache (KRB5CCNAME) is used, as `kinit` left it. Errors are one
 * line with the GSS-API and Kerberos messages ("Preauthentication failed", "Ticket
 * expired", "Server not found in Kerberos database").
 */
#ifndef ICD_CATALOG_SASL_GSSAPI_H
#define ICD_CATALOG_SASL_GSSAPI_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"
#include "base/error.h"

typedef struct cat_gss cat_gss;

/* Prepares a client for `service` (a Kerberos principal, e.g. hive/host@REALM) as
 * `principal` with `keytab` (both NULL: the default ticket cache). `where` names the
 * metastore in errors. */
int cat_gss_new(const char *service, const char *principal, const char *keytab, const char *where,
                cat_gss **out, icd_error *err);
void cat_gss_free(cat_gss *g);

/* One step: consumes the server's challenge (NULL/0 for the first step) and appends the
 * response to send to `out`. *done turns true once the client has sent its last message. */
int cat_gss_step(cat_gss *g, const void *in, size_t len, icd_buf *out, bool *done, icd_error *err);

#endif
