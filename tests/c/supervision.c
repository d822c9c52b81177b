/* Runs vectors/orc-supervision-v1.json through the C ABI (aic_contract_call): each case calls
 * its operation with the values its args point at (JSON pointers into the file) and must give
 * the TypeScript core's outcome. Recomputes SUPERVISION_VECTORS_HASH from the file with
 * canonical.canonicalHash and compares it with the published value and with the hash the core
 * computes from its embedded copy. Prints executed and skipped (and, with AIC_VECTOR, filtered)
 * counts; exits non-zero on any failure or on any case that was none of them.
 * Usage: supervision [vectors-dir] */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_intercom.h"
#include "support.h"
#include "contract_json.h"

#define PUBLISHED_HASH "6795156a761aa7fa404c06657e7ca3438a99b1a7e4d2919308379a5448e14b33"

/* cJSON prints a number with 15 significant digits whenever that reads back within its epsilon,
 * which changes integers near 2^53 (the corpus has 9007199254740991); every number of `item` and
 * its siblings is made a raw item written with 17 digits instead, which a double round-trips. */
static void exact_numbers(cJSON *item) {
    for (; item; item = item->next) {
        if (!cJSON_IsNumber(item)) {
            exact_numbers(item->child);
            continue;
        }
        char digits[40];
        int n = snprintf(digits, sizeof digits, "%.17g", item->valuedouble);
        char *copy = malloc((size_t)n + 1);
        if (!copy) exit(2);
        memcpy(copy, digits, (size_t)n + 1);
        item->type = cJSON_Raw;
        item->valuestring = copy;
    }
}

/* The value a JSON pointer ("/a/0/b") names in `doc`, or NULL. */
static const cJSON *at(const cJSON *doc, const char *pointer) {
    const cJSON *value = doc;
    const char *p = pointer;
    char token[256];
    while (value && *p == '/') {
        p++;
        size_t n = strcspn(p, "/");
        if (n >= sizeof token) return NULL;
        memcpy(token, p, n);
        token[n] = 0;
        p += n;
        value = cJSON_IsArray(value) ? cJSON_GetArrayItem(value, atoi(token))
                                     : cJSON_GetObjectItemCaseSensitive(value, token);
    }
    return value;
}

/* Whether the answer matches the case's outcome. */
static int matches(const cJSON *answer, const cJSON *outcome, const cJSON *args) {
    const cJSON *throws = cJSON_GetObjectItemCaseSensitive(outcome, "throws");
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(answer, "value");
    if (throws) {
        const cJSON *error = cJSON_GetObjectItemCaseSensitive(answer, "error");
        const char *cls = str(error, "class"), *message = str(error, "message");
        return cls && message && strcmp(cls, str(throws, "class")) == 0 &&
               strcmp(message, str(throws, "message")) == 0;
    }
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(answer, "ok")) || !value) return 0;
    const cJSON *index = cJSON_GetObjectItemCaseSensitive(outcome, "equalsArg");
    if (cJSON_IsNumber(index))
        return cJSON_Compare(value, cJSON_GetArrayItem(args, index->valueint), 1);
    index = cJSON_GetObjectItemCaseSensitive(outcome, "validStoreRecordOf");
    if (cJSON_IsNumber(index)) {
        const char *status = str(value, "status");
        return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(value, "ok")) && status &&
               strcmp(status, "valid") == 0 &&
               cJSON_Compare(cJSON_GetObjectItemCaseSensitive(value, "value"),
                             cJSON_GetArrayItem(args, index->valueint), 1);
    }
    return cJSON_Compare(value, cJSON_GetObjectItemCaseSensitive(outcome, "value"), 1);
}

static void run_case(const cJSON *doc, const cJSON *c, const char *id) {
    const char *op = str(c, "op");
    const cJSON *pointers = cJSON_GetObjectItemCaseSensitive(c, "args");
    const cJSON *outcome = cJSON_GetObjectItemCaseSensitive(c, "outcome");
    cJSON *args = cJSON_CreateArray();
    const cJSON *pointer;
    cJSON_ArrayForEach(pointer, pointers) {
        const cJSON *value = cJSON_IsString(pointer) ? at(doc, pointer->valuestring) : NULL;
        if (!value) {
            fail(id, "an argument points at nothing");
            cJSON_Delete(args);
            return;
        }
        cJSON_AddItemToArray(args, cJSON_Duplicate(value, 1));
    }
    if (!op || !outcome) {
        fail(id, "no op or outcome");
        cJSON_Delete(args);
        return;
    }
    cJSON *kept = cJSON_Duplicate(args, 1);
    exact_numbers(args->child);
    cJSON *answer = call(op, args);
    if (!answer || !matches(answer, outcome, kept)) {
        char *shown = answer ? cJSON_PrintUnformatted(answer) : NULL;
        fail(id, shown ? shown : "the call failed");
        free(shown);
    }
    cJSON_Delete(answer);
    cJSON_Delete(kept);
}

/* SUPERVISION_VECTORS_HASH recomputed here from the file's `semantics`, and the core's own. */
static void check_hash(const cJSON *doc) {
    cJSON *args = cJSON_CreateArray();
    cJSON_AddItemToArray(args, cJSON_CreateString(str(doc, "corpus")));
    cJSON_AddItemToArray(args, cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(doc, "semantics"), 1));
    exact_numbers(args->child);
    cJSON *answer = call("canonical.canonicalHash", args);
    const cJSON *hash = cJSON_GetObjectItemCaseSensitive(answer, "value");
    const char *known = str(doc, "semanticsHash");
    if (!cJSON_IsString(hash) || strcmp(hash->valuestring, PUBLISHED_HASH) != 0 || !known ||
        strcmp(known, PUBLISHED_HASH) != 0)
        fail("hash", "the file does not hash to SUPERVISION_VECTORS_HASH");
    cJSON_Delete(answer);
    answer = call("boss.supervisionVectors", cJSON_CreateArray());
    const char *core = str(cJSON_GetObjectItemCaseSensitive(answer, "value"), "semanticsHash");
    if (!core || strcmp(core, PUBLISHED_HASH) != 0) fail("hash", "the core's hash");
    cJSON_Delete(answer);
    answer = call("boss.constants", cJSON_CreateArray());
    core = str(cJSON_GetObjectItemCaseSensitive(answer, "value"), "SUPERVISION_VECTORS_HASH");
    if (!core || strcmp(core, PUBLISHED_HASH) != 0) fail("hash", "boss.constants");
    cJSON_Delete(answer);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "vectors";
    const char *file = "orc-supervision-v1.json";
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *text = read_text(path);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(doc, "count");
    int total = cJSON_GetArraySize(cases), executed = 0, filtered = 0;
    if (!cJSON_IsNumber(count) || count->valueint != total || total != 64) {
        fprintf(stderr, "FAIL %s: %d cases, the count field and 64 disagree\n", file, total);
        failed++;
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        const char *id = str(c, "id");
        if (!vector_selected(id)) {
            filtered++;
            continue;
        }
        executed++;
        run_case(doc, c, id ? id : "?");
    }
    int counted = vector_counts(file, total, executed, 0, filtered);
    check_hash(doc);
    cJSON_Delete(doc);
    if (failed || !counted) {
        fprintf(stderr, "supervision: %d failures\n", failed);
        return 1;
    }
    printf("supervision: ok\n");
    return 0;
}
