/*
 * libFuzzer target: the text formats of the AWS credential chain (io/aws_creds.c): the
 * shared config / credentials INI files (sections, "[profile x]", nested keys, comments)
 * and the credentials JSON of the container endpoint, IMDS and credential_process
 * (AccessKeyId, SecretAccessKey, Token/SessionToken, ISO-8601 Expiration). The first byte
 * picks the format. Any crash, leak or sanitizer report is a bug; errors are expected.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "io/aws_creds.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    icd_error err;
    const char *text = (const char *)data + 1;
    size_t n = size - 1;
    if (data[0] & 1) {
        icd_aws_key k;
        if (icd_aws_parse_key_json(text, n, &k, &err) == 0) {
            if (!k.access_key || !k.secret_key) __builtin_trap();
            icd_aws_key_clear(&k);
        }
        return 0;
    }
    static const char *const ENV[] = {"AWS_PROFILE=p", NULL};
    icd_aws_creds *p;
    if (icd_aws_creds_new((data[0] & 2) ? ENV : NULL, &p, &err)) return 0;
    if (icd_aws_creds_load_profile_text(p, text, n, (data[0] & 4) != 0, &err) == 0) {
        const char *keys[] = {"region", "role_arn", "source_profile", "credential_process",
                              "aws_access_key_id"};
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
            const char *v = icd_aws_creds_profile_value(p, keys[i]);
            if (v && !v[0]) __builtin_trap();
        }
        (void)icd_aws_creds_region(p);
    }
    icd_aws_creds_free(p);
    return 0;
}
