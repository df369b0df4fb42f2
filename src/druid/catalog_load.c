/*
 * Table loading through a Druid icebergCatalog (see catalog_load.h): picks the catalog
 * client for the catalog type, resolves the table and loads its metadata. Catalog clients
 * live only for the load: nothing after planning talks to the catalog again.
 */
#include "druid/catalog_load.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog/glue.h"
#include "catalog/hive.h"
#include "catalog/local.h"
#include "catalog/rest.h"

static bool has_scheme(const char *s)
{
    const char *c = strstr(s, "://");
    if (!c) return !strncmp(s, "file:", 5);
    for (const char *p = s; p < c; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '+' || *p == '-' || *p == '.'))
            return false;
    return c > s;
}

char *dr_absolute_path(const char *path)
{
    if (path[0] == '/' || has_scheme(path)) return strdup(path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return strdup(path);
    while (path[0] == '.' && path[1] == '/')
        path += 2;
    size_t n = strlen(cwd) + 1 + strlen(path) + 1;
    char *out = malloc(n);
    if (out) snprintf(out, n, "%s/%s", cwd, path);
    return out;
}

static int load_local(const dr_catalog *c, const char *ns, const char *table, icd_fileio *io,
                      ice_metadata **out, icd_error *err)
{
    char *wh = dr_absolute_path(c->warehouse_path);
    if (!wh) return icd_fail_nomem(err);
    char *loc = NULL;
    int rc = cat_local_table_location(wh, ns, table, &loc, err);
    free(wh);
    if (!rc) rc = cat_local_load(io, loc, out, err);
    free(loc);
    return rc;
}

static int load_rest(const dr_catalog *c, const char *ns, const char *table, icd_fileio *io,
                     ice_metadata **out, icd_error *err)
{
    cat_rest *r;
    ICD_TRY(cat_rest_open_json(io, c->catalog_uri, c->properties, &r, err));
    const char *levels[1] = {ns};
    int rc = cat_rest_load(r, levels, 1, table, out, err);
    cat_rest_free(r);
    return rc;
}

static int load_hive(const dr_catalog *c, const char *ns, const char *table, icd_fileio *io,
                     ice_metadata **out, icd_error *err)
{
    cat_hive *h;
    ICD_TRY(cat_hive_open(io, c->catalog_uri, c->properties, &h, err));
    int rc = cat_hive_load(h, ns, table, out, err);
    cat_hive_free(h);
    return rc;
}

static int load_glue(const dr_catalog *c, const char *ns, const char *table, icd_fileio *io,
                     ice_metadata **out, icd_error *err)
{
    cat_glue *g;
    ICD_TRY(cat_glue_open(io, c->properties, &g, err));
    int rc = cat_glue_load(g, ns, table, out, err);
    cat_glue_free(g);
    return rc;
}

int dr_catalog_load(const dr_catalog *c, const char *ns, const char *table, icd_fileio *io,
                    ice_metadata **out, icd_error *err)
{
    *out = NULL;
    int rc;
    switch (c->type) {
    case DR_CAT_LOCAL:
        rc = load_local(c, ns, table, io, out, err);
        break;
    case DR_CAT_REST:
        rc = load_rest(c, ns, table, io, out, err);
        break;
    case DR_CAT_HIVE:
        rc = load_hive(c, ns, table, io, out, err);
        break;
    case DR_CAT_GLUE:
        rc = load_glue(c, ns, table, io, out, err);
        break;
    default:
        return icd_fail(err, ICD_EINTERNAL, NULL, -1, "unknown icebergCatalog type %d",
                        (int)c->type);
    }
    if (rc && rc != ICD_ENOMEM)
        icd_error_wrap(err, "Failed to load iceberg table with identifier [%s.%s]", ns, table);
    return rc;
}
