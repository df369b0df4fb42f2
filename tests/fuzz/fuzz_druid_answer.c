/*
 * libFuzzer target: Druid's answers to `sync` (druid/phase2/sync.c), through the functions the
 * client runs on a real response: a task submission (POST /druid/v2/sql/task or
 * /druid/indexer/v1/task: {"taskId"} or {"task"}) and a task status
 * (GET /druid/indexer/v1/task/ID/status: status.statusCode or status.status, errorMsg),
 * and the error bodies of both (DruidException, the older error shape, the Overlord's
 * {"error"}, HTML or text). The first byte picks the request (bit 0), the HTTP status
 * (bits 1-3: 200, 200, 202, 400, 401, 404, 500, 503) and whether retries happened (bit 4);
 * the rest is the body. Any crash, leak or sanitizer report is a bug, and so is an error
 * line that spans lines or an accepted submission without a task id; errors are expected.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "druid/phase2/sync.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const long STATUS[] = {200, 200, 202, 400, 401, 404, 500, 503};
    if (size < 1) return 0;
    bool submit = (data[0] & 1) == 0;
    long status = STATUS[(data[0] >> 1) & 7];
    int attempts = (data[0] & 16) ? 3 : 1;
    const char *url = submit ? "http://router:8888/druid/v2/sql/task"
                             : "http://router:8888/druid/indexer/v1/task/t1/status";
    icd_error err;
    json_t *o = NULL;
    int rc = dr_druid_answer(status, attempts, (const char *)data + 1, size - 1, url, &o, &err);
    if (rc == 0 && !json_is_object(o)) abort();
    if (rc == 0 && submit) {
        char *id = NULL;
        rc = dr_druid_submit_answer(o, "/druid/v2/sql/task", &id, &err);
        if (rc == 0 && (!id || !id[0])) abort();
        if (rc && id) abort();
        free(id);
    } else if (rc == 0) {
        bool done = true;
        rc = dr_druid_status_answer(o, "query-6c1f-2024", &done, &err);
        if (rc && done) abort();
    }
    if (rc && (strchr(err.message, '\n') || strchr(err.message, '\r'))) abort();
    json_decref(o);
    return 0;
}
