/* ./boss credential registry, credential use, credential audit, authority transition and store
 * gate operations through aic_contract_call: every case of
 * core/tests/data/boss_authority_cases.json (each case's outcome as the TypeScript core 0.2.0
 * gives it), the constants, and the store gates' answers for inputs that are no record at all.
 * Prints executed and skipped (and, with AIC_VECTOR, filtered) counts.
 * Usage: boss_authority [cases-file] (default: the file, from the repository root). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_intercom.h"
#include "support.h"

#include "outcome_cases.h"

/* The five enumerations, with their lengths and first members, from boss.constants. */
static void constants(void) {
    cJSON *answer = call("boss.constants", "[]", NULL);
    const cJSON *all = answer ? cJSON_GetObjectItemCaseSensitive(answer, "value") : NULL;
    struct { const char *name, *first; int count; } lists[] = {
        {"BOSS_CREDENTIAL_STATES", "issued", 4},
        {"BOSS_CREDENTIAL_AUDIT_OPERATIONS", "issue", 6},
        {"AUTHORITY_TRANSITION_OPERATIONS", "bind_boss", 11},
        {"AUTHORITY_TRANSITION_STATES", "prepared", 3},
        {"AUTHORITY_REQUEST_OPERATIONS", "prepare", 4},
    };
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        const cJSON *list = all ? cJSON_GetObjectItemCaseSensitive(all, lists[i].name) : NULL;
        const cJSON *first = cJSON_GetArrayItem(list, 0);
        if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) != lists[i].count || !cJSON_IsString(first) ||
            strcmp(first->valuestring, lists[i].first) != 0) {
            fail(lists[i].name, "missing or different");
        }
    }
    cJSON_Delete(answer);
}

/* A store gate answers a result for anything, even no argument. */
static void gates_never_fail(void) {
    const char *ops[] = {"boss.validateBossParticipantBindingStore", "boss.validateBossCredentialDigestStore",
                         "boss.validateAuthorityTransitionStore", "boss.validateAuthorityEventStore"};
    const char *inputs[] = {"[]", "[1]", "[{\"version\":true}]", "[[{\"version\":1}]]"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        for (size_t j = 0; j < sizeof inputs / sizeof inputs[0]; j++) {
            cJSON *answer = call(ops[i], inputs[j], NULL);
            const cJSON *value = answer ? cJSON_GetObjectItemCaseSensitive(answer, "value") : NULL;
            const cJSON *ok = value ? cJSON_GetObjectItemCaseSensitive(value, "ok") : NULL;
            const cJSON *keep = value ? cJSON_GetObjectItemCaseSensitive(value, "preserveExisting") : NULL;
            if (!cJSON_IsFalse(ok) || !cJSON_IsTrue(keep)) fail(ops[i], inputs[j]);
            cJSON_Delete(answer);
        }
    }
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "core/tests/data/boss_authority_cases.json";
    int counted = run_case_file(path, "boss_authority_cases.json");
    if (counted < 0) return 2;
    constants();
    gates_never_fail();
    if (failed || !counted) {
        fprintf(stderr, "boss_authority: %d failures\n", failed);
        return 1;
    }
    printf("boss_authority: ok\n");
    return 0;
}
