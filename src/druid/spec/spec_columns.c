/*
 * dr_spec_check_columns (spec_columns.h): the pre-flight check of the columns a Druid spec
 * reads against the Iceberg schema the plan reads with. Called by dr_plan_build, so `plan`,
 * `read`, `serve`, `rewrite-spec` and `sync` all refuse such a spec with one line before
 * reading.
 */
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "druid/spec/spec_columns.h"
#include "druid/rows/timestamp.h"

static bool named_in(const json_t *list, const char *name)
{
    size_t k;
    const json_t *t;
    json_array_foreach(list, k, t)
    {
        const char *out = json_string_value(json_object_get(t, "name"));
        if (out && !strcmp(out, name)) return true;
    }
    return false;
}

/* Is `name` a top-level column, or produced by a transform or a flattenSpec field? */
static bool known(const ice_schema *schema, const json_t *transforms, bool cs, const char *name)
{
    const ice_type *root = &schema->root;
    for (size_t i = 0; i < root->nfields; i++)
        if (cs ? !strcmp(root->fields[i].name, name) : !strcasecmp(root->fields[i].name, name))
            return true;
    /* `transforms` is a JSON object holding both lists (see dr_spec_check_columns) */
    return named_in(json_object_get(transforms, "transforms"), name) ||
           named_in(json_object_get(transforms, "flatten"), name);
}

static int unknown(const ice_schema *schema, const char *what, const char *name, icd_error *err)
{
    icd_buf b = ICD_BUF_INIT;
    const ice_type *root = &schema->root;
    for (size_t i = 0; i < root->nfields && i < 40; i++) {
        if (i) icd_buf_puts(&b, ", ");
        icd_buf_puts(&b, root->fields[i].name);
    }
    if (root->nfields > 40) icd_buf_puts(&b, ", ...");
    icd_buf_putc(&b, '\0');
    int rc =
        icd_fail(err, ICD_EINVALID, NULL, -1, "%s '%s' is not a column of the table (columns: %s)",
                 what, name, icd_buf_ok(&b) ? (const char *)b.data : "?");
    icd_buf_free(&b);
    return rc;
}

/* The "dimension" / "column" keys of a Druid filter, recursively (and/or/not fields). */
static int check_filter(const json_t *f, const ice_schema *schema, const json_t *transforms,
                        bool cs, icd_error *err)
{
    if (json_is_array(f)) {
        size_t i;
        const json_t *x;
        json_array_foreach(f, i, x) ICD_TRY(check_filter(x, schema, transforms, cs, err));
        return 0;
    }
    if (!json_is_object(f)) return 0;
    const char *d = json_string_value(json_object_get(f, "dimension"));
    if (!d) d = json_string_value(json_object_get(f, "column"));
    if (d && strcmp(d, "__time") && !known(schema, transforms, cs, d))
        return unknown(schema, "transformSpec filter column", d, err);
    ICD_TRY(check_filter(json_object_get(f, "field"), schema, transforms, cs, err));
    return check_filter(json_object_get(f, "fields"), schema, transforms, cs, err);
}

static int check_all(const dr_spec *spec, const ice_schema *schema, const json_t *transforms,
                     bool cs, icd_error *err);

int dr_spec_check_columns(const dr_spec *spec, const ice_schema *schema, icd_error *err)
{
    if (!schema) return 0;
    bool cs = dr_spec_case_sensitive(spec);
    /* names that are columns without being in the schema: transform outputs and the
     * inputFormat's flattenSpec fields */
    json_t *extra = json_object();
    if (!extra) return icd_fail_nomem(err);
    const json_t *tr = dr_spec_transforms(spec);
    const json_t *ff =
        json_object_get(json_object_get(dr_spec_input_format(spec), "flattenSpec"), "fields");
    if ((tr && json_object_set(extra, "transforms", (json_t *)tr)) ||
        (ff && json_object_set(extra, "flatten", (json_t *)ff))) {
        json_decref(extra);
        return icd_fail_nomem(err);
    }
    int rc = check_all(spec, schema, extra, cs, err);
    json_decref(extra);
    return rc;
}

static int check_all(const dr_spec *spec, const ice_schema *schema, const json_t *transforms,
                     bool cs, icd_error *err)
{
    const dr_timestamp_spec *ts = dr_spec_timestamp_spec(spec);
    /* a bare input source (no dataSchema) names no columns */
    if (ts && dr_spec_data_source(spec) && !ts->has_missing && ts->column &&
        strcmp(ts->column, "__time") && !known(schema, transforms, cs, ts->column))
        return unknown(schema, "the timestampSpec column", ts->column, err);
    const dr_dimensions_spec *dims = dr_spec_dimensions(spec);
    for (size_t i = 0; dims && i < dims->n_dims; i++)
        if (strcmp(dims->dims[i].name, "__time") &&
            !known(schema, transforms, cs, dims->dims[i].name))
            return unknown(schema, "dimension", dims->dims[i].name, err);
    const char *const *fields;
    size_t nf = dr_spec_metric_fields(spec, &fields);
    for (size_t i = 0; i < nf; i++)
        if (!known(schema, transforms, cs, fields[i]))
            return unknown(schema, "the metrics' input field", fields[i], err);
    return check_filter(dr_spec_transform_filter(spec), schema, transforms, cs, err);
}
