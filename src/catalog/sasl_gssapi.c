/*
 * SASL GSSAPI client (see sasl_gssapi.h): gss_acquire_cred_from (keytab -> private memory
 * cache) or the default credentials, gss_init_sec_context rounds until the context is
 * established, then RFC 4752's security-layer message: unwrap the server's 4 bytes (offered
 * layers + max size), answer wrap(0x01 "no layer", 0, 0, 0) with an empty authorization id.
 *
 * libgssapi_krb5 is loaded on first use (base/dynlib.h): the functions and the two OIDs
 * (exported variables) are resolved by name.
 */
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dynlib.h"
#include "catalog/sasl_gssapi.h"

/* libgssapi_krb5, loaded on first use: every GSS-API call goes through these pointers. */
static struct {
    __typeof__(gss_display_status) *display_status;
    __typeof__(gss_release_buffer) *release_buffer;
    __typeof__(gss_import_name) *import_name;
    __typeof__(gss_acquire_cred_from) *acquire_cred_from;
    __typeof__(gss_release_name) *release_name;
    __typeof__(gss_delete_sec_context) *delete_sec_context;
    __typeof__(gss_release_cred) *release_cred;
    __typeof__(gss_init_sec_context) *init_sec_context;
    __typeof__(gss_unwrap) *unwrap;
    __typeof__(gss_wrap) *wrap;
    __typeof__(gss_mech_krb5) *mech_krb5;                      /* data */
    __typeof__(GSS_KRB5_NT_PRINCIPAL_NAME) *nt_principal_name; /* data */
} gss;

static const icd_dynsym GSS_SYMS[] = {
    ICD_DYNSYM(gss, display_status, gss_display_status),
    ICD_DYNSYM(gss, release_buffer, gss_release_buffer),
    ICD_DYNSYM(gss, import_name, gss_import_name),
    ICD_DYNSYM(gss, acquire_cred_from, gss_acquire_cred_from),
    ICD_DYNSYM(gss, release_name, gss_release_name),
    ICD_DYNSYM(gss, delete_sec_context, gss_delete_sec_context),
    ICD_DYNSYM(gss, release_cred, gss_release_cred),
    ICD_DYNSYM(gss, init_sec_context, gss_init_sec_context),
    ICD_DYNSYM(gss, unwrap, gss_unwrap),
    ICD_DYNSYM(gss, wrap, gss_wrap),
    ICD_DYNSYM(gss, mech_krb5, gss_mech_krb5),
    ICD_DYNSYM(gss, nt_principal_name, GSS_KRB5_NT_PRINCIPAL_NAME),
};

static icd_dynlib LIBGSS = ICD_DYNLIB("libgssapi_krb5.so.2", "libgssapi-krb5-2",
                                      "Kerberos (SASL GSSAPI) to the Hive Metastore", GSS_SYMS);

typedef enum { ST_CONTEXT, ST_LAYER, ST_DONE } gss_state;

struct cat_gss {
    gss_cred_id_t cred;
    gss_name_t target;
    gss_ctx_id_t ctx;
    gss_state state;
    char where[512];
};

/* "what: major message: minor message" into err. */
static int gss_fail(const cat_gss *g, const char *what, OM_uint32 major, OM_uint32 minor,
                    icd_error *err)
{
    char text[800] = "";
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        OM_uint32 code = pass ? minor : major, ctxv = 0, min2;
        int type = pass ? GSS_C_MECH_CODE : GSS_C_GSS_CODE;
        if (pass && !minor) break;
        do {
            gss_buffer_desc msg = GSS_C_EMPTY_BUFFER;
            if (GSS_ERROR(gss.display_status(&min2, code, type,
                                             pass ? *gss.mech_krb5 : GSS_C_NO_OID, &ctxv, &msg)))
                break;
            int k = snprintf(text + n, sizeof text - n, "%s%.*s", n ? ": " : "", (int)msg.length,
                             (const char *)msg.value);
            if (k > 0) n += (size_t)k < sizeof text - n ? (size_t)k : sizeof text - n - 1;
            gss.release_buffer(&min2, &msg);
        } while (ctxv && n < sizeof text - 1);
    }
    return icd_fail(err, ICD_EIO, g->where, -1, "Hive Metastore: Kerberos: %s: %s", what,
                    text[0] ? text : "unknown GSS-API error");
}

int cat_gss_new(const char *service, const char *principal, const char *keytab, const char *where,
                cat_gss **out, icd_error *err)
{
    *out = NULL;
    int rc = icd_dynlib_load(&LIBGSS, err);
    if (rc) {
        icd_error_set_file(err, where);
        return rc;
    }
    cat_gss *g = calloc(1, sizeof *g);
    if (!g) return icd_fail_nomem(err);
    g->cred = GSS_C_NO_CREDENTIAL;
    g->target = GSS_C_NO_NAME;
    g->ctx = GSS_C_NO_CONTEXT;
    snprintf(g->where, sizeof g->where, "%s", where ? where : "");
    OM_uint32 major, minor;
    gss_buffer_desc nb = {strlen(service), (void *)service};
    major = gss.import_name(&minor, &nb, *gss.nt_principal_name, &g->target);
    if (GSS_ERROR(major)) rc = gss_fail(g, "bad service principal", major, minor, err);
    if (rc == 0 && keytab) {
        gss_name_t me = GSS_C_NO_NAME;
        if (principal) {
            gss_buffer_desc pb = {strlen(principal), (void *)principal};
            major = gss.import_name(&minor, &pb, *gss.nt_principal_name, &me);
            if (GSS_ERROR(major)) rc = gss_fail(g, "bad principal", major, minor, err);
        }
        if (rc == 0) {
            char ccache[64];
            snprintf(ccache, sizeof ccache, "MEMORY:icedruid-%p", (void *)g);
            gss_key_value_element_desc el[2] = {{"client_keytab", keytab}, {"ccache", ccache}};
            gss_key_value_set_desc store = {2, el};
            major = gss.acquire_cred_from(&minor, me, GSS_C_INDEFINITE, GSS_C_NO_OID_SET,
                                          GSS_C_INITIATE, &store, &g->cred, NULL, NULL);
            if (GSS_ERROR(major)) rc = gss_fail(g, "cannot use the keytab", major, minor, err);
        }
        if (me != GSS_C_NO_NAME) gss.release_name(&minor, &me);
    }
    if (rc) {
        cat_gss_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

void cat_gss_free(cat_gss *g)
{
    if (!g) return;
    OM_uint32 minor;
    if (g->ctx != GSS_C_NO_CONTEXT) gss.delete_sec_context(&minor, &g->ctx, GSS_C_NO_BUFFER);
    if (g->cred != GSS_C_NO_CREDENTIAL) gss.release_cred(&minor, &g->cred);
    if (g->target != GSS_C_NO_NAME) gss.release_name(&minor, &g->target);
    free(g);
}

int cat_gss_step(cat_gss *g, const void *in, size_t len, icd_buf *out, bool *done, icd_error *err)
{
    *done = false;
    OM_uint32 major, minor;
    if (g->state == ST_CONTEXT) {
        gss_buffer_desc input = {len, (void *)in};
        gss_buffer_desc output = GSS_C_EMPTY_BUFFER;
        major = gss.init_sec_context(&minor, g->cred, &g->ctx, g->target, GSS_C_NO_OID,
                                     GSS_C_MUTUAL_FLAG, 0, GSS_C_NO_CHANNEL_BINDINGS,
                                     g->ctx == GSS_C_NO_CONTEXT ? GSS_C_NO_BUFFER : &input, NULL,
                                     &output, NULL, NULL);
        if (GSS_ERROR(major)) {
            OM_uint32 m2;
            gss.release_buffer(&m2, &output);
            return gss_fail(g, "cannot authenticate to the metastore", major, minor, err);
        }
        icd_buf_append(out, output.value, output.length);
        gss.release_buffer(&minor, &output);
        if (major == GSS_S_COMPLETE) g->state = ST_LAYER;
        return icd_buf_ok(out) ? 0 : icd_fail_nomem(err);
    }
    if (g->state == ST_LAYER) {
        gss_buffer_desc wrapped = {len, (void *)in}, plain = GSS_C_EMPTY_BUFFER;
        major = gss.unwrap(&minor, g->ctx, &wrapped, &plain, NULL, NULL);
        if (GSS_ERROR(major)) return gss_fail(g, "bad security-layer message", major, minor, err);
        bool none_offered = plain.length == 4 && (((const unsigned char *)plain.value)[0] & 1);
        gss.release_buffer(&minor, &plain);
        if (!none_offered)
            return icd_fail(err, ICD_EUNSUPPORTED, g->where, -1,
                            "Hive Metastore: the server requires SASL integrity or privacy "
                            "protection (hadoop.rpc.protection integrity/privacy), which "
                            "icedruid does not implement; use authentication (with TLS)");
        unsigned char reply[4] = {1, 0, 0, 0}; /* no security layer, no max size */
        gss_buffer_desc rb = {4, reply}, wr = GSS_C_EMPTY_BUFFER;
        major = gss.wrap(&minor, g->ctx, 0, GSS_C_QOP_DEFAULT, &rb, NULL, &wr);
        if (GSS_ERROR(major)) return gss_fail(g, "cannot wrap the answer", major, minor, err);
        icd_buf_append(out, wr.value, wr.length);
        gss.release_buffer(&minor, &wr);
        g->state = ST_DONE;
        *done = true;
        return icd_buf_ok(out) ? 0 : icd_fail_nomem(err);
    }
    *done = true;
    return 0;
}
