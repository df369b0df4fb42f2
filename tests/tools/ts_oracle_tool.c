/*
 * Test tool: icedruid's side of the Druid timestamp oracle (tests/druid/oracle/). Reads the
 * cases of tests/druid/test_timestamp_oracle.py on stdin, "ID \t HEX(FORMAT) \t KIND \t
 * HEX(VALUE)" (KIND: null | long | double | string | mvint | mvstr), parses each with
 * src/druid/timestamp.c exactly as the row converter does (dr_timestamp_extract), and
 * prints "ID \t OK \t MILLIS" or "ID \t ERR", the same lines DruidTimestampOracle.java
 * prints from Joda-Time, or "ID \t UNSUPPORTED" when icedruid refuses the format itself
 * (ICD_EUNSUPPORTED at spec load: a clear error, never a different __time).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "druid/rows/timestamp.h"
#include "druid/rows/tzrules.h"

static size_t unhex(const char *h, char *out)
{
    size_t n = 0;
    for (; h[0] && h[1]; h += 2) {
        unsigned v;
        sscanf(h, "%2x", &v);
        out[n++] = (char)v;
    }
    out[n] = '\0';
    return n;
}

static int run(const char *fmt, const char *kind, const char *val, size_t vn, int64_t *ms)
{
    icd_error err;
    dr_timestamp_spec ts;
    bool mvstr = strcmp(kind, "mvstr") == 0;
    /* the real clock for two-digit years, as the oracle's Joda */
    int rc0 = dr_timestamp_spec_init(&ts, "t", fmt, mvstr ? val : NULL, dr_now_ms(), &err);
    if (rc0 == ICD_EUNSUPPORTED) return 1; /* the spec is refused at load, with a message */
    if (rc0 < 0) return -1;
    dr_ts_value v = {DR_TSV_NULL, 0, 0, NULL, 0};
    if (strcmp(kind, "long") == 0) {
        v.kind = DR_TSV_LONG;
        v.l = strtoll(val, NULL, 10);
    } else if (strcmp(kind, "double") == 0) {
        v.kind = DR_TSV_DOUBLE;
        v.d = strtod(val, NULL);
    } else if (strcmp(kind, "string") == 0) {
        v.kind = DR_TSV_STRING;
        v.s = val;
        v.n = vn;
    } else if (strcmp(kind, "mvint") == 0) {
        ts.has_missing = true;
        ts.missing_ms = strtoll(val, NULL, 10);
    }
    int rc = dr_timestamp_extract(&ts, &v, ms, &err);
    if (rc == ICD_EUNSUPPORTED) rc = 1; /* refused with a message (the read stops) */
    dr_timestamp_spec_clear(&ts);
    return rc;
}

int main(void)
{
    dr_tz_set_dir(getenv("TZDIR"));
    static char line[1 << 16], fmt[1 << 15], val[1 << 15];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        char *id = strtok(line, "\t"), *hf = strtok(NULL, "\t"), *kind = strtok(NULL, "\t");
        char *hv = strtok(NULL, "\t");
        if (!id || !hf || !kind) return 2;
        unhex(hf, fmt);
        size_t vn = unhex(hv ? hv : "", val);
        int64_t ms;
        int rc = run(fmt, kind, val, vn, &ms);
        if (rc == 0)
            printf("%s\tOK\t%" PRId64 "\n", id, ms);
        else if (rc == 1)
            printf("%s\tUNSUPPORTED\n", id);
        else
            printf("%s\tERR\n", id);
    }
    return 0;
}
