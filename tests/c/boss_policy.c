/* Runs vectors/boss-policy-v1.json and vectors/feature-routing-v1.json through the C ABI
 * (aic_contract_call): every Boss policy vector against the state boss.bossPolicyStateForVector
 * builds, every feature-routing vector as the scenario boss.featureRoutingCaseForVector builds.
 * Prints executed and skipped (and, with AIC_VECTOR, filtered) counts; exits non-zero on any
 * failure or on any vector that was none of them. Usage: boss_policy [vectors-dir] */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_intercom.h"
#include "support.h"

static int failed;

static const char *str(const cJSON *obj, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

static void fail(const char *name, const char *why) {
    failed++;
    fprintf(stderr, "FAIL %s: %s\n", name, why);
}

/* Calls `op` with the JSON array `args` (consumed); returns the parsed answer
 * {"ok":...} (free with cJSON_Delete), or NULL when the call itself failed. */
static cJSON *call(const char *op, cJSON *args) {
    char *text = cJSON_PrintUnformatted(args);
    cJSON_Delete(args);
    char *out = NULL;
    size_t out_len = 0;
    aic_error *err = NULL;
    aic_status st = aic_contract_call(op, strlen(op), text, strlen(text), &out, &out_len, &err);
    free(text);
    if (st != AIC_STATUS_OK) {
        aic_error_free(err);
        return NULL;
    }
    cJSON *answer = cJSON_ParseWithLength(out, out_len);
    aic_string_free(out);
    return answer;
}

static cJSON *value_of(cJSON *answer) {
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(answer, "ok");
    return cJSON_IsTrue(ok) ? cJSON_GetObjectItemCaseSensitive(answer, "value") : NULL;
}

static cJSON *dup_or_null(const cJSON *v) {
    return v ? cJSON_Duplicate(v, 1) : NULL;
}

static void boss_vector(const cJSON *v, const char *name) {
    cJSON *args = cJSON_CreateArray();
    cJSON_AddItemToArray(args, cJSON_Duplicate(v, 1));
    cJSON *state_answer = call("boss.bossPolicyStateForVector", args);
    cJSON *state = value_of(state_answer);
    if (!state) {
        fail(name, "no state");
        cJSON_Delete(state_answer);
        return;
    }
    args = cJSON_CreateArray();
    cJSON_AddItemToArray(args, cJSON_Duplicate(state, 1));
    const char *keys[] = {"actorId", "action", "targetId", "context"};
    for (size_t i = 0; i < 4; i++) {
        cJSON *item = dup_or_null(cJSON_GetObjectItemCaseSensitive(v, keys[i]));
        /* An absent context is left off: the call sees it undefined. */
        if (item) cJSON_AddItemToArray(args, item);
        else if (i < 3) cJSON_AddItemToArray(args, cJSON_CreateNull());
    }
    cJSON_Delete(state_answer);
    cJSON *answer = call("boss.authorizeBossPolicy", args);
    cJSON *decision = value_of(answer);
    const cJSON *allowed = cJSON_GetObjectItemCaseSensitive(decision, "allowed");
    const char *got = str(decision, cJSON_IsTrue(allowed) ? "reason" : "code");
    const cJSON *want_allowed = cJSON_GetObjectItemCaseSensitive(v, "expectedAllowed");
    const char *want = str(v, "expectedReasonOrCode");
    if (!decision || !got || !want || cJSON_IsTrue(allowed) != cJSON_IsTrue(want_allowed) ||
        strcmp(got, want) != 0) {
        char why[256];
        snprintf(why, sizeof why, "expected %s, got %s", want ? want : "?", got ? got : "?");
        fail(name, why);
    }
    cJSON_Delete(answer);
}

static void routing_vector(const cJSON *v, const char *name) {
    cJSON *args = cJSON_CreateArray();
    cJSON_AddItemToArray(args, cJSON_Duplicate(v, 1));
    cJSON *case_answer = call("boss.featureRoutingCaseForVector", args);
    cJSON *scenario = value_of(case_answer);
    const char *entry = str(scenario, "entryPoint");
    const cJSON *expected = cJSON_GetObjectItemCaseSensitive(scenario, "expected");
    if (!entry || !expected) {
        fail(name, "no scenario");
        cJSON_Delete(case_answer);
        return;
    }
    char op[64];
    snprintf(op, sizeof op, "boss.%s", entry);
    cJSON *answer = call(op, cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(scenario, "args"), 1));
    const char *throws = str(expected, "throws");
    cJSON *decision = value_of(answer);
    int ok;
    if (throws) {
        const cJSON *error = cJSON_GetObjectItemCaseSensitive(answer, "error");
        ok = !decision && str(error, "class") && strcmp(str(error, "class"), throws) == 0;
    } else {
        const cJSON *allowed = cJSON_GetObjectItemCaseSensitive(decision, "allowed");
        const cJSON *want = cJSON_GetObjectItemCaseSensitive(expected, "allowed");
        ok = decision && cJSON_IsTrue(allowed) == cJSON_IsTrue(want);
        const char *key = cJSON_IsTrue(allowed) ? "reason" : "code";
        if (ok && str(expected, key))
            ok = str(decision, key) && strcmp(str(decision, key), str(expected, key)) == 0;
    }
    if (!ok) {
        char *shown = answer ? cJSON_PrintUnformatted(answer) : NULL;
        fail(name, shown ? shown : "the call failed");
        free(shown);
    }
    cJSON_Delete(answer);
    cJSON_Delete(case_answer);
}

/* Runs every vector of one file; returns 1 when the counts add up. */
static int run_file(const char *dir, const char *file, int expected_count,
                    void (*run)(const cJSON *, const char *)) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *text = read_text(path);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "vectors");
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(doc, "count");
    int total = cJSON_GetArraySize(list), executed = 0, filtered = 0;
    if (!cJSON_IsNumber(count) || count->valueint != total || total != expected_count) {
        fprintf(stderr, "FAIL %s: %d vectors, count field and expected %d disagree\n", file, total,
                expected_count);
        failed++;
    }
    const cJSON *v;
    cJSON_ArrayForEach(v, list) {
        const char *name = str(v, "name");
        if (!vector_selected(name)) {
            filtered++;
            continue;
        }
        executed++;
        run(v, name ? name : "?");
    }
    cJSON_Delete(doc);
    return vector_counts(file, total, executed, 0, filtered);
}

/* The hashes the core computes from its embedded corpora, as the Node module reads them. */
static void check_hash(const char *op, const char *want) {
    cJSON *answer = call(op, cJSON_CreateArray());
    const char *got = str(value_of(answer), "semanticsHash");
    if (!got || strcmp(got, want) != 0) fail(op, "semantics hash");
    cJSON_Delete(answer);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "vectors";
    int counted = run_file(dir, "boss-policy-v1.json", 523, boss_vector);
    counted &= run_file(dir, "feature-routing-v1.json", 45, routing_vector);
    check_hash("boss.policyVectors",
               "5fe94cc2c81bba8b50c6d6cd31487231ebfa10ee2d05495c2b088b12e2958dfa");
    check_hash("boss.featureRoutingVectors",
               "e8ddde569a188a122b6ba0e257e23ba203bbf0897dcb3c84994be3390e26e63f");
    /* A malformed principal fails with the contract's class and message. */
    cJSON *args = cJSON_Parse("[{\"version\":\"v0\"}]");
    cJSON *answer = call("boss.parseBossPolicyPrincipal", args);
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(answer, "error");
    const char *message = str(error, "message");
    if (!message || strcmp(message, "$.version: unsupported version: v0") != 0)
        fail("parseBossPolicyPrincipal", "message");
    cJSON_Delete(answer);
    if (failed || !counted) {
        fprintf(stderr, "boss_policy: %d failures\n", failed);
        return 1;
    }
    printf("boss_policy: ok\n");
    return 0;
}
