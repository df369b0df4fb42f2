/*
 * Optional libraries loaded on first use (dlopen), the way systemd loads its optional
 * libraries: libcurl (http.c), libmicrohttpd (serve), libssl/libcrypto (Hive TLS) and
 * libgssapi_krb5 (Hive Kerberos) are not linked, so a process that never touches them does
 * not pay for loading them and their dozens of dependencies at start-up.
 *
 * A user module keeps the library's own header for types and macros and calls through a
 * struct of pointers typed from the header's declarations:
 *
 *     static struct {
 *         __typeof__(curl_easy_init) *easy_init;
 *     } curl;
 *     static const icd_dynsym CURL_SYMS[] = {ICD_DYNSYM(curl, easy_init, curl_easy_init)};
 *     static icd_dynlib LIBCURL = ICD_DYNLIB("libcurl.so.4", "libcurl4", "http(s):// and
 *                                            s3:// locations", CURL_SYMS);
 *     ...
 *     ICD_TRY(icd_dynlib_load(&LIBCURL, err));
 *     CURL *h = curl.easy_init();
 *
 * A data symbol (an exported variable such as GSS-API's gss_mech_krb5) is resolved the same
 * way: its slot, __typeof__(gss_mech_krb5) *, points at the library's variable.
 * ICD_DYNSYM checks at compile time that the slot's type is the declaration's.
 *
 * (__typeof__ is accepted by gcc and clang also under -std=c17, unlike typeof.)
 */
#ifndef ICD_BASE_DYNLIB_H
#define ICD_BASE_DYNLIB_H

#include <stdatomic.h>
#include <stddef.h>

#include "base/error.h"

typedef struct icd_dynsym {
    const char *name; /* the exported name */
    void *slot;       /* where its address goes: a pointer to a function or data pointer */
} icd_dynsym;

typedef struct icd_dynlib {
    const char *soname;  /* "libcurl.so.4" */
    const char *package; /* the Debian package that holds it: "libcurl4" */
    const char *purpose; /* what needs it, for the error line: "http(s):// and s3:// locations" */
    const icd_dynsym *syms;
    size_t nsyms;
    /* state, set once per process (icd_dynlib_load) */
    atomic_int state; /* 0 not tried, 1 loaded, -1 failed */
    char error[700];  /* the failure's one line */
} icd_dynlib;

/* A symbol table entry: `api.field` receives the address of `sym`; the field must be
 * declared __typeof__(sym) * (a mismatch is a compile-time warning, an error with
 * -Werror). */
#define ICD_DYNSYM(api, field, sym)                                                                \
    {                                                                                              \
#sym, 1 ? &(api).field : (__typeof__(sym) **)NULL                                          \
    }

#define ICD_DYNLIB(soname, package, purpose, syms)                                                 \
    {                                                                                              \
        (soname), (package), (purpose), (syms), sizeof(syms) / sizeof((syms)[0]), 0, ""            \
    }

/* Opens the library and resolves all its symbols, once per process (thread-safe; later
 * calls only read the outcome). Returns 0, or ICD_EUNSUPPORTED with one line in err naming
 * the library, the symbol if one is missing, dlerror()'s text and the package to install;
 * then no slot is set and the library is never used (later calls fail the same way). */
int icd_dynlib_load(icd_dynlib *lib, icd_error *err);

/* Tests only: loads of `soname` open `instead` (e.g. a name that does not exist). Call
 * before any load; at most 8 redirections; not synchronized. */
void icd_dynlib_test_redirect(const char *soname, const char *instead);

#endif
