/*
 * Record assembly from definition/repetition levels (json.c) and the schema tree's
 * LIST/MAP rules (schema.c). Schemas are built from hand-written SchemaElement lists, the
 * batches from levels worked out by hand with the Dremel encoding rules (a definition
 * level counts the optional/repeated ancestors that are present, a repetition level names
 * the repeated ancestor that repeats), and the expected rows follow the `cat` conventions.
 */
#include <stdlib.h>

#include "formats/parquet/json.h"
#include "formats/parquet/parquet.h"
#include "test.h"

#define OPT PQ_OPTIONAL
#define REQ PQ_REQUIRED
#define REP PQ_REPEATED

static pq_schema_element E(const char *name, int rep, int type, int nchildren, int conv)
{
    pq_schema_element e;
    memset(&e, 0, sizeof e);
    e.name.ptr = name;
    e.name.len = (uint32_t)strlen(name);
    e.has_repetition = rep >= 0;
    e.repetition = rep;
    e.converted = conv;
    if (type >= 0) {
        e.has_type = true;
        e.type = type;
    }
    if (nchildren > 0) {
        e.has_num_children = true;
        e.num_children = nchildren;
    }
    return e;
}
#define ROOT(n) E("schema", -1, -1, n, PQ_CONV_NONE)
#define GROUP(name, rep, n, conv) E(name, rep, -1, n, conv)
#define I32(name, rep) E(name, rep, PQ_INT32, 0, PQ_CONV_NONE)
#define STR(name, rep) E(name, rep, PQ_BYTE_ARRAY, 0, PQ_CONV_UTF8)

typedef struct colspec {
    size_t n;
    const uint32_t *def, *rep;
    size_t nv;
    const void *values;
} colspec;

/* Builds the schema, wraps the columns in a batch of `rows` rows and returns the rows as
 * NDJSON (malloc'd), or NULL with *rc set on error. `leaves` selects columns (NULL = all). */
static char *assemble(pq_schema_element *el, uint32_t nel, const colspec *cols, size_t ncols,
                      size_t rows, const int *leaves, int *rc)
{
    pq_file_meta m;
    memset(&m, 0, sizeof m);
    m.schema = el;
    m.num_schema = nel;
    icd_arena a = ICD_ARENA_INIT;
    pq_schema s;
    icd_error err;
    icd_error_clear(&err);
    *rc = pq_schema_build(&m, &a, &s, "test", &err);
    if (*rc) {
        icd_arena_free(&a);
        return NULL;
    }
    pq_column_batch cb[8];
    memset(cb, 0, sizeof cb);
    for (size_t i = 0; i < ncols; i++) {
        const pq_node *leaf = s.leaves[leaves ? leaves[i] : (int)i];
        cb[i].leaf = leaf;
        cb[i].physical_type = leaf->physical_type;
        cb[i].num_levels = cols[i].n;
        cb[i].def = leaf->def_level ? cols[i].def : NULL;
        cb[i].rep = leaf->rep_level ? cols[i].rep : NULL;
        cb[i].num_values = cols[i].nv;
        cb[i].values = cols[i].values;
    }
    pq_batch b = {0, rows, 0, ncols, cb};
    pq_json_writer *w;
    icd_buf out = ICD_BUF_INIT;
    *rc = pq_json_writer_new(&s, leaves, leaves ? ncols : 0, &w, &err);
    if (!*rc) {
        pq_json_begin(w, &b);
        for (size_t r = 0; r < rows && !*rc; r++) {
            *rc = pq_json_row(w, &out, &err);
            icd_buf_putc(&out, '\n');
        }
        if (!*rc) *rc = pq_json_end(w, &err);
        pq_json_writer_free(w);
    }
    icd_arena_free(&a);
    if (*rc) {
        icd_buf_free(&out);
        return NULL;
    }
    return icd_buf_detach(&out);
}

static pq_bytes S(const char *s)
{
    return (pq_bytes){(const uint8_t *)s, (uint32_t)strlen(s)};
}

#define EXPECT_ROWS(el, cols, rows, want)                                                          \
    do {                                                                                           \
        int rc_;                                                                                   \
        char *got_ = assemble(el, sizeof el / sizeof el[0], cols, sizeof cols / sizeof cols[0],    \
                              rows, NULL, &rc_);                                                   \
        CHECK_EQ_INT(rc_, 0);                                                                      \
        CHECK_EQ_STR(got_, want);                                                                  \
        free(got_);                                                                                \
    } while (0)

/* optional group a (LIST) { repeated group list { optional int32 element } } */
static void test_three_level_list(void)
{
    pq_schema_element el[] = {ROOT(1), GROUP("a", OPT, 1, PQ_CONV_LIST),
                              GROUP("list", REP, 1, PQ_CONV_NONE), I32("element", OPT)};
    /* null, [], [null], [1, null, 2] */
    static const uint32_t def[] = {0, 1, 2, 3, 2, 3}, rep[] = {0, 0, 0, 0, 1, 1};
    static const int32_t v[] = {1, 2};
    colspec cols[] = {{6, def, rep, 2, v}};
    EXPECT_ROWS(el, cols, 4, "{\"a\":null}\n{\"a\":[]}\n{\"a\":[null]}\n{\"a\":[1,null,2]}\n");
}

/* required group ll (LIST) { repeated group list { optional group element (LIST) {
 *   repeated group list { required int32 element } } } } */
static void test_nested_lists(void)
{
    pq_schema_element el[] = {ROOT(1),
                              GROUP("ll", REQ, 1, PQ_CONV_LIST),
                              GROUP("list", REP, 1, PQ_CONV_NONE),
                              GROUP("element", OPT, 1, PQ_CONV_LIST),
                              GROUP("list", REP, 1, PQ_CONV_NONE),
                              I32("element", REQ)};
    /* [[1,2],null,[],[3]] then [] */
    static const uint32_t def[] = {3, 3, 1, 2, 3, 0}, rep[] = {0, 2, 1, 1, 1, 0};
    static const int32_t v[] = {1, 2, 3};
    colspec cols[] = {{6, def, rep, 3, v}};
    EXPECT_ROWS(el, cols, 2, "{\"ll\":[[1,2],null,[],[3]]}\n{\"ll\":[]}\n");
}

/* optional group m (MAP) { repeated group key_value { required binary key (UTF8);
 *   optional int32 value } } */
static void test_map(void)
{
    pq_schema_element el[] = {ROOT(1), GROUP("m", OPT, 1, PQ_CONV_MAP),
                              GROUP("key_value", REP, 2, PQ_CONV_NONE), STR("key", REQ),
                              I32("value", OPT)};
    /* {"a":1,"b":null}, null, {} */
    static const uint32_t kdef[] = {2, 2, 0, 1}, krep[] = {0, 1, 0, 0};
    static const uint32_t vdef[] = {3, 2, 0, 1}, vrep[] = {0, 1, 0, 0};
    pq_bytes keys[] = {S("a"), S("b")};
    static const int32_t vals[] = {1};
    colspec cols[] = {{4, kdef, krep, 2, keys}, {4, vdef, vrep, 1, vals}};
    EXPECT_ROWS(el, cols, 3,
                "{\"m\":[{\"key\":\"a\",\"value\":1},{\"key\":\"b\",\"value\":null}]}\n"
                "{\"m\":null}\n{\"m\":[]}\n");
}

/* required group m (MAP) { repeated group key_value { required int32 key } }: no value */
static void test_map_without_value(void)
{
    pq_schema_element el[] = {ROOT(1), GROUP("m", REQ, 1, PQ_CONV_MAP),
                              GROUP("key_value", REP, 1, PQ_CONV_NONE), I32("key", REQ)};
    static const uint32_t def[] = {1, 1}, rep[] = {0, 1};
    static const int32_t v[] = {7, 8};
    colspec cols[] = {{2, def, rep, 2, v}};
    EXPECT_ROWS(el, cols, 1, "{\"m\":[{\"key\":7,\"value\":null},{\"key\":8,\"value\":null}]}\n");
}

/* Legacy 2-level list (rule 1): optional group l (LIST) { repeated int32 element };
 * and rule 4: a repeated group named "array" with one field is the element itself. */
static void test_legacy_lists(void)
{
    pq_schema_element el[] = {ROOT(1), GROUP("l", OPT, 1, PQ_CONV_LIST), I32("element", REP)};
    static const uint32_t def[] = {2, 2, 1, 0}, rep[] = {0, 1, 0, 0};
    static const int32_t v[] = {1, 2};
    colspec cols[] = {{4, def, rep, 2, v}};
    EXPECT_ROWS(el, cols, 3, "{\"l\":[1,2]}\n{\"l\":[]}\n{\"l\":null}\n");

    pq_schema_element el2[] = {ROOT(1), GROUP("l", OPT, 1, PQ_CONV_LIST),
                               GROUP("array", REP, 1, PQ_CONV_NONE), STR("str", REQ)};
    static const uint32_t def2[] = {2, 2}, rep2[] = {0, 1};
    pq_bytes s2[] = {S("a"), S("b")};
    colspec cols2[] = {{2, def2, rep2, 2, s2}};
    EXPECT_ROWS(el2, cols2, 1, "{\"l\":[{\"str\":\"a\"},{\"str\":\"b\"}]}\n");

    /* rule 5 with a name that is neither "array" nor "<name>_tuple": the child is the
     * element (here optional) */
    pq_schema_element el3[] = {ROOT(1), GROUP("l", OPT, 1, PQ_CONV_LIST),
                               GROUP("bag", REP, 1, PQ_CONV_NONE), STR("str", OPT)};
    static const uint32_t def3[] = {3, 2}, rep3[] = {0, 1};
    pq_bytes s3[] = {S("a")};
    colspec cols3[] = {{2, def3, rep3, 1, s3}};
    EXPECT_ROWS(el3, cols3, 1, "{\"l\":[\"a\",null]}\n");
}

/* required int32 id; repeated int32 r (no annotation: a list of required elements) */
static void test_unannotated_repeated(void)
{
    pq_schema_element el[] = {ROOT(2), I32("id", REQ), I32("r", REP)};
    static const int32_t ids[] = {1, 2};
    static const uint32_t def[] = {1, 1, 0}, rep[] = {0, 1, 0};
    static const int32_t v[] = {5, 6};
    colspec cols[] = {{2, NULL, NULL, 2, ids}, {3, def, rep, 2, v}};
    EXPECT_ROWS(el, cols, 2, "{\"id\":1,\"r\":[5,6]}\n{\"id\":2,\"r\":[]}\n");
}

/* optional group s { optional int32 x; required int32 y } */
static pq_schema_element SEL[4];
static void init_sel(void)
{
    SEL[0] = ROOT(1);
    SEL[1] = GROUP("s", OPT, 2, PQ_CONV_NONE);
    SEL[2] = I32("x", OPT);
    SEL[3] = I32("y", REQ);
}

static void test_struct_nulls(void)
{
    init_sel();
    static const uint32_t xdef[] = {0, 1, 2}, ydef[] = {0, 1, 1};
    static const int32_t xv[] = {4}, yv[] = {3, 5};
    colspec cols[] = {{3, xdef, NULL, 1, xv}, {3, ydef, NULL, 2, yv}};
    EXPECT_ROWS(SEL, cols, 3,
                "{\"s\":null}\n{\"s\":{\"x\":null,\"y\":3}}\n{\"s\":{\"x\":4,\"y\":5}}\n");

    /* only y selected: the struct keeps its null and only that key */
    int rc;
    const int only_y[] = {1};
    colspec ycol[] = {{3, ydef, NULL, 2, yv}};
    char *got = assemble(SEL, 4, ycol, 1, 3, only_y, &rc);
    CHECK_EQ_INT(rc, 0);
    CHECK_EQ_STR(got, "{\"s\":null}\n{\"s\":{\"y\":3}}\n{\"s\":{\"y\":5}}\n");
    free(got);
}

static void test_corrupt_levels(void)
{
    int rc;
    init_sel();
    /* x says the struct is null in row 1, y says it is present */
    static const uint32_t xdef[] = {0, 1}, ydef[] = {1, 1};
    static const int32_t xv[] = {0}, yv[] = {3, 5};
    colspec cols[] = {{2, xdef, NULL, 0, xv}, {2, ydef, NULL, 2, yv}};
    char *got = assemble(SEL, 4, cols, 2, 2, NULL, &rc);
    CHECK(got == NULL);
    CHECK_EQ_INT(rc, ICD_ECORRUPT);

    /* a row that does not start at repetition level 0 */
    pq_schema_element el[] = {ROOT(1), GROUP("l", OPT, 1, PQ_CONV_LIST), I32("element", REP)};
    static const uint32_t def[] = {2, 2}, rep[] = {1, 1};
    static const int32_t v[] = {1, 2};
    colspec c2[] = {{2, def, rep, 2, v}};
    got = assemble(el, 3, c2, 1, 1, NULL, &rc);
    CHECK(got == NULL);
    CHECK_EQ_INT(rc, ICD_ECORRUPT);

    /* fewer values than the levels say are present */
    static const uint32_t def3[] = {2, 2, 2}, rep3[] = {0, 1, 1};
    colspec c3[] = {{3, def3, rep3, 2, v}};
    got = assemble(el, 3, c3, 1, 1, NULL, &rc);
    CHECK(got == NULL);
    CHECK_EQ_INT(rc, ICD_ECORRUPT);

    /* levels left over after the batch's rows */
    static const uint32_t def4[] = {2, 2, 2}, rep4[] = {0, 1, 0};
    static const int32_t v4[] = {1, 2, 3};
    colspec c4[] = {{3, def4, rep4, 3, v4}};
    got = assemble(el, 3, c4, 1, 1, NULL, &rc);
    CHECK(got == NULL);
    CHECK_EQ_INT(rc, ICD_ECORRUPT);
}

static void test_schema_errors(void)
{
    int rc;
    /* num_children claims more elements than the list has */
    pq_schema_element el[] = {ROOT(3), I32("a", REQ), I32("b", REQ)};
    colspec none[1];
    memset(none, 0, sizeof none);
    char *got = assemble(el, 3, none, 0, 0, NULL, &rc);
    CHECK(got == NULL);
    CHECK_EQ_INT(rc, ICD_ECORRUPT);
    /* elements left over after the tree */
    pq_schema_element el2[] = {ROOT(1), I32("a", REQ), I32("b", REQ)};
    got = assemble(el2, 3, none, 0, 0, NULL, &rc);
    CHECK(got == NULL);
    CHECK_EQ_INT(rc, ICD_ECORRUPT);
}

TEST_MAIN(TEST(test_three_level_list), TEST(test_nested_lists), TEST(test_map),
          TEST(test_map_without_value), TEST(test_legacy_lists), TEST(test_unannotated_repeated),
          TEST(test_struct_nulls), TEST(test_corrupt_levels), TEST(test_schema_errors))
