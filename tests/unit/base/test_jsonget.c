/* Unit tests of base/jsonget.c (issue 16 item 4): the one set of JSON field readers, in
 * strict mode (Iceberg metadata, schemas, splits: types exact, ints range-checked) and
 * lenient mode (Druid specs: Jackson's coercions), with required/optional members,
 * defaults, and errors naming the JSON path in one wording. */
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/jsonget.h"
#include "test.h"

static icd_error err;
static icd_json_reader strict_r = {ICD_JSON_STRICT, 0, ICD_ECORRUPT, "meta.json", NULL, &err};
static icd_json_reader reals_r = {
    ICD_JSON_STRICT, ICD_JSON_INTEGRAL_REALS, ICD_ECORRUPT, "meta.json", NULL, &err};
static icd_json_reader lenient_r = {ICD_JSON_LENIENT, 0, ICD_EINVALID, NULL, NULL, &err};

static json_t *doc(const char *text)
{
    json_error_t jerr;
    json_t *j = json_loads(text, JSON_ALLOW_NUL, &jerr);
    if (!j) fprintf(stderr, "bad test JSON: %s\n", jerr.text);
    return j;
}

static void test_paths(void)
{
    char p[ICD_JSON_PATH_MAX];
    icd_json_path_key(p, NULL, "a");
    CHECK_EQ_STR(p, "a");
    icd_json_path_key(p, "", "a");
    CHECK_EQ_STR(p, "a");
    icd_json_path_key(p, "schema", "fields");
    CHECK_EQ_STR(p, "schema.fields");
    icd_json_path_index(p, "schema.fields", 3);
    CHECK_EQ_STR(p, "schema.fields[3]");
    icd_json_path_key(p, "schema.fields[3]", "id");
    CHECK_EQ_STR(p, "schema.fields[3].id");
    /* prefix and path both in the message; the reader's code and file */
    icd_json_reader r = strict_r;
    r.prefix = "split";
    CHECK_EQ_INT(icd_json_fail(&r, "deleteFiles[0].path", "bad"), ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "split: deleteFiles[0].path: bad");
    CHECK_EQ_STR(err.file, "meta.json");
    CHECK_EQ_INT(icd_json_fail(&r, NULL, "bad"), ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "split: bad");
    CHECK_EQ_INT(icd_json_fail(&lenient_r, "", "bad %d", 7), ICD_EINVALID);
    CHECK_EQ_STR(err.message, "bad 7");
}

static void test_required_optional(void)
{
    json_t *j = doc("{\"n\": null, \"i\": 5}");
    const json_t *obj = j;
    int64_t v;
    bool present = true;
    /* absent and null optional members keep the default */
    CHECK_EQ_INT(icd_json_get_i64(&strict_r, obj, "", "x", ICD_JSON_OPTIONAL, -1, &v, &present), 0);
    CHECK_EQ_INT(v, -1);
    CHECK(!present);
    CHECK_EQ_INT(icd_json_get_i64(&strict_r, obj, "", "n", ICD_JSON_OPTIONAL, 9, &v, &present), 0);
    CHECK_EQ_INT(v, 9);
    CHECK(!present);
    CHECK_EQ_INT(icd_json_get_i64(&strict_r, obj, "", "i", ICD_JSON_OPTIONAL, 9, &v, &present), 0);
    CHECK_EQ_INT(v, 5);
    CHECK(present);
    /* required ones are errors, naming the path */
    CHECK_EQ_INT(
        icd_json_get_i64(&strict_r, obj, "snapshots[2]", "x", ICD_JSON_REQUIRED, 0, &v, NULL),
        ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "snapshots[2].x: required field is missing");
    CHECK_EQ_INT(
        icd_json_get_i64(&strict_r, obj, "snapshots[2]", "n", ICD_JSON_REQUIRED, 0, &v, NULL),
        ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "snapshots[2].n: required field is null");
    const char *s = "x";
    CHECK_EQ_INT(icd_json_get_str(&lenient_r, obj, "spec", "s", ICD_JSON_REQUIRED, NULL, &s),
                 ICD_EINVALID);
    CHECK(s == NULL);
    CHECK_EQ_STR(err.message, "spec.s: required field is missing");
    const json_t *val;
    CHECK_EQ_INT(icd_json_get_value(&strict_r, obj, NULL, "i", ICD_JSON_REQUIRED, &val), 0);
    CHECK(json_is_integer(val));
    CHECK_EQ_INT(icd_json_get_value(&strict_r, obj, NULL, "n", ICD_JSON_OPTIONAL, &val), 0);
    CHECK(val == NULL);
    /* a non-object holds no members */
    json_t *arr = json_array();
    CHECK_EQ_INT(icd_json_get_value(&strict_r, arr, NULL, "i", ICD_JSON_OPTIONAL, &val), 0);
    CHECK(val == NULL);
    CHECK(icd_json_field(arr, "i") == NULL);
    CHECK(icd_json_field(obj, "n") == NULL);
    CHECK(icd_json_field(obj, "i") != NULL);
    json_decref(arr);
    json_decref(j);
}

static void test_strict(void)
{
    json_t *j = doc("{\"s\": \"abc\", \"i\": 12, \"r\": 3.0, \"f\": 1.5, \"b\": true, "
                    "\"big\": 4294967296, \"neg\": -2147483649, \"min\": -2147483648, "
                    "\"o\": {}, \"a\": [], \"t\": \"true\", \"z\": \"\", \"n5\": \"5\"}");
    icd_arena arena = {0};
    const char *s;
    int64_t i64;
    int32_t i32;
    bool b;
    const json_t *v;
    /* each type, exactly */
    CHECK_EQ_INT(icd_json_get_str(&strict_r, j, "", "s", ICD_JSON_REQUIRED, &arena, &s), 0);
    CHECK_EQ_STR(s, "abc");
    CHECK_EQ_INT(icd_json_get_i64(&strict_r, j, "", "i", ICD_JSON_REQUIRED, 0, &i64, NULL), 0);
    CHECK_EQ_INT(i64, 12);
    CHECK_EQ_INT(icd_json_get_i32(&strict_r, j, "", "min", ICD_JSON_REQUIRED, 0, &i32, NULL), 0);
    CHECK_EQ_INT(i32, INT32_MIN);
    CHECK_EQ_INT(icd_json_get_bool(&strict_r, j, "", "b", ICD_JSON_REQUIRED, false, &b), 0);
    CHECK(b);
    CHECK_EQ_INT(icd_json_get_object(&strict_r, j, "", "o", ICD_JSON_REQUIRED, &v), 0);
    CHECK(json_is_object(v));
    CHECK_EQ_INT(icd_json_get_array(&strict_r, j, "", "a", ICD_JSON_REQUIRED, &v), 0);
    CHECK(json_is_array(v));
    /* refusals: no coercion */
    CHECK_EQ_INT(icd_json_get_str(&strict_r, j, "t", "i", ICD_JSON_OPTIONAL, &arena, &s),
                 ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "t.i: expected a string, found a number");
    CHECK_EQ_INT(icd_json_get_bool(&strict_r, j, "t", "t", ICD_JSON_OPTIONAL, false, &b),
                 ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "t.t: expected a boolean, found a string");
    CHECK_EQ_INT(icd_json_get_bool(&strict_r, j, "t", "i", ICD_JSON_OPTIONAL, false, &b),
                 ICD_ECORRUPT);
    CHECK_EQ_INT(icd_json_get_i64(&strict_r, j, "t", "n5", ICD_JSON_OPTIONAL, 0, &i64, NULL),
                 ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "t.n5: expected an integer, found a string");
    CHECK_EQ_INT(icd_json_get_i64(&strict_r, j, "t", "z", ICD_JSON_OPTIONAL, 0, &i64, NULL),
                 ICD_ECORRUPT);
    CHECK_EQ_INT(icd_json_get_i64(&strict_r, j, "t", "r", ICD_JSON_OPTIONAL, 0, &i64, NULL),
                 ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "t.r: expected an integer, found 3");
    CHECK_EQ_INT(icd_json_get_i64(&strict_r, j, "t", "f", ICD_JSON_OPTIONAL, 0, &i64, NULL),
                 ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "t.f: expected an integer, found 1.5");
    CHECK_EQ_INT(icd_json_get_object(&strict_r, j, "t", "a", ICD_JSON_OPTIONAL, &v), ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "t.a: expected an object, found an array");
    CHECK_EQ_INT(icd_json_get_array(&strict_r, j, "t", "o", ICD_JSON_OPTIONAL, &v), ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "t.o: expected an array, found an object");
    /* int ranges */
    CHECK_EQ_INT(icd_json_get_i32(&strict_r, j, "t", "big", ICD_JSON_OPTIONAL, 0, &i32, NULL),
                 ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "t.big: expected a 32-bit integer, found 4294967296");
    CHECK_EQ_INT(icd_json_get_i32(&strict_r, j, "t", "neg", ICD_JSON_OPTIONAL, 0, &i32, NULL),
                 ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "t.neg: expected a 32-bit integer, found -2147483649");
    CHECK_EQ_INT(icd_json_get_i64(&strict_r, j, "t", "big", ICD_JSON_OPTIONAL, 0, &i64, NULL), 0);
    CHECK_EQ_INT(i64, 4294967296LL);
    /* values of arrays */
    CHECK_EQ_INT(icd_json_as_i32(&strict_r, json_object_get(j, "i"), "ids[0]", &i32), 0);
    CHECK_EQ_INT(i32, 12);
    CHECK_EQ_INT(icd_json_as_i32(&strict_r, json_object_get(j, "s"), "ids[1]", &i32), ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "ids[1]: expected a 32-bit integer, found a string");
    CHECK_EQ_INT(icd_json_as_str(&strict_r, json_object_get(j, "b"), "names[0]", &arena, &s),
                 ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "names[0]: expected a string, found a boolean");
    icd_arena_free(&arena);
    json_decref(j);
}

static void test_integral_reals(void)
{
    json_t *j = doc("{\"r\": 3.0, \"f\": 1.5, \"huge\": 1e19, \"big\": 4294967296.0}");
    int64_t i64;
    int32_t i32;
    CHECK_EQ_INT(icd_json_get_i64(&reals_r, j, "", "r", ICD_JSON_REQUIRED, 0, &i64, NULL), 0);
    CHECK_EQ_INT(i64, 3);
    CHECK_EQ_INT(icd_json_get_i32(&reals_r, j, "", "r", ICD_JSON_REQUIRED, 0, &i32, NULL), 0);
    CHECK_EQ_INT(i32, 3);
    CHECK_EQ_INT(icd_json_get_i64(&reals_r, j, "", "f", ICD_JSON_REQUIRED, 0, &i64, NULL),
                 ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "f: expected an integer, found 1.5");
    CHECK_EQ_INT(icd_json_get_i64(&reals_r, j, "", "huge", ICD_JSON_REQUIRED, 0, &i64, NULL),
                 ICD_ECORRUPT);
    CHECK_EQ_INT(icd_json_get_i32(&reals_r, j, "", "big", ICD_JSON_REQUIRED, 0, &i32, NULL),
                 ICD_ECORRUPT);
    CHECK_EQ_STR(err.message, "big: expected a 32-bit integer, found 4294967296");
    json_decref(j);
}

static void test_lenient(void)
{
    json_t *j = doc("{\"s\": \"abc\", \"i\": 12, \"d\": 1.5, \"e\": 1e10, \"t\": true, "
                    "\"T\": \"TRUE\", \"F\": \"False\", \"z\": \"\", \"yes\": \"yes\", "
                    "\"n5\": \"-5\", \"many\": \"many\", \"zero\": 0, \"o\": {}, \"a\": [1], "
                    "\"nul\": \"a\\u0000b\", \"huge\": 1e30, \"lmax\": \"9223372036854775808\"}");
    const char *s;
    int64_t i64;
    bool b, present;
    /* scalars coerce to text (malloc'd without an arena), as Java prints them */
    CHECK_EQ_INT(icd_json_get_str(&lenient_r, j, "spec", "s", ICD_JSON_OPTIONAL, NULL, &s), 0);
    CHECK_EQ_STR(s, "abc");
    free((void *)s);
    CHECK_EQ_INT(icd_json_get_str(&lenient_r, j, "spec", "i", ICD_JSON_OPTIONAL, NULL, &s), 0);
    CHECK_EQ_STR(s, "12");
    free((void *)s);
    CHECK_EQ_INT(icd_json_get_str(&lenient_r, j, "spec", "d", ICD_JSON_OPTIONAL, NULL, &s), 0);
    CHECK_EQ_STR(s, "1.5");
    free((void *)s);
    CHECK_EQ_INT(icd_json_get_str(&lenient_r, j, "spec", "e", ICD_JSON_OPTIONAL, NULL, &s), 0);
    CHECK_EQ_STR(s, "1.0E10");
    free((void *)s);
    CHECK_EQ_INT(icd_json_get_str(&lenient_r, j, "spec", "t", ICD_JSON_OPTIONAL, NULL, &s), 0);
    CHECK_EQ_STR(s, "true");
    free((void *)s);
    CHECK_EQ_INT(icd_json_get_str(&lenient_r, j, "spec", "o", ICD_JSON_OPTIONAL, NULL, &s),
                 ICD_EINVALID);
    CHECK_EQ_STR(err.message, "spec.o: expected a string, found an object");
    CHECK_EQ_INT(icd_json_get_str(&lenient_r, j, "spec", "nul", ICD_JSON_OPTIONAL, NULL, &s),
                 ICD_EINVALID);
    CHECK_EQ_STR(err.message, "spec.nul: strings with NUL characters are not supported");
    /* booleans: "true"/"false" in any case, integers; "" is the default */
    CHECK_EQ_INT(icd_json_get_bool(&lenient_r, j, "spec", "T", ICD_JSON_OPTIONAL, false, &b), 0);
    CHECK(b);
    CHECK_EQ_INT(icd_json_get_bool(&lenient_r, j, "spec", "F", ICD_JSON_OPTIONAL, true, &b), 0);
    CHECK(!b);
    CHECK_EQ_INT(icd_json_get_bool(&lenient_r, j, "spec", "i", ICD_JSON_OPTIONAL, false, &b), 0);
    CHECK(b);
    CHECK_EQ_INT(icd_json_get_bool(&lenient_r, j, "spec", "zero", ICD_JSON_OPTIONAL, true, &b), 0);
    CHECK(!b);
    CHECK_EQ_INT(icd_json_get_bool(&lenient_r, j, "spec", "z", ICD_JSON_OPTIONAL, true, &b), 0);
    CHECK(b);
    CHECK_EQ_INT(icd_json_get_bool(&lenient_r, j, "spec", "z", ICD_JSON_REQUIRED, true, &b),
                 ICD_EINVALID);
    CHECK_EQ_STR(err.message, "spec.z: required field is empty");
    CHECK_EQ_INT(icd_json_get_i64(&lenient_r, j, "spec", "z", ICD_JSON_REQUIRED, 0, &i64, NULL),
                 ICD_EINVALID);
    CHECK_EQ_STR(err.message, "spec.z: required field is empty");
    CHECK_EQ_INT(icd_json_get_bool(&lenient_r, j, "spec", "yes", ICD_JSON_OPTIONAL, false, &b),
                 ICD_EINVALID);
    CHECK_EQ_STR(err.message, "spec.yes: expected a boolean, found a string");
    CHECK_EQ_INT(icd_json_get_bool(&lenient_r, j, "spec", "d", ICD_JSON_OPTIONAL, false, &b),
                 ICD_EINVALID);
    CHECK_EQ_STR(err.message, "spec.d: expected a boolean, found a number");
    /* integers: numeric strings (Long.parseLong), reals truncated; "" is the default */
    CHECK_EQ_INT(
        icd_json_get_i64(&lenient_r, j, "spec", "n5", ICD_JSON_OPTIONAL, 0, &i64, &present), 0);
    CHECK_EQ_INT(i64, -5);
    CHECK(present);
    CHECK_EQ_INT(icd_json_get_i64(&lenient_r, j, "spec", "d", ICD_JSON_OPTIONAL, 0, &i64, &present),
                 0);
    CHECK_EQ_INT(i64, 1);
    CHECK_EQ_INT(
        icd_json_get_i64(&lenient_r, j, "spec", "huge", ICD_JSON_OPTIONAL, 0, &i64, &present), 0);
    CHECK_EQ_INT(i64, INT64_MAX);
    CHECK_EQ_INT(
        icd_json_get_i64(&lenient_r, j, "spec", "z", ICD_JSON_OPTIONAL, 77, &i64, &present), 0);
    CHECK_EQ_INT(i64, 77);
    CHECK(!present);
    CHECK_EQ_INT(
        icd_json_get_i64(&lenient_r, j, "spec", "many", ICD_JSON_OPTIONAL, 0, &i64, &present),
        ICD_EINVALID);
    CHECK_EQ_STR(err.message, "spec.many: expected an integer, found \"many\"");
    CHECK_EQ_INT(
        icd_json_get_i64(&lenient_r, j, "spec", "lmax", ICD_JSON_OPTIONAL, 0, &i64, &present),
        ICD_EINVALID);
    CHECK_EQ_INT(icd_json_get_i64(&lenient_r, j, "spec", "t", ICD_JSON_OPTIONAL, 0, &i64, &present),
                 ICD_EINVALID);
    CHECK_EQ_STR(err.message, "spec.t: expected an integer, found a boolean");
    /* ranges still hold for 32-bit members */
    int32_t i32;
    CHECK_EQ_INT(icd_json_get_i32(&lenient_r, j, "spec", "huge", ICD_JSON_OPTIONAL, 0, &i32, NULL),
                 ICD_EINVALID);
    CHECK_EQ_STR(err.message, "spec.huge: expected a 32-bit integer, found 9223372036854775807");
    /* objects and arrays are never coerced */
    const json_t *v;
    CHECK_EQ_INT(icd_json_get_object(&lenient_r, j, "spec", "s", ICD_JSON_OPTIONAL, &v),
                 ICD_EINVALID);
    CHECK_EQ_STR(err.message, "spec.s: expected an object, found a string");
    CHECK_EQ_INT(icd_json_get_array(&lenient_r, j, "spec", "a", ICD_JSON_OPTIONAL, &v), 0);
    CHECK_EQ_INT(json_array_size(v), 1);
    /* values of arrays */
    CHECK_EQ_INT(icd_json_as_str(&lenient_r, json_array_get(v, 0), "spec.a[0]", NULL, &s), 0);
    CHECK_EQ_STR(s, "1");
    free((void *)s);
    CHECK_EQ_INT(icd_json_as_i64(&lenient_r, json_object_get(j, "n5"), "x[0]", &i64), 0);
    CHECK_EQ_INT(i64, -5);
    json_decref(j);
}

TEST_MAIN(TEST(test_paths), TEST(test_required_optional), TEST(test_strict),
          TEST(test_integral_reals), TEST(test_lenient))
