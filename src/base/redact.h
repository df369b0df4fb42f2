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

/* Rewrites the NUL-terminated text in `s` (a buffer of `cap` bytes) in place: the userinfo
 * of every "SCHEME://USERINFO@HOST" becomes "***". The result is cut to cap - 1 bytes if
 * it grew (a one- or two-byte userinfo). Returns true when something was redacted. */
bool icd_redact_userinfo(char *s, size_t cap);
/* True when `url` has a userinfo part ("SCHEME://...@HOST"). */
bool icd_url_has_userinfo(const char *url);

#endif
