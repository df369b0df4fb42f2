/*
 * Redaction of the userinfo of URLs in text meant for people (error lines, logs, served
 * documents): in "http://user:pass@host/x" the "user:pass" becomes three asterisks. Every place
 * that prints a location goes through this, so a password inside a table or endpoint URL is never
 * echoed (icd_error does it when an error is recorded).
 */
#ifndef ICD_BASE_REDACT_H
#define ICD_BASE_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#include "icedruid/error.h"

/* icd_redact_userinfo (rewriting a text in place) is public: icedruid/error.h. */
/* True when `url` has a userinfo part ("SCHEME://...@HOST"). */
bool icd_url_has_userinfo(const char *url);

#endif
