/* The worker-store migration through aic_contract_call: every vector of
 * vectors/worker-store-migration-v2.json (inputs read back, migrate to their records, which read
 * back; strict rejections refused with the TypeScript core's error), every case of
 * core/tests/data/worker_store_cases.json (each with the TypeScript core 0.2.0's outcome), and
 * the hash the core computes from the corpus. Values are compared as printed, so member order
 * counts. Prints executed and skipped (and, with AIC_VECTOR, filtered) counts.
 * Usage: worker_store [vectors-file [cases-file]] (defaults: the files, from the repository root). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_intercom.h"
#include "support.h"

#define PUBLISHED_HASH "dfc3680c3b085a0a7a53266abe309d5710a181b7831d2582998dd38e76dca2bf"

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

/* `boss.<op>` of one argument: the parsed answer {"ok":...} (free with cJSON_Delete), or NULL
 * when the call itself failed. */
static cJSON *call(const char *op, const cJSON *arg) {
    char name[128];
    snprintf(name, sizeof name, "boss.%s", op);
    cJSON *args = cJSON_CreateArray();
    cJSON_AddItemToArray(args, arg ? cJSON_Duplicate(arg, 1) : cJSON_CreateNull());
    char *text = cJSON_PrintUnformatted(args);
    cJSON_Delete(args);
    char *out = NULL;
    size_t len = 0;
    aic_error *err = NULL;
    aic_status st = aic_contract_call(name, strlen(name), text, strlen(text), &out, &len, &err);
    free(text);
    if (st != AIC_STATUS_OK) {
        aic_error_free(err);
        return NULL;
    }
    cJSON *answer = cJSON_ParseWithLength(out, len);
    aic_string_free(out);
    return answer;
}

static const cJSON *value_of(const cJSON *answer) {
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(answer, "ok");
    return cJSON_IsTrue(ok) ? cJSON_GetObjectItemCaseSensitive(answer, "value") : NULL;
}

/* Equal as printed: the same members in the same order. */
static int same_value(const cJSON *a, const cJSON *b) {
    if (!a || !b) return 0;
    char *x = cJSON_PrintUnformatted(a);
    char *y = cJSON_PrintUnformatted(b);
    int same = x && y && strcmp(x, y) == 0;
    free(x);
    free(y);
    return same;
}

/* Whether `answer` is a refusal with the class, path and message of `want`. */
static int refused_as(const cJSON *answer, const cJSON *want) {
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(answer, "error");
    return !value_of(answer) && error && same_text(str(error, "class"), str(want, "class")) &&
           same_text(str(error, "path"), str(want, "path")) &&
           same_text(str(error, "message"), str(want, "message"));
}

/* One call whose answer must be a value equal to `want`. */
static int answers(const char *op, const cJSON *arg, const cJSON *want) {
    cJSON *answer = call(op, arg);
    int ok = same_value(value_of(answer), want);
    cJSON_Delete(answer);
    return ok;
}

static void migration_vector(const cJSON *v, const char *name) {
    const cJSON *input = cJSON_GetObjectItemCaseSensitive(v, "input");
    const cJSON *expected = cJSON_GetObjectItemCaseSensitive(v, "expected");
    if (!answers("parseFullWorkerStoreMigrationInputV1", input, input))
        fail(name, "the input does not read back");
    if (!answers("migrateFullWorkerStoreV1", input, expected)) fail(name, "the migrated record differs");
    if (!answers("parseWorkerStoreRecordV2", expected, expected))
        fail(name, "the record does not read back");
}

static void rejection_vector(const cJSON *v, const cJSON *want, const char *name) {
    cJSON *answer = call("parseWorkerStoreRecordV2", cJSON_GetObjectItemCaseSensitive(v, "value"));
    if (!same_text(name, str(want, "name")) || !refused_as(answer, want)) {
        char *shown = answer ? cJSON_PrintUnformatted(answer) : NULL;
        fail(name, shown ? shown : "the call failed");
        free(shown);
    }
    cJSON_Delete(answer);
}

/* Runs the corpus; returns 1 when the counts add up. */
static int run_corpus(const char *path) {
    char *text = read_text(path);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *vectors = cJSON_GetObjectItemCaseSensitive(doc, "vectors");
    const cJSON *rejections = cJSON_GetObjectItemCaseSensitive(doc, "strictRejectionVectors");
    const cJSON *errors = cJSON_GetObjectItemCaseSensitive(doc, "strictRejectionErrors");
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(doc, "count");
    const cJSON *rejection_count = cJSON_GetObjectItemCaseSensitive(doc, "strictRejectionCount");
    int n = cJSON_GetArraySize(vectors), r = cJSON_GetArraySize(rejections);
    if (!cJSON_IsNumber(count) || count->valueint != n || n != 9 || !cJSON_IsNumber(rejection_count) ||
        rejection_count->valueint != r || r != 17 || cJSON_GetArraySize(errors) != r)
        fail(path, "the counts disagree");
    if (!same_text(str(doc, "semanticsHash"), PUBLISHED_HASH)) fail(path, "semanticsHash");
    int executed = 0, filtered = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, vectors) {
        const char *name = str(v, "name");
        if (!vector_selected(name)) {
            filtered++;
            continue;
        }
        executed++;
        migration_vector(v, name ? name : "?");
    }
    for (int i = 0; i < r; i++) {
        const cJSON *rv = cJSON_GetArrayItem(rejections, i);
        const char *name = str(rv, "name");
        if (!vector_selected(name)) {
            filtered++;
            continue;
        }
        executed++;
        rejection_vector(rv, cJSON_GetArrayItem(errors, i), name ? name : "?");
    }
    cJSON_Delete(doc);
    return vector_counts("worker-store-migration-v2.json", n + r, executed, 0, filtered);
}

/* The case's argument (a fresh value): `arg`, or `bases[base]` after `edits` ([path, value]
 * sets, keeping an existing key's place and appending a new one; [path] deletes). */
static cJSON *argument_of(const cJSON *doc, const cJSON *c) {
    const cJSON *arg = cJSON_GetObjectItemCaseSensitive(c, "arg");
    if (arg) return cJSON_Duplicate(arg, 1);
    const cJSON *bases = cJSON_GetObjectItemCaseSensitive(doc, "bases");
    cJSON *value = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(bases, str(c, "base")), 1);
    const cJSON *edit;
    cJSON_ArrayForEach(edit, cJSON_GetObjectItemCaseSensitive(c, "edits")) {
        const cJSON *path = cJSON_GetArrayItem(edit, 0);
        const cJSON *set = cJSON_GetArrayItem(edit, 1);
        int depth = cJSON_GetArraySize(path);
        cJSON *at = value;
        for (int i = 0; at && i < depth - 1; i++)
            at = cJSON_GetObjectItemCaseSensitive(at, cJSON_GetArrayItem(path, i)->valuestring);
        if (!at) break;
        const char *last = cJSON_GetArrayItem(path, depth - 1)->valuestring;
        if (!set) cJSON_DeleteItemFromObjectCaseSensitive(at, last);
        else if (cJSON_GetObjectItemCaseSensitive(at, last))
            cJSON_ReplaceItemInObjectCaseSensitive(at, last, cJSON_Duplicate(set, 1));
        else
            cJSON_AddItemToObject(at, last, cJSON_Duplicate(set, 1));
    }
    return value;
}

static void run_case(const cJSON *doc, const cJSON *c) {
    const char *id = str(c, "id");
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
    const char *kind = str(expect, "kind");
    cJSON *arg = argument_of(doc, c);
    cJSON *answer = call(str(c, "op"), arg);
    const cJSON *got = value_of(answer);
    int ok = 0;
    if (!kind || !answer) {
        ok = 0;
    } else if (strcmp(kind, "error") == 0) {
        ok = refused_as(answer, expect);
    } else if (strcmp(kind, "equal") == 0) {
        ok = same_value(got, arg);
    } else if (strcmp(kind, "valid") == 0) {
        ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(got, "ok")) &&
             same_text(str(got, "status"), "valid") &&
             same_value(cJSON_GetObjectItemCaseSensitive(got, "value"), arg);
    } else {
        ok = same_value(got, cJSON_GetObjectItemCaseSensitive(expect, "value"));
    }
    if (!ok) {
        char *shown = answer ? cJSON_PrintUnformatted(answer) : NULL;
        fail(id ? id : "?", shown ? shown : "the call failed");
        free(shown);
    }
    cJSON_Delete(answer);
    cJSON_Delete(arg);
}

static int run_cases(const char *path) {
    char *text = read_text(path);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(doc, "count");
    int total = cJSON_GetArraySize(list), executed = 0, filtered = 0;
    if (!cJSON_IsNumber(count) || count->valueint != total) fail(path, "count");
    const cJSON *c;
    cJSON_ArrayForEach(c, list) {
        if (!vector_selected(str(c, "id"))) {
            filtered++;
            continue;
        }
        executed++;
        run_case(doc, c);
    }
    cJSON_Delete(doc);
    return vector_counts("worker_store_cases.json", total, executed, 0, filtered);
}

/* The hash the core computes from its embedded corpus, and the constants that carry it. */
static void check_hash(void) {
    cJSON *answer = call("workerStoreMigrationVectors", NULL);
    if (!same_text(str(value_of(answer), "semanticsHash"), PUBLISHED_HASH))
        fail("workerStoreMigrationVectors", "semanticsHash");
    cJSON_Delete(answer);
    answer = call("constants", NULL);
    const cJSON *constants = value_of(answer);
    const cJSON *corpus = cJSON_GetObjectItemCaseSensitive(constants, "BOSS_RUN_FEATURE_SEMANTICS_CORPUS");
    if (!same_text(str(constants, "FULL_WORKER_STORE_MIGRATION_VECTORS_HASH"), PUBLISHED_HASH) ||
        !same_text(str(corpus, "fullWorkerStoreMigrationVectorsHash"), PUBLISHED_HASH) ||
        !same_text(str(constants, "FULL_WORKER_STORE_V2_RECORD_VERSION"), "orc.worker-store-record.v2"))
        fail("constants", "the worker-store constants");
    cJSON_Delete(answer);
}

int main(int argc, char **argv) {
    const char *vectors = argc > 1 ? argv[1] : "vectors/worker-store-migration-v2.json";
    const char *cases = argc > 2 ? argv[2] : "core/tests/data/worker_store_cases.json";
    int counted = run_corpus(vectors);
    counted &= run_cases(cases);
    check_hash();
    if (failed || !counted) {
        fprintf(stderr, "worker_store: %d failures\n", failed);
        return 1;
    }
    printf("worker_store: ok\n");
    return 0;
}
