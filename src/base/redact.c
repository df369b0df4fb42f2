/*
 * URL userinfo redaction (see redact.h): a single left-to-right pass over the text; the
 * authority of a URL runs from "://" to the first '/', '?', '#', blank, quote or angle
 * bracket, and everything before its last '@' is the userinfo.
 */
#include "base/redact.h"

#include <stdlib.h>
#include <string.h>

static bool authority_end(char c)
{
    return c == '\0' || c == '/' || c == '?' || c == '#' || c == ' ' || c == '\t' || c == '\n' ||
           c == '\r' || c == '"' || c == '\'' || c == '<' || c == '>' || c == ',';
}

/* Length of the userinfo (without the '@') of the authority starting at `a`, 0 if none. */
static size_t userinfo_len(const char *a, size_t *authority)
{
    size_t at = 0, i = 0;
    bool has = false;
    for (; !authority_end(a[i]); i++)
        if (a[i] == '@') {
            at = i;
            has = true;
        }
    *authority = i;
    return has ? at + 1 : 0; /* +1: the '@' is replaced with the marker too */
}

bool icd_url_has_userinfo(const char *url)
{
    const char *p = strstr(url, "://");
    size_t alen;
    return p && userinfo_len(p + 3, &alen) > 0;
}

int icd_redact_userinfo(char *s, size_t cap)
{
    if (!s || cap == 0 || !strstr(s, "://")) return 0;
    size_t n = strlen(s);
    char *out = malloc(n * 2 + 8); /* each redaction grows by at most 3 bytes per 4 read */
    if (!out) {
        /* no memory: cut the text at the first URL rather than print a secret */
        char *p = strstr(s, "://");
        p[3] = '\0';
        return 1;
    }
    size_t o = 0;
    bool any = false;
    for (size_t i = 0; i < n;) {
        if (s[i] == ':' && s[i + 1] == '/' && s[i + 2] == '/') {
            memcpy(out + o, "://", 3);
            o += 3;
            i += 3;
            size_t alen, ulen = userinfo_len(s + i, &alen);
            if (ulen) {
                memcpy(out + o, "***@", 4);
                o += 4;
                i += ulen;
                any = true;
            }
            continue;
        }
        out[o++] = s[i++];
    }
    if (o >= cap) o = cap - 1;
    memcpy(s, out, o);
    s[o] = '\0';
    free(out);
    return any ? 1 : 0;
}
