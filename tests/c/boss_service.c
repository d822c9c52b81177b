/* The broker and restricted-client part of ./boss (boss-service.ts) through aic_contract_call:
 * every case of core/tests/data/boss_service_cases.json (real Ed25519 signatures; each case
 * with the TypeScript core 0.2.0's outcome). {"$ref": name} in a case stands for bases[name].
 * Values are compared as printed, so member order counts. A case that needs an operation this
 * build lacks, or whose arguments hold a NUL character (cJSON ends strings there), is skipped
 * and counted. Prints executed and skipped (and, with AIC_VECTOR, filtered) counts.
 * Usage: boss_service [cases-file] (default: the file, from the repository root). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_intercom.h"
#include "support.h"

static int failed;

static void fail(const char *name, const char *why) {
    failed++;
    fprintf(stderr, "FAIL %s: %s\n", name, why);
}

static const char *str(const cJSON *obj, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

static int same_text(const char *a, const char *b) {
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* A copy of `value` with every {"$ref": name} replaced by a resolved copy of bases[name]. */
static cJSON *resolve(const cJSON *value, const cJSON *bases) {
    if (cJSON_IsObject(value)) {
        const cJSON *ref = cJSON_GetObjectItemCaseSensitive(value, "$ref");
        if (ref && cJSON_GetArraySize(value) == 1 && cJSON_IsString(ref))
            return resolve(cJSON_GetObjectItemCaseSensitive(bases, ref->valuestring), bases);
        cJSON *copy = cJSON_CreateObject();
        const cJSON *item;
        cJSON_ArrayForEach(item, value) cJSON_AddItemToObject(copy, item->string, resolve(item, bases));
        return copy;
    }
    if (cJSON_IsArray(value)) {
        cJSON *copy = cJSON_CreateArray();
        const cJSON *item;
        cJSON_ArrayForEach(item, value) cJSON_AddItemToArray(copy, resolve(item, bases));
        return copy;
    }
    return value ? cJSON_Duplicate(value, 1) : cJSON_CreateNull();
}

/* `op` of `args`: the parsed answer {"ok":...} (free with cJSON_Delete), or NULL when the call
 * itself failed. */
static cJSON *call(const char *op, const cJSON *args) {
    char *text = cJSON_PrintUnformatted(args);
    char *out = NULL;
    size_t len = 0;
    aic_error *err = NULL;
    aic_status st = aic_contract_call(op, strlen(op), text, strlen(text), &out, &len, &err);
    free(text);
    if (st != AIC_STATUS_OK) {
        aic_error_free(err);
        return NULL;
    }
    cJSON *answer = cJSON_ParseWithLength(out, len);
    aic_string_free(out);
    return answer;
}

static int same_value(const cJSON *a, const cJSON *b) {
    if (!a || !b) return a == b;
    char *x = cJSON_PrintUnformatted(a);
    char *y = cJSON_PrintUnformatted(b);
    int same = x && y && strcmp(x, y) == 0;
    free(x);
    free(y);
    return same;
}

/* Whether the answer is the expected refusal: class and message, and path and code when the
 * TypeScript core gave them. */
static int refused_as(const cJSON *answer, const cJSON *expect) {
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(answer, "ok"))) return 0;
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(answer, "error");
    const char *keys[] = {"class", "message", "path", "code"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *want = str(expect, keys[i]);
        if (want && !same_text(str(error, keys[i]), want)) return 0;
    }
    return 1;
}

static void run_case(const cJSON *c, const cJSON *bases) {
    const char *id = str(c, "id");
    cJSON *args = resolve(cJSON_GetObjectItemCaseSensitive(c, "args"), bases);
    cJSON *expect = resolve(cJSON_GetObjectItemCaseSensitive(c, "expect"), bases);
    const char *kind = str(expect, "kind");
    cJSON *answer = call(str(c, "op"), args);
    int ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(answer, "ok"));
    const cJSON *got = cJSON_GetObjectItemCaseSensitive(answer, "value");
    int same = 0;
    if (!kind || !answer) same = 0;
    else if (strcmp(kind, "error") == 0) same = refused_as(answer, expect);
    else if (strcmp(kind, "bytes") == 0) same = ok && cJSON_IsString(got) && same_text(got->valuestring, str(expect, "text"));
    else if (strcmp(kind, "undefined") == 0) same = ok && !got;
    else same = ok && same_value(got, cJSON_GetObjectItemCaseSensitive(expect, "value"));
    if (!same) {
        char *shown = answer ? cJSON_PrintUnformatted(answer) : NULL;
        fail(id ? id : "?", shown ? shown : "the call failed");
        free(shown);
    }
    cJSON_Delete(answer);
    cJSON_Delete(args);
    cJSON_Delete(expect);
}

/* Whether this build has every operation the case requires (an unknown operation is an error
 * of the call itself, not a refusal). */
static int available(const cJSON *c) {
    const cJSON *op;
    cJSON_ArrayForEach(op, cJSON_GetObjectItemCaseSensitive(c, "requires")) {
        if (!cJSON_IsString(op)) return 0;
        cJSON *args = cJSON_CreateArray();
        cJSON *answer = call(op->valuestring, args);
        cJSON_Delete(args);
        if (!answer) return 0;
        cJSON_Delete(answer);
    }
    return 1;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "core/tests/data/boss_service_cases.json";
    char *text = read_text(path);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *bases = cJSON_GetObjectItemCaseSensitive(doc, "bases");
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(doc, "count");
    int total = cJSON_GetArraySize(list), executed = 0, skipped = 0, filtered = 0;
    if (!cJSON_IsNumber(count) || count->valueint != total) fail(path, "count");
    const cJSON *c;
    cJSON_ArrayForEach(c, list) {
        if (!vector_selected(str(c, "id"))) {
            filtered++;
            continue;
        }
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "nul")) || !available(c)) {
            skipped++;
            continue;
        }
        executed++;
        run_case(c, bases);
    }
    cJSON_Delete(doc);
    int counted = vector_counts("boss_service_cases.json", total, executed, skipped, filtered);
    if (failed || !counted) {
        fprintf(stderr, "boss_service: %d failures\n", failed);
        return 1;
    }
    printf("boss_service: ok\n");
    return 0;
}
