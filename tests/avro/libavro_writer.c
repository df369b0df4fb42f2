/*
 * Helper of test_avro_libavro.sh (not part of the build): writes an Avro container file
 * with Apache's own C library (libavro), an independent writer, and prints on stdout the
 * NDJSON that `icedruid cat` must print for it, formatted here from the values written.
 * Usage: libavro_writer OUT.avro CODEC N
 */
#include <avro.h>
#include <stdio.h>
#include <stdlib.h>

static const char SCHEMA[] =
    "{\"type\":\"record\",\"name\":\"row\",\"namespace\":\"t\",\"fields\":["
    "{\"name\":\"id\",\"type\":\"long\"},"
    "{\"name\":\"i\",\"type\":\"int\"},"
    "{\"name\":\"name\",\"type\":\"string\"},"
    "{\"name\":\"f\",\"type\":\"double\"},"
    "{\"name\":\"flag\",\"type\":\"boolean\"},"
    "{\"name\":\"opt\",\"type\":[\"null\",\"string\"]},"
    "{\"name\":\"tags\",\"type\":{\"type\":\"array\",\"items\":\"string\"}},"
    "{\"name\":\"attrs\",\"type\":{\"type\":\"map\",\"values\":\"long\"}},"
    "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"X\",\"Y\",\"Z\"]}},"
    "{\"name\":\"fx\",\"type\":{\"type\":\"fixed\",\"name\":\"F4\",\"size\":4}},"
    "{\"name\":\"nested\",\"type\":{\"type\":\"record\",\"name\":\"N\",\"fields\":["
    "{\"name\":\"a\",\"type\":\"int\"},{\"name\":\"b\",\"type\":[\"null\",\"long\"]}]}}"
    "]}";

static void die(const char *what)
{
    fprintf(stderr, "libavro_writer: %s: %s\n", what, avro_strerror());
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc != 4) return 2;
    const char *codec = argv[2];
    long n = atol(argv[3]);
    avro_schema_t schema;
    if (avro_schema_from_json_length(SCHEMA, sizeof SCHEMA - 1, &schema)) die("schema");
    avro_file_writer_t w;
    remove(argv[1]);
    if (avro_file_writer_create_with_codec(argv[1], schema, &w, codec, 16 * 1024)) die("create");
    avro_value_iface_t *iface = avro_generic_class_from_schema(schema);
    avro_value_t rec;
    avro_generic_value_new(iface, &rec);
    static const char *SYMS[] = {"X", "Y", "Z"};
    for (long k = 0; k < n; k++) {
        avro_value_t f, b, item;
        char name[64];
        snprintf(name, sizeof name, "name-%ld", k);
        avro_value_reset(&rec);
        avro_value_get_by_name(&rec, "id", &f, NULL);
        avro_value_set_long(&f, k * 1000003L - 500000000L);
        avro_value_get_by_name(&rec, "i", &f, NULL);
        avro_value_set_int(&f, (int32_t)(k % 7 - 3));
        avro_value_get_by_name(&rec, "name", &f, NULL);
        avro_value_set_string(&f, name);
        avro_value_get_by_name(&rec, "f", &f, NULL);
        avro_value_set_double(&f, (double)k + 0.5);
        avro_value_get_by_name(&rec, "flag", &f, NULL);
        avro_value_set_boolean(&f, k % 2);
        avro_value_get_by_name(&rec, "opt", &f, NULL);
        if (k % 3 == 0) {
            avro_value_set_branch(&f, 0, &b);
            avro_value_set_null(&b);
        } else {
            avro_value_set_branch(&f, 1, &b);
            avro_value_set_string(&b, "some");
        }
        avro_value_get_by_name(&rec, "tags", &f, NULL);
        for (long t = 0; t < k % 4; t++) {
            char tag[16];
            snprintf(tag, sizeof tag, "t%ld", t);
            avro_value_append(&f, &item, NULL);
            avro_value_set_string(&item, tag);
        }
        avro_value_get_by_name(&rec, "attrs", &f, NULL);
        for (long t = 0; t < k % 3; t++) {
            char key[16];
            snprintf(key, sizeof key, "k%ld", t);
            avro_value_add(&f, key, &item, NULL, NULL);
            avro_value_set_long(&item, t * k);
        }
        avro_value_get_by_name(&rec, "e", &f, NULL);
        avro_value_set_enum(&f, (int)(k % 3));
        avro_value_get_by_name(&rec, "fx", &f, NULL);
        avro_value_set_fixed(&f, "abcd", 4);
        avro_value_get_by_name(&rec, "nested", &f, NULL);
        avro_value_t a;
        avro_value_get_by_name(&f, "a", &a, NULL);
        avro_value_set_int(&a, (int32_t)k);
        avro_value_get_by_name(&f, "b", &a, NULL);
        if (k % 2) {
            avro_value_set_branch(&a, 1, &b);
            avro_value_set_long(&b, -k);
        } else {
            avro_value_set_branch(&a, 0, &b);
            avro_value_set_null(&b);
        }
        if (avro_file_writer_append_value(w, &rec)) die("append");

        /* the expected line */
        printf("{\"id\":%ld,\"i\":%ld,\"name\":\"%s\",\"f\":%.1f,\"flag\":%s,\"opt\":%s,\"tags\":[",
               k * 1000003L - 500000000L, k % 7 - 3, name, (double)k + 0.5,
               k % 2 ? "true" : "false", k % 3 == 0 ? "null" : "\"some\"");
        for (long t = 0; t < k % 4; t++)
            printf("%s\"t%ld\"", t ? "," : "", t);
        printf("],\"attrs\":[");
        for (long t = 0; t < k % 3; t++)
            printf("%s{\"key\":\"k%ld\",\"value\":%ld}", t ? "," : "", t, t * k);
        printf("],\"e\":\"%s\",\"fx\":\"YWJjZA==\",\"nested\":{\"a\":%ld,\"b\":", SYMS[k % 3], k);
        if (k % 2)
            printf("%ld}}\n", -k);
        else
            printf("null}}\n");
    }
    avro_value_decref(&rec);
    avro_value_iface_decref(iface);
    avro_file_writer_close(w);
    avro_schema_decref(schema);
    return 0;
}
