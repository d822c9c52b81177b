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

static int failed;

static void fail(const char *name, const char *why) {
    failed++;
    fprintf(stderr, "FAIL %s: %s\n", name, why);
}

/* The parsed answer of `op` over `args` (a JSON array text); NULL when the call itself failed. */
static cJSON *call(const char *op, const char *args) {
    char *out = NULL;
    size_t len = 0;
    aic_error *err = NULL;
    aic_status status = aic_contract_call(op, strlen(op), args, strlen(args), &out, &len, &err);
    if (status != AIC_STATUS_OK) {
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

static void run_case(const cJSON *c) {
    const char *id = str(c, "id");
    char op[256];
    snprintf(op, sizeof op, "boss.%s", str(c, "op"));
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(c, "args");
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
    char *args_text = cJSON_PrintUnformatted(args);
    cJSON *answer = call(op, args_text);
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

/* The five enumerations, with their lengths and first members, from boss.constants. */
static void constants(void) {
    cJSON *answer = call("boss.constants", "[]");
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
            cJSON *answer = call(ops[i], inputs[j]);
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
    int counted = vector_counts("boss_authority_cases.json", total, executed, 0, filtered);
    constants();
    gates_never_fail();
    if (failed || !counted) {
        fprintf(stderr, "boss_authority: %d failures\n", failed);
        return 1;
    }
    printf("boss_authority: ok\n");
    return 0;
}
