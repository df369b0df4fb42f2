/* Unit tests of base/redact.c (issue 15 item 12): the userinfo of URLs is replaced by
 * "***" in text, and icd_error redacts every error line it records. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/redact.h"
#include "test.h"

static const char *redacted(const char *in)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s", in);
    icd_redact_userinfo(buf, sizeof buf);
    return buf;
}

static void test_redact_text(void)
{
    CHECK_EQ_STR(redacted("http://user:pass@host:8080/x?y=1"), "http://***@host:8080/x?y=1");
    CHECK_EQ_STR(redacted("s3://AKIA:secret@bucket/key"), "s3://***@bucket/key");
    /* several URLs in one line, a user without password, a password containing '@' */
    CHECK_EQ_STR(redacted("cannot read https://a@h/1 (from http://u:p@ss@h2/2)"),
                 "cannot read https://***@h/1 (from http://***@h2/2)");
    /* '@' after the authority is not userinfo */
    CHECK_EQ_STR(redacted("http://host/path@x and mailto:a@b"),
                 "http://host/path@x and mailto:a@b");
    CHECK_EQ_STR(redacted("no url here"), "no url here");
    CHECK_EQ_STR(redacted("'http://u:p@h'"), "'http://***@h'");
    /* a one-byte userinfo grows the text; the result still fits the buffer */
    char small[16];
    snprintf(small, sizeof small, "http://u@host/");
    CHECK(icd_redact_userinfo(small, sizeof small));
    CHECK_EQ_STR(small, "http://***@host");
    CHECK(icd_url_has_userinfo("http://u:p@h/"));
    CHECK(!icd_url_has_userinfo("http://h/a@b"));
}

static void test_error_lines_redacted(void)
{
    icd_error err;
    icd_error_clear(&err);
    icd_fail(&err, ICD_EIO, "http://admin:hunter2@minio:9000/wh/t/metadata/v3.metadata.json", -1,
             "GET http://admin:hunter2@minio:9000/wh/t/metadata/v3.metadata.json: HTTP 503");
    char line[2200];
    icd_error_format(&err, line, sizeof line);
    CHECK(strstr(line, "hunter2") == NULL);
    CHECK_EQ_STR(line, "http://***@minio:9000/wh/t/metadata/v3.metadata.json: GET "
                       "http://***@minio:9000/wh/t/metadata/v3.metadata.json: HTTP 503");
    icd_error_clear(&err);
    icd_fail(&err, ICD_EIO, NULL, -1, "boom");
    icd_error_set_file(&err, "https://u:secret@h/f.parquet");
    icd_error_wrap(&err, "reading https://u:secret@h/f.parquet");
    icd_error_format(&err, line, sizeof line);
    CHECK_EQ_STR(line, "https://***@h/f.parquet: reading https://***@h/f.parquet: boom");
}

TEST_MAIN({"redact_text", test_redact_text}, {"error_lines_redacted", test_error_lines_redacted})
