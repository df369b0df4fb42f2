/* Unit tests of the Hive Metastore and Glue catalog codecs: the get_table request bytes
 * (computed by hand from the Thrift binary protocol rules), reply decoding (fields of every
 * type skipped, exceptions, truncation at every length, hostile counts and nesting), the
 * Glue GetTable answer interpretation, property checks done when a client is opened, and
 * Hive-style durations. No network. */
#include <jansson.h>
#include <stdlib.h>

#include "catalog/glue.h"
#include "catalog/hive.h"
#include "catalog/props.h"
#include "catalog/thrift_binary.h"
#include "io/fileio.h"
#include "test.h"

static void test_encode_get_table(void)
{
    static const unsigned char want[] = {
        0x80, 0x01, 0x00, 0x01, /* strict version | CALL */
        0,    0,    0,    9,    'g', 'e', 't', '_', 't', 'a', 'b', 'l', 'e', /* name */
        0,    0,    0,    7,                                                 /* seqid */
        11,   0,    1,    0,    0,   0,   2,   'd', 'b',                     /* 1: string dbname */
        11,   0,    2,    0,    0,   0,   1,   't', /* 2: string tbl_name */
        0};                                         /* STOP */
    icd_buf b = ICD_BUF_INIT;
    cat_hive_encode_get_table(&b, "db", "t", 7, false);
    CHECK_EQ_INT(b.len, sizeof want);
    CHECK(b.len == sizeof want && !memcmp(b.data, want, sizeof want));
    icd_buf_clear(&b);
    cat_hive_encode_get_table(&b, "db", "t", 7, true);
    CHECK_EQ_INT(b.len, sizeof want + 4);
    static const unsigned char len[] = {0, 0, 0, sizeof want};
    CHECK(b.len == sizeof want + 4 && !memcmp(b.data, len, 4) &&
          !memcmp(b.data + 4, want, sizeof want));
    icd_buf_free(&b);
}

static void put_str(icd_buf *b, int16_t id, const char *s)
{
    cat_tb_put_field(b, CAT_TB_STRING, id);
    cat_tb_put_string(b, s, strlen(s));
}

static void put_i64(icd_buf *b, int64_t v)
{
    cat_tb_put_i32(b, (int32_t)(v >> 32));
    cat_tb_put_i32(b, (int32_t)v);
}

/* A REPLY whose success Table has the fields a client reads among fields of every type. */
static void build_table_reply(icd_buf *b, int32_t seqid, const char *table_type)
{
    cat_tb_put_message(b, "get_table", CAT_TB_REPLY, seqid);
    cat_tb_put_field(b, CAT_TB_STRUCT, 0);
    put_str(b, 1, "orders");
    put_str(b, 2, "sales");
    cat_tb_put_field(b, CAT_TB_I32, 4);
    cat_tb_put_i32(b, 1700000000);
    cat_tb_put_field(b, CAT_TB_STRUCT, 7); /* sd */
    cat_tb_put_field(b, CAT_TB_LIST, 1);   /* cols: list<FieldSchema> */
    cat_tb_put_i8(b, CAT_TB_STRUCT);
    cat_tb_put_i32(b, 1);
    put_str(b, 1, "id");
    put_str(b, 2, "bigint");
    cat_tb_put_i8(b, CAT_TB_STOP);
    put_str(b, 2, "s3://bucket/wh/sales/orders");
    cat_tb_put_field(b, CAT_TB_BOOL, 5);
    cat_tb_put_i8(b, 1);
    cat_tb_put_i8(b, CAT_TB_STOP);
    cat_tb_put_field(b, CAT_TB_MAP, 9); /* parameters */
    cat_tb_put_i8(b, CAT_TB_STRING);
    cat_tb_put_i8(b, CAT_TB_STRING);
    cat_tb_put_i32(b, table_type ? 3 : 2);
    cat_tb_put_string(b, "EXTERNAL", 8);
    cat_tb_put_string(b, "TRUE", 4);
    cat_tb_put_string(b, "metadata_location", 17);
    cat_tb_put_string(b, "s3://bucket/wh/sales/orders/metadata/00003-x.metadata.json", 58);
    if (table_type) {
        cat_tb_put_string(b, "table_type", 10);
        cat_tb_put_string(b, table_type, strlen(table_type));
    }
    put_str(b, 12, "EXTERNAL_TABLE");
    cat_tb_put_field(b, CAT_TB_I64, 90);
    put_i64(b, -2);
    cat_tb_put_field(b, CAT_TB_DOUBLE, 91);
    put_i64(b, 0x4004000000000000LL); /* 2.5 */
    cat_tb_put_field(b, CAT_TB_SET, 92);
    cat_tb_put_i8(b, CAT_TB_I16);
    cat_tb_put_i32(b, 2);
    cat_tb_put_i16(b, 1);
    cat_tb_put_i16(b, 2);
    cat_tb_put_field(b, CAT_TB_MAP, 93); /* map<list<string>, struct> */
    cat_tb_put_i8(b, CAT_TB_LIST);
    cat_tb_put_i8(b, CAT_TB_STRUCT);
    cat_tb_put_i32(b, 1);
    cat_tb_put_i8(b, CAT_TB_STRING);
    cat_tb_put_i32(b, 1);
    cat_tb_put_string(b, "k", 1);
    cat_tb_put_field(b, CAT_TB_BYTE, 1);
    cat_tb_put_i8(b, -3);
    cat_tb_put_i8(b, CAT_TB_STOP);
    cat_tb_put_field(b, CAT_TB_UUID, 94);
    for (int i = 0; i < 4; i++)
        cat_tb_put_i32(b, i);
    cat_tb_put_i8(b, CAT_TB_STOP); /* Table */
    cat_tb_put_i8(b, CAT_TB_STOP); /* result */
}

static void test_parse_table(void)
{
    icd_buf b = ICD_BUF_INIT;
    build_table_reply(&b, 5, "iceberg");
    cat_hive_table *t = NULL;
    size_t used = 0;
    bool trunc = true;
    icd_error err;
    CHECK_EQ_INT(cat_hive_parse_reply(b.data, b.len, 5, "hms", &t, &used, &trunc, &err), 0);
    CHECK_EQ_INT(used, b.len);
    CHECK(!trunc);
    if (t) {
        CHECK_EQ_STR(t->table_name, "orders");
        CHECK_EQ_STR(t->db_name, "sales");
        CHECK_EQ_STR(t->location, "s3://bucket/wh/sales/orders");
        CHECK_EQ_STR(t->table_type, "EXTERNAL_TABLE");
        CHECK_EQ_STR(t->iceberg_type, "iceberg");
        CHECK_EQ_STR(t->metadata_location,
                     "s3://bucket/wh/sales/orders/metadata/00003-x.metadata.json");
    }
    cat_hive_table_free(t);

    /* Every shorter prefix is an error that asks for more bytes. */
    int bad = 0;
    for (size_t n = 0; n < b.len; n++) {
        t = NULL;
        int rc = cat_hive_parse_reply(b.data, n, 5, "hms", &t, &used, &trunc, &err);
        if (rc != ICD_ECORRUPT || !trunc || t) bad++;
        cat_hive_table_free(t);
    }
    CHECK_EQ_INT(bad, 0);

    /* Trailing bytes are left for the caller to judge. */
    icd_buf_append(&b, "xyz", 3);
    t = NULL;
    CHECK_EQ_INT(cat_hive_parse_reply(b.data, b.len, 5, "hms", &t, &used, &trunc, &err), 0);
    CHECK_EQ_INT(used, b.len - 3);
    cat_hive_table_free(t);

    /* Another sequence id is not our answer. */
    t = NULL;
    CHECK_EQ_INT(cat_hive_parse_reply(b.data, b.len, 6, "hms", &t, &used, &trunc, &err),
                 ICD_ECORRUPT);
    CHECK(!trunc && strstr(err.message, "sequence id 5, expected 6"));
    icd_buf_free(&b);
}

static void test_parse_exceptions(void)
{
    icd_buf b = ICD_BUF_INIT;
    cat_hive_table *t = NULL;
    size_t used;
    bool trunc;
    icd_error err;
    /* o2: NoSuchObjectException */
    cat_tb_put_message(&b, "get_table", CAT_TB_REPLY, 1);
    cat_tb_put_field(&b, CAT_TB_STRUCT, 2);
    put_str(&b, 1, "sales.nope table not found");
    cat_tb_put_i8(&b, CAT_TB_STOP);
    cat_tb_put_i8(&b, CAT_TB_STOP);
    CHECK_EQ_INT(cat_hive_parse_reply(b.data, b.len, 1, "hms", &t, &used, &trunc, &err),
                 ICD_ENOTFOUND);
    CHECK(strstr(err.message, "NoSuchObjectException: sales.nope table not found") != NULL);
    CHECK(t == NULL && !trunc);
    /* o1: MetaException */
    icd_buf_clear(&b);
    cat_tb_put_message(&b, "get_table", CAT_TB_REPLY, 1);
    cat_tb_put_field(&b, CAT_TB_STRUCT, 1);
    put_str(&b, 1, "java.lang.NullPointerException");
    cat_tb_put_i8(&b, CAT_TB_STOP);
    cat_tb_put_i8(&b, CAT_TB_STOP);
    CHECK_EQ_INT(cat_hive_parse_reply(b.data, b.len, 1, "hms", &t, &used, &trunc, &err), ICD_EIO);
    CHECK(strstr(err.message, "MetaException: java.lang.NullPointerException") != NULL);
    /* TApplicationException in an EXCEPTION message */
    icd_buf_clear(&b);
    cat_tb_put_message(&b, "get_table", CAT_TB_EXCEPTION, 1);
    put_str(&b, 1, "Invalid method name: 'get_table'");
    cat_tb_put_field(&b, CAT_TB_I32, 2);
    cat_tb_put_i32(&b, 1);
    cat_tb_put_i8(&b, CAT_TB_STOP);
    CHECK_EQ_INT(cat_hive_parse_reply(b.data, b.len, 1, "hms", &t, &used, &trunc, &err), ICD_EIO);
    CHECK(strstr(err.message, "TApplicationException (unknown method)") != NULL);
    /* An empty result struct */
    icd_buf_clear(&b);
    cat_tb_put_message(&b, "get_table", CAT_TB_REPLY, 1);
    cat_tb_put_i8(&b, CAT_TB_STOP);
    CHECK_EQ_INT(cat_hive_parse_reply(b.data, b.len, 1, "hms", &t, &used, &trunc, &err),
                 ICD_ECORRUPT);
    icd_buf_free(&b);
}

static void test_parse_hostile(void)
{
    cat_hive_table *t = NULL;
    size_t used;
    bool trunc;
    icd_error err;
    icd_buf b = ICD_BUF_INIT;
    /* An old unversioned header (a positive name length first). */
    cat_tb_put_string(&b, "get_table", 9);
    cat_tb_put_i8(&b, CAT_TB_REPLY);
    cat_tb_put_i32(&b, 1);
    CHECK_EQ_INT(cat_hive_parse_reply(b.data, b.len, 1, "hms", &t, &used, &trunc, &err),
                 ICD_ECORRUPT);
    CHECK(strstr(err.message, "unversioned") != NULL && !trunc);
    /* Nesting 200 deep inside an unknown field. */
    icd_buf_clear(&b);
    cat_tb_put_message(&b, "get_table", CAT_TB_REPLY, 1);
    for (int i = 0; i < 200; i++)
        cat_tb_put_field(&b, CAT_TB_STRUCT, 77);
    for (int i = 0; i < 201; i++)
        cat_tb_put_i8(&b, CAT_TB_STOP);
    CHECK_EQ_INT(cat_hive_parse_reply(b.data, b.len, 1, "hms", &t, &used, &trunc, &err),
                 ICD_ECORRUPT);
    CHECK(strstr(err.message, "nesting") != NULL);
    /* A list claiming two billion elements in a few bytes. */
    icd_buf_clear(&b);
    cat_tb_put_message(&b, "get_table", CAT_TB_REPLY, 1);
    cat_tb_put_field(&b, CAT_TB_LIST, 50);
    cat_tb_put_i8(&b, CAT_TB_I64);
    cat_tb_put_i32(&b, 0x7fffffff);
    put_i64(&b, 1);
    CHECK_EQ_INT(cat_hive_parse_reply(b.data, b.len, 1, "hms", &t, &used, &trunc, &err),
                 ICD_ECORRUPT);
    CHECK(strstr(err.message, "does not fit") != NULL);
    /* A negative string length and an unknown field type. */
    icd_buf_clear(&b);
    cat_tb_put_message(&b, "get_table", CAT_TB_REPLY, 1);
    cat_tb_put_field(&b, CAT_TB_STRING, 50);
    cat_tb_put_i32(&b, -4);
    CHECK_EQ_INT(cat_hive_parse_reply(b.data, b.len, 1, "hms", &t, &used, &trunc, &err),
                 ICD_ECORRUPT);
    CHECK(strstr(err.message, "negative string length") != NULL && !trunc);
    icd_buf_clear(&b);
    cat_tb_put_message(&b, "get_table", CAT_TB_REPLY, 1);
    cat_tb_put_field(&b, 7, 50);
    CHECK_EQ_INT(cat_hive_parse_reply(b.data, b.len, 1, "hms", &t, &used, &trunc, &err),
                 ICD_ECORRUPT);
    CHECK(strstr(err.message, "unknown field type 7") != NULL);
    /* A reply to another method. */
    icd_buf_clear(&b);
    cat_tb_put_message(&b, "get_database", CAT_TB_REPLY, 1);
    cat_tb_put_i8(&b, CAT_TB_STOP);
    CHECK_EQ_INT(cat_hive_parse_reply(b.data, b.len, 1, "hms", &t, &used, &trunc, &err),
                 ICD_ECORRUPT);
    CHECK(strstr(err.message, "get_database") != NULL);
    CHECK(t == NULL);
    icd_buf_free(&b);
}

static const char GOOD[] =
    "{\"Table\":{\"Name\":\"orders\",\"DatabaseName\":\"sales\",\"Parameters\":"
    "{\"table_type\":\"ICEBERG\",\"metadata_location\":\"s3://b/w/orders/metadata/"
    "00001-a.metadata.json\"}}}";

static void test_glue_response(void)
{
    char *loc = NULL;
    icd_error err;
    CHECK_EQ_INT(
        cat_glue_parse_response(200, GOOD, strlen(GOOD), "sales", "orders", "glue", &loc, &err), 0);
    CHECK_EQ_STR(loc, "s3://b/w/orders/metadata/00001-a.metadata.json");
    free(loc);
    const char *hive = "{\"Table\":{\"Name\":\"t\",\"Parameters\":{\"EXTERNAL\":\"TRUE\"}}}";
    CHECK_EQ_INT(cat_glue_parse_response(200, hive, strlen(hive), "sales", "t", "glue", &loc, &err),
                 ICD_EINVALID);
    CHECK(strstr(err.message, "sales.t is not an Iceberg table") != NULL && loc == NULL);
    const char *nf = "{\"__type\":\"com.amazonaws.glue#EntityNotFoundException\","
                     "\"Message\":\"Table t not found.\"}";
    CHECK_EQ_INT(cat_glue_parse_response(400, nf, strlen(nf), "sales", "t", "glue", &loc, &err),
                 ICD_ENOTFOUND);
    CHECK(strstr(err.message, "HTTP 400 EntityNotFoundException: Table t not found.") != NULL);
    const char *ad = "{\"__type\":\"AccessDeniedException\",\"message\":\"no\\npermission\"}";
    CHECK_EQ_INT(cat_glue_parse_response(400, ad, strlen(ad), "sales", "t", "glue", &loc, &err),
                 ICD_EIO);
    CHECK(strstr(err.message, "AccessDeniedException: no permission") != NULL);
    CHECK_EQ_INT(cat_glue_parse_response(403, "", 0, "sales", "t", "glue", &loc, &err), ICD_EIO);
    CHECK(strstr(err.message, "HTTP 403 (access denied") != NULL);
    CHECK_EQ_INT(cat_glue_parse_response(200, "{\"Table\":", 9, "sales", "t", "glue", &loc, &err),
                 ICD_ECORRUPT);
    CHECK_EQ_INT(cat_glue_parse_response(200, "{}", 2, "sales", "t", "glue", &loc, &err),
                 ICD_ECORRUPT);
    CHECK(loc == NULL);
}

static int open_hive(const char *uri, const char *props_json, icd_error *err)
{
    icd_fileio *io;
    if (icd_fileio_new(&io, err)) return -100;
    json_t *props = props_json ? json_loads(props_json, 0, NULL) : NULL;
    cat_hive *c = NULL;
    int rc = cat_hive_open(io, uri, props, &c, err);
    cat_hive_free(c);
    json_decref(props);
    icd_fileio_free(io);
    return rc;
}

static void test_hive_open(void)
{
    icd_error err;
    CHECK_EQ_INT(open_hive("thrift://h1:9083, thrift://[::1]:1,thrift://h3", NULL, &err), 0);
    CHECK_EQ_INT(open_hive("http://h:9083", NULL, &err), ICD_EINVALID);
    CHECK(strstr(err.message, "must start with thrift://") != NULL);
    CHECK_EQ_INT(open_hive("thrift://h:port", NULL, &err), ICD_EINVALID);
    CHECK_EQ_INT(open_hive("thrift://:9083", NULL, &err), ICD_EINVALID);
    CHECK_EQ_INT(open_hive(" , ", NULL, &err), ICD_EINVALID);
    /* Kerberos needs the metastore's service principal; kerberos auth needs SASL on */
    CHECK_EQ_INT(open_hive("thrift://h", "{\"hive.metastore.sasl.enabled\":\"TRUE\"}", &err),
                 ICD_EINVALID);
    CHECK(strstr(err.message, "hive.metastore.kerberos.principal") != NULL);
    CHECK_EQ_INT(open_hive("thrift://h",
                           "{\"hive.metastore.sasl.enabled\":true,"
                           "\"hive.metastore.kerberos.principal\":\"hive/_HOST@R\"}",
                           &err),
                 0);
    CHECK_EQ_INT(open_hive("thrift://h", "{\"hive.metastore.use.SSL\":true}", &err), 0);
    CHECK_EQ_INT(open_hive("thrift://h",
                           "{\"hive.metastore.use.SSL\":true,"
                           "\"hive.metastore.truststore.path\":\"/nonexistent.jks\"}",
                           &err),
                 ICD_EIO);
    CHECK_EQ_INT(open_hive("thrift://h", "{\"hadoop.security.authentication\":\"kerberos\"}", &err),
                 ICD_EINVALID);
    CHECK_EQ_INT(open_hive("thrift://h",
                           "{\"hive.metastore.thrift.framed.transport.enabled\":\"yes\"}", &err),
                 ICD_EINVALID);
    CHECK_EQ_INT(
        open_hive("thrift://h", "{\"hive.metastore.client.socket.timeout\":\"soon\"}", &err),
        ICD_EINVALID);
    CHECK_EQ_INT(open_hive("thrift://h", "{\"hive.metastore.connect.retries\":-1}", &err),
                 ICD_EINVALID);
    CHECK_EQ_INT(
        open_hive("thrift://h", "{\"druid.dynamic.config.provider\":{\"type\":\"env\"}}", &err),
        ICD_EUNSUPPORTED);
}

static void test_durations(void)
{
    long ms = 0;
    CHECK(cat_parse_duration_ms("600s", 1000, &ms) && ms == 600000);
    CHECK(cat_parse_duration_ms("500ms", 1000, &ms) && ms == 500);
    CHECK(cat_parse_duration_ms("10", 1000, &ms) && ms == 10000);
    CHECK(cat_parse_duration_ms("2m", 1000, &ms) && ms == 120000);
    CHECK(cat_parse_duration_ms(" 1 h", 1000, &ms) && ms == 3600000);
    CHECK(!cat_parse_duration_ms("x", 1000, &ms));
    CHECK(!cat_parse_duration_ms("-1", 1000, &ms));
    CHECK(!cat_parse_duration_ms("5 weeks", 1000, &ms));
    CHECK(!cat_parse_duration_ms("99999999h", 1000, &ms));
}

TEST_MAIN(TEST(test_encode_get_table), TEST(test_parse_table), TEST(test_parse_exceptions),
          TEST(test_parse_hostile), TEST(test_glue_response), TEST(test_hive_open),
          TEST(test_durations))
