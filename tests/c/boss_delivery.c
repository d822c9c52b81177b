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

#include "outcome_cases.h"

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
    int counted = run_case_file(path, "boss_delivery_cases.json");
    if (counted < 0) return 2;
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
