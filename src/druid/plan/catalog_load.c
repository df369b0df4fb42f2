/*
 * Table loading through a Druid icebergCatalog (see catalog_load.h): picks the catalog
 * client for the catalog type, resolves the table and loads its metadata. Catalog clients
 * live only for the load: nothing after planning talks to the catalog again.
 */
#include "druid/plan/catalog_load.h"

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

/* ---- the --catalog file ------------------------------------------------------------- */

static bool is_catalog_type(const json_t *doc)
{
    static const char *const TYPES[] = {"local", "rest", "hive", "glue"};
    const char *t = json_string_value(json_object_get(doc, "type"));
    for (size_t i = 0; t && i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (!strcmp(t, TYPES[i])) return true;
    return false;
}

/* The catalog file as a Druid document: a bare icebergCatalog object is wrapped into an
 * iceberg input source naming TABLE (NAMESPACE.TABLE); anything else is taken as it is. */
static int catalog_document(const char *path, const char *table, json_t *file, json_t **doc,
                            icd_error *err)
{
    *doc = NULL;
    if (!is_catalog_type(file)) {
        if (table)
            return icd_fail(err, ICD_EINVALID, path, -1,
                            "the catalog file names its table (an input source or spec); leave "
                            "out TABLE '%s', or give a bare icebergCatalog object",
                            table);
        *doc = json_incref(file);
        return 0;
    }
    const char *dot = table ? strrchr(table, '.') : NULL;
    if (!dot || dot == table || !dot[1])
        return icd_fail(err, ICD_EINVALID, path, -1,
                        "with an icebergCatalog file, TABLE must be NAMESPACE.TABLE, got '%s'",
                        table ? table : "");
    json_t *is = json_pack("{s:s, s:s%, s:s, s:O, s:{s:s}}", "type", "iceberg", "namespace", table,
                           (size_t)(dot - table), "tableName", dot + 1, "icebergCatalog", file,
                           "warehouseSource", "type", "local");
    if (!is) return icd_fail_nomem(err);
    *doc = is;
    return 0;
}

int dr_catalog_file_parse(const char *text, size_t len, const char *path, const char *table,
                          dr_spec **out, icd_error *err)
{
    *out = NULL;
    json_error_t je;
    json_t *file = json_loadb(text, len, 0, &je);
    if (!file)
        return icd_fail(err, ICD_EINVALID, path, je.position,
                        "invalid JSON at line %d, column %d: %s", je.line, je.column, je.text);
    json_t *doc = NULL;
    int rc = json_is_object(file)
                 ? catalog_document(path, table, file, &doc, err)
                 : icd_fail(err, ICD_EINVALID, path, -1, "the catalog file is not a JSON object");
    json_decref(file);
    if (rc == 0) rc = dr_spec_parse_json(out, doc, path, NULL, err);
    json_decref(doc);
    return rc;
}
