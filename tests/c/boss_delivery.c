/* ./boss delivery operations (lifecycle notices, equivalence keys, group assembly, group,
 * claim, ingress and target-ledger records, their store validators) through aic_contract_call:
 * every case of core/tests/data/boss_delivery_cases.json (each case's outcome as the TypeScript
 * core 0.2.0 gives it), the golden ids, the constants, and a store result's own version. Prints
 * executed and skipped (and, with AIC_VECTOR, filtered) counts.
 * Usage: boss_delivery [cases-file] (default: the file, from the repository root). */
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

/* The parsed answer of `op` over `args` (a JSON array text); NULL when the call itself failed. */
static cJSON *call(const char *op, const char *args, aic_status *status) {
    char *out = NULL;
    size_t len = 0;
    aic_error *err = NULL;
    *status = aic_contract_call(op, strlen(op), args, strlen(args), &out, &len, &err);
    if (*status != AIC_STATUS_OK) {
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
    aic_status status;
    cJSON *answer = call(op, args_text, &status);
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

/* The string value of an operation that answers one. */
static void expect_value(const char *name, const char *op, const char *args, const char *want) {
    aic_status status;
    cJSON *answer = call(op, args, &status);
    const char *got = answer ? str(answer, "value") : NULL;
    if (!got || strcmp(got, want) != 0) fail(name, got ? got : "no string value");
    cJSON_Delete(answer);
}

static void golden_ids(void) {
    expect_value("deliveryGroupId", "boss.deliveryGroupId",
                 "[{\"recipientPrincipalId\":\"manager\",\"recipientBindingEpoch\":1,"
                 "\"sourceAuthorityId\":{\"kind\":\"controller\",\"bossRunId\":\"authority\",\"controllerGeneration\":1},"
                 "\"bossRunId\":\"authority\",\"sourceEventId\":\"event-1\",\"workerId\":\"worker-1\",\"workerGeneration\":1,"
                 "\"transitionId\":\"transition-1\",\"transitionVersion\":1}]",
                 "abdd8505f7e4233142db8e3049ef0c0c33f0f8f039764a3aeed554602dbbb748");
    expect_value("lifecycleNoticeId", "boss.lifecycleNoticeId",
                 "[{\"workerId\":\"worker-a\",\"workerGeneration\":6,\"transitionId\":\"turn-settled-9\","
                 "\"transitionVersion\":1,\"kind\":\"turn_settled\",\"assignmentId\":\"assignment-1\"}]",
                 "62a55d55fc11518e0ac6eedc485a9224493664f1e47022cb5ed2708ad68401cb");
    expect_value("effectiveDeliveryIntent", "boss.effectiveDeliveryIntent", "[[\"status_only\",\"follow_up\"]]", "follow_up");
}

static void constants(void) {
    aic_status status;
    cJSON *answer = call("boss.constants", "[]", &status);
    const cJSON *all = answer ? cJSON_GetObjectItemCaseSensitive(answer, "value") : NULL;
    if (!same_text(all ? str(all, "LIFECYCLE_NOTICE_VERSION") : NULL, "orc.lifecycle-notice.v1")) fail("constants", "LIFECYCLE_NOTICE_VERSION");
    const cJSON *states = all ? cJSON_GetObjectItemCaseSensitive(all, "DELIVERY_GROUP_STATES") : NULL;
    if (!cJSON_IsArray(states) || cJSON_GetArraySize(states) != 7) fail("constants", "DELIVERY_GROUP_STATES");
    cJSON_Delete(answer);
}

/* A store failure names the record's own version (not the placeholder null). */
static void store_versions(void) {
    aic_status status;
    cJSON *answer = call("boss.validateTargetLedgerStore", "[{\"version\":\"orc.target-ledger-result.v9\"}]", &status);
    const cJSON *value = answer ? cJSON_GetObjectItemCaseSensitive(answer, "value") : NULL;
    if (!value || !same_text(str(value, "status"), "unsupported_newer_version") ||
        !same_text(str(value, "observedVersion"), "orc.target-ledger-result.v9")) {
        fail("store version", "observedVersion is not the record's");
    }
    cJSON_Delete(answer);
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "core/tests/data/boss_delivery_cases.json";
    char *text = read_text(path);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *cases = doc ? cJSON_GetObjectItemCaseSensitive(doc, "cases") : NULL;
    if (!cJSON_IsArray(cases)) {
        fprintf(stderr, "%s: no cases\n", path);
        return 2;
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
    int counted = vector_counts("boss_delivery_cases.json", total, executed, 0, filtered);
    golden_ids();
    constants();
    store_versions();
    if (failed || !counted) {
        fprintf(stderr, "boss_delivery: %d failures\n", failed);
        return 1;
    }
    printf("boss_delivery: ok\n");
    return 0;
}
