/* ./boss wire, service, participant-state and worker-identity operations through
 * aic_contract_call: every case of core/tests/data/boss_wire_cases.json (each case's outcome as
 * the TypeScript core 0.2.0 gives it), the computed hashes against the published values, and
 * misuse of the call itself. Prints executed and skipped (and, with AIC_VECTOR, filtered)
 * counts. Usage: boss_wire [cases-file] (default: the file, from the repository root). */
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

static void computed_hashes(void) {
    aic_status status;
    cJSON *constants = call("boss.constants", "[]", &status);
    const cJSON *all = constants ? cJSON_GetObjectItemCaseSensitive(constants, "value") : NULL;
    struct { const char *name, *published; } hashes[] = {
        {"BOSS_RUN_FEATURE_SEMANTICS_HASH", "8943eb60d29afa5264322b5cc7df3de245b01b1cf48a8cbf9cfb6188b02fcfa9"},
        {"BOSS_RUN_PROTOCOL_FEATURE_CONTRACT_HASH", "dae30efe2c48d2de0fe72a7ebdfd107d3feaefc180d42056ba05df6088a94364"},
        {"BOSS_CAPABILITY_FEATURE_DIGEST", "239bee8bb64cc8c149d49ac00c7396f33f375a89a1d6dea6bd86ff840d551a59"},
    };
    for (size_t i = 0; i < sizeof hashes / sizeof hashes[0]; i++) {
        if (!same_text(all ? str(all, hashes[i].name) : NULL, hashes[i].published)) fail(hashes[i].name, "differs from the published value");
    }
    cJSON_Delete(constants);
    expect_value("feature set []", "boss.brokerFeatureSetHash", "[[]]",
                 "0423394d55ed9769cfd7d71a0177a094d6a3962175885ec84a1ce5d77938ba70");
}

static void misuse(void) {
    aic_status status;
    cJSON *answer = call("boss.noSuchOperation", "[]", &status);
    if (answer || status != AIC_STATUS_INVALID_ARGUMENT) fail("unknown operation", "not AIC_INVALID_ARGUMENT");
    cJSON_Delete(answer);
    answer = call("boss.parseBossControlEnvelope", "{", &status);
    if (answer || status != AIC_STATUS_INVALID_JSON) fail("bad arguments", "not AIC_INVALID_JSON");
    cJSON_Delete(answer);
    /* A decision function answers for any input, even none. */
    answer = call("boss.evaluateBrokerCompatibility", "[]", &status);
    const cJSON *value = answer ? cJSON_GetObjectItemCaseSensitive(answer, "value") : NULL;
    if (!value || !same_text(str(value, "code"), "INVALID_COMPATIBILITY_REQUEST")) fail("evaluate []", "no refusal");
    cJSON_Delete(answer);
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "core/tests/data/boss_wire_cases.json";
    int counted = run_case_file(path, "boss_wire_cases.json");
    if (counted < 0) return 2;
    computed_hashes();
    misuse();
    if (failed || !counted) {
        fprintf(stderr, "boss_wire: %d failures\n", failed);
        return 1;
    }
    printf("boss_wire: ok\n");
    return 0;
}
