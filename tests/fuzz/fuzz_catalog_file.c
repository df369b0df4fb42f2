/*
 * libFuzzer target: the `--catalog` file and catalogProperties (druid/plan/catalog_load.c,
 * druid/spec/spec.c, catalog/props.c and the catalog clients' opening): the file is parsed as
 * `scan`/`tasks` parse it (a bare icebergCatalog object wrapped with TABLE, or an input
 * source or spec), then the catalog it names is opened as far as that goes without the
 * network: the local table location, the REST client from its properties (uri, prefix,
 * header.*, token, credential, SigV4 and storage settings), the Hive client (metastore
 * URIs, timeouts and retries, SASL/Kerberos and TLS settings) and the Glue client
 * (endpoint, catalog id), each handing its storage settings to a FileIO; every property
 * also goes through cat_prop and the duration parser. The first byte picks TABLE (none,
 * "ns.t", "db.sch.tbl", "bad"). A Hive truststore path outside /etc/ is replaced by a
 * missing file (it must not name a device or FIFO that blocks the open). Any crash, leak
 * or sanitizer report is a bug, and so is an error that is not one line; errors are
 * expected.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/glue.h"
#include "catalog/hive.h"
#include "catalog/local.h"
#include "catalog/props.h"
#include "catalog/rest.h"
#include "druid/plan/catalog_load.h"
#include "io/fileio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int open_catalog(const dr_spec *spec, icd_fileio *io, icd_error *err)
{
    const dr_catalog *c = dr_spec_catalog(spec);
    const char *k;
    json_t *v;
    json_object_foreach(c->properties, k, v)
    {
        char tmp[64];
        const char *s = cat_prop(c->properties, k, tmp, sizeof tmp);
        long ms = -1;
        if (s && cat_parse_duration_ms(s, 1000, &ms) && ms < 0) abort();
        (void)cat_prop_true(c->properties, k);
    }
    int rc = 0;
    switch (c->type) {
    case DR_CAT_LOCAL: {
        char *wh = dr_absolute_path(c->warehouse_path);
        char *loc = NULL;
        if (!wh) return 0;
        rc = cat_local_table_location(wh, dr_spec_namespace(spec), dr_spec_table_name(spec), &loc,
                                      err);
        if (rc == 0 && (!loc || !loc[0])) abort();
        free(loc);
        free(wh);
        break;
    }
    case DR_CAT_REST: {
        cat_rest *r;
        rc = cat_rest_new_json(io, c->catalog_uri, c->properties, &r, err);
        if (rc == 0) {
            const char *uri = cat_rest_property(r, "uri");
            if (!uri || strncmp(uri, "http", 4)) abort();
            cat_rest_free(r);
        }
        break;
    }
    case DR_CAT_HIVE: {
        cat_hive *h;
        const char *ts =
            json_string_value(json_object_get(c->properties, "hive.metastore.truststore.path"));
        if (ts && (strncmp(ts, "/etc/", 5) || strstr(ts, "..")))
            json_object_set_new(c->properties, "hive.metastore.truststore.path",
                                json_string("/nonexistent/truststore.pem"));
        rc = cat_hive_open(io, c->catalog_uri, c->properties, &h, err);
        if (rc == 0) cat_hive_free(h);
        break;
    }
    case DR_CAT_GLUE: {
        cat_glue *g;
        rc = cat_glue_open(io, c->properties, &g, err);
        if (rc == 0) {
            if (!cat_glue_endpoint(g) || !cat_glue_endpoint(g)[0]) abort();
            cat_glue_free(g);
        }
        break;
    }
    default:
        abort();
    }
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const TABLE[] = {NULL, "ns.t", "db.sch.tbl", "bad"};
    if (size < 1) return 0;
    icd_error err;
    dr_spec *spec = NULL;
    int rc = dr_catalog_file_parse((const char *)data + 1, size - 1, "catalog.json",
                                   TABLE[data[0] & 3], &spec, &err);
    if (rc == 0) {
        icd_fileio *io;
        if (icd_fileio_new(&io, &err) == 0) {
            rc = open_catalog(spec, io, &err);
            icd_fileio_free(io);
        }
    }
    if (rc && strchr(err.message, '\n')) abort();
    dr_spec_free(spec);
    return 0;
}
