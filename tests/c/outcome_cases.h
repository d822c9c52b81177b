/* The C runner of the case files of TypeScript outcomes (core/tests/data/<name>_cases.json):
 * each case names a boss.* operation ("op"), its arguments ("args", a JSON array) and the
 * outcome the TypeScript core gives ("expect": "input", the first argument itself; "value"; or
 * an "error" of a class, message and code). run_case calls a case through aic_contract_call and
 * compares, run_case_file runs a whole file; fail counts and reports. Shared by the boss_wire, boss_delivery and boss_authority
 * tests (the Rust twin is core/tests/support/outcome_cases.rs). Include after cJSON.h,
 * agent_intercom.h and support.h. */
#ifndef AIC_OUTCOME_CASES_H
#define AIC_OUTCOME_CASES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed;

static void fail(const char *name, const char *why) {
    failed++;
    fprintf(stderr, "FAIL %s: %s\n", name, why);
}

/* The parsed answer of `op` over `args` (a JSON array text); NULL when the call itself failed,
 * with its status in *status when status is not NULL. */
static cJSON *call(const char *op, const char *args, aic_status *status) {
    char *out = NULL;
    size_t len = 0;
    aic_error *err = NULL;
    aic_status got = aic_contract_call(op, strlen(op), args, strlen(args), &out, &len, &err);
    if (status) *status = got;
    if (got != AIC_STATUS_OK) {
        aic_error_free(err);
        return NULL;
    }
    cJSON *answer = cJSON_ParseWithLength(out, len);
    aic_string_free(out);
    return answer;
}

static const char *str(const cJSON *obj, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

static int same_text(const char *a, const char *b) {
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* One case: runs it and compares with its expected outcome. */
static void run_case(const cJSON *c) {
    const char *id = str(c, "id");
    char op[256];
    snprintf(op, sizeof op, "boss.%s", str(c, "op"));
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(c, "args");
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
    char *args_text = cJSON_PrintUnformatted(args);
    cJSON *answer = call(op, args_text, NULL);
    free(args_text);
    if (!answer) {
        fail(id, "the call failed");
        return;
    }
    const char *kind = str(expect, "kind");
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(answer, "value");
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(answer, "error");
    int ok;
    if (strcmp(kind, "input") == 0) {
        ok = value && cJSON_Compare(value, cJSON_GetArrayItem(args, 0), 1);
    } else if (strcmp(kind, "value") == 0) {
        ok = value && cJSON_Compare(value, cJSON_GetObjectItemCaseSensitive(expect, "value"), 1);
    } else {
        ok = error && same_text(str(error, "class"), str(expect, "class")) &&
             same_text(str(error, "message"), str(expect, "message")) &&
             same_text(str(error, "code"), str(expect, "code"));
    }
    if (!ok) {
        char *got = cJSON_PrintUnformatted(answer);
        fail(id, got);
        free(got);
    }
    cJSON_Delete(answer);
}

/* Runs every case of the file at `path` that AIC_VECTOR selects and prints its counts under
 * `label`: 1 when every case was executed or filtered, 0 when not, -1 when the file holds no
 * cases. */
static int run_case_file(const char *path, const char *label) {
    char *text = read_text(path);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *cases = doc ? cJSON_GetObjectItemCaseSensitive(doc, "cases") : NULL;
    if (!cJSON_IsArray(cases)) {
        fprintf(stderr, "%s: no cases\n", path);
        cJSON_Delete(doc);
        return -1;
    }
    int total = cJSON_GetArraySize(cases), executed = 0, filtered = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        if (!vector_selected(str(c, "id"))) {
            filtered++;
            continue;
        }
        executed++;
        run_case(c);
    }
    cJSON_Delete(doc);
    return vector_counts(label, total, executed, 0, filtered);
}

#endif
