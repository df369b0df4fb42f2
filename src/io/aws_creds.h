/*
 * The AWS default credential chain: one thread-safe provider object per FileIO that S3
 * reads, the Glue catalog, STS calls and SigV4-signed REST catalogs ask for the current
 * credentials on every request (http.c does that when an icd_sigv4 names a provider).
 *
 * Sources, in the AWS SDKs' order (the first that is configured wins):
 *   1. environment: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN)
 *   2. web identity (EKS/IRSA): AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN
 *      (+ AWS_ROLE_SESSION_NAME) -> STS AssumeRoleWithWebIdentity (unsigned)
 *   3. the shared config and credentials files (AWS_CONFIG_FILE, default ~/.aws/config;
 *      AWS_SHARED_CREDENTIALS_FILE, default ~/.aws/credentials), profile AWS_PROFILE or
 *      "default": static keys; role_arn + source_profile (or credential_source) -> STS
 *      AssumeRole signed with the source's credentials; role_arn + web_identity_token_file;
 *      credential_process (its JSON output, Version 1)
 *   4. ECS container credentials: AWS_CONTAINER_CREDENTIALS_FULL_URI (http only to a
 *      loopback or the ECS/EKS link-local hosts, else https) or
 *      AWS_CONTAINER_CREDENTIALS_RELATIVE_URI (on 169.254.170.2), with the
 *      AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE) as Authorization
 *   5. EC2 instance metadata, IMDSv2 (a session token from PUT /latest/api/token, then the
 *      role's credentials), unless AWS_EC2_METADATA_DISABLED=true. The endpoint is
 *      AWS_EC2_METADATA_SERVICE_ENDPOINT, else http://169.254.169.254; without that
 *      variable the metadata service is asked only on a machine whose DMI vendor says
 *      Amazon EC2 (so no link-local traffic leaves a laptop or a CI runner).
 * No source configured: 0 ("anonymous"), the caller sends unsigned requests.
 *
 * Temporary credentials are cached and refreshed before they expire: once less than
 * min(5 minutes, half their lifetime) is left, the next request fetches new ones (a
 * failed refresh keeps the old ones while they are valid). STS endpoint:
 * AWS_ENDPOINT_URL_STS / AWS_ENDPOINT_URL, else https://sts.REGION.amazonaws.com.
 *
 * Nothing is read from the process environment: the provider is given a snapshot
 * ("NAME=value" strings) when it is created. Errors never hold key material.
 */
#ifndef ICD_IO_AWS_CREDS_H
#define ICD_IO_AWS_CREDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef struct icd_aws_creds icd_aws_creds;

/* One set of credentials (malloc'd strings; icd_aws_key_clear wipes and frees them). */
typedef struct icd_aws_key {
    char *access_key;
    char *secret_key;
    char *session_token; /* NULL for long-term keys */
    int64_t expires;     /* Unix seconds; 0: does not expire */
} icd_aws_key;

void icd_aws_key_clear(icd_aws_key *k);

/* A provider over the environment snapshot `envp` (NULL-terminated "NAME=value"; copied;
 * NULL: an empty environment). */
int icd_aws_creds_new(const char *const *envp, icd_aws_creds **out, icd_error *err);
void icd_aws_creds_free(icd_aws_creds *p);

/* The current credentials (refreshed when due): 1 with *key filled (a copy), 0 when no
 * source is configured, <0 on failure (one line naming the source, never a secret). */
int icd_aws_creds_get(icd_aws_creds *p, icd_aws_key *key, icd_error *err);

/* A variable of the snapshot (NULL when unset or empty). */
const char *icd_aws_creds_env(const icd_aws_creds *p, const char *name);

/* The region: AWS_REGION, AWS_DEFAULT_REGION, else the profile's `region` (NULL: none). */
const char *icd_aws_creds_region(icd_aws_creds *p);

/* Which source the chain settled on ("environment", "web-identity", "profile NAME",
 * "container", "instance-metadata", "none"; "" before the first request), and how many
 * times credentials were fetched from it (statistics and tests). */
const char *icd_aws_creds_source(icd_aws_creds *p);
unsigned icd_aws_creds_fetches(icd_aws_creds *p);

/* ---- exposed for tests and the fuzz target ------------------------------------------ */

/* Adds a shared config (credentials_file false: "[profile x]" sections) or credentials
 * file's text to the profiles, after the files of the snapshot. */
int icd_aws_creds_load_profile_text(icd_aws_creds *p, const char *text, size_t len,
                                    bool credentials_file, icd_error *err);
/* A key of the selected profile (credentials file first), NULL when unset. */
const char *icd_aws_creds_profile_value(icd_aws_creds *p, const char *key);
/* The credentials JSON of the container endpoint, IMDS and credential_process. */
int icd_aws_parse_key_json(const char *text, size_t len, icd_aws_key *k, icd_error *err);

/* Test hooks: the DMI vendor file consulted for IMDS (default
 * /sys/class/dmi/id/sys_vendor). */
void icd_aws_creds_set_dmi_path(icd_aws_creds *p, const char *path);

#endif
