/* Runs vectors/policy-v2.json, the policy kernel's golden vectors, through aic_contract_call:
 * policy.stateForVector builds each vector's state, policy.authorize decides, and the decision
 * must be the one the vector expects. Then the constants (the hash the core computes from its
 * embedded corpus), the transitions and the refusals. Prints executed, skipped (and, with
 * AIC_VECTOR, filtered) counts; exits non-zero on any failure or on any case that was none of
 * them. Usage: policy <vectors-dir> */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_intercom.h"
#include "support.h"

#define PUBLISHED_HASH "f3b00e503631bc91123aedfbcf1df72cc9913e1893c09728b2c598f3dcdfdfe0"

static int passed, failed;

static void check(int ok, const char *name, const char *why) {
    if (ok) passed++;
    else { failed++; fprintf(stderr, "FAIL %s: %s\n", name, why ? why : ""); }
}

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static int is(const cJSON *v, const char *text) { return cJSON_IsString(v) && strcmp(v->valuestring, text) == 0; }

/* Calls `op` over the JSON array `args` (consumed); returns the parsed answer object (or NULL
 * when the call itself failed, with `why` set). */
static cJSON *call(const char *op, cJSON *args, char *why, size_t why_len) {
    char *text = cJSON_PrintUnformatted(args);
    cJSON_Delete(args);
    char *out = NULL;
    size_t len = 0;
    aic_error *err = NULL;
    aic_status st = aic_contract_call(op, strlen(op), text, strlen(text), &out, &len, &err);
    cJSON *answer = st == AIC_STATUS_OK ? cJSON_ParseWithLength(out, len) : NULL;
    if (st != AIC_STATUS_OK) snprintf(why, why_len, "%s: %s: %s", op, aic_status_name(st), aic_error_message(err));
    else if (!answer) snprintf(why, why_len, "%s: unparsable answer %s", op, out);
    aic_string_free(out);
    aic_error_free(err);
    cJSON_free(text);
    return answer;
}

/* The value of a successful answer (owned by `answer`), or NULL with `why` set. */
static const cJSON *value_of(const cJSON *answer, const char *op, char *why, size_t why_len) {
    if (!answer) return NULL;
    if (!cJSON_IsTrue(get(answer, "ok"))) {
        const cJSON *message = get(get(answer, "error"), "message");
        snprintf(why, why_len, "%s refused: %s", op, cJSON_IsString(message) ? message->valuestring : "?");
        return NULL;
    }
    return get(answer, "value");
}

/* Runs one vector; returns 1 when the decision is the expected one, else 0 with `why`. */
static int run_vector(const cJSON *v, char *why, size_t why_len) {
    cJSON *args = cJSON_CreateArray();
    cJSON_AddItemToArray(args, cJSON_Duplicate(v, 1));
    cJSON *state_answer = call("policy.stateForVector", args, why, why_len);
    const cJSON *state = value_of(state_answer, "policy.stateForVector", why, why_len);
    int ok = 0;
    if (state) {
        args = cJSON_CreateArray();
        cJSON_AddItemToArray(args, cJSON_Duplicate(state, 1));
        const char *keys[] = {"actorId", "action", "targetId", "context"};
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
            if (get(v, keys[i])) cJSON_AddItemToArray(args, cJSON_Duplicate(get(v, keys[i]), 1));
        cJSON *answer = call("policy.authorize", args, why, why_len);
        const cJSON *decision = value_of(answer, "policy.authorize", why, why_len);
        if (decision) {
            int allowed = cJSON_IsTrue(get(decision, "allowed"));
            const cJSON *label = get(decision, allowed ? "reason" : "code");
            const cJSON *want = get(v, "expectedReasonOrCode");
            ok = allowed == cJSON_IsTrue(get(v, "expectedAllowed")) && cJSON_IsString(label) &&
                 cJSON_IsString(want) && strcmp(label->valuestring, want->valuestring) == 0 &&
                 cJSON_GetArraySize(decision) == 2;
            if (!ok) {
                char *got = cJSON_PrintUnformatted(decision);
                snprintf(why, why_len, "expected %s, got %s", cJSON_IsString(want) ? want->valuestring : "?", got);
                cJSON_free(got);
            }
        }
        cJSON_Delete(answer);
    }
    cJSON_Delete(state_answer);
    return ok;
}

static void run_vectors(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/policy-v2.json", dir);
    char *text = read_text(path);
    cJSON *doc = cJSON_Parse(text);
    if (!doc) { check(0, "policy-v2.json", "cannot parse"); free(text); return; }
    check(cJSON_IsNumber(get(doc, "version")) && get(doc, "version")->valueint == 2, "policy-v2.json", "version 2");
    const cJSON *vectors = get(doc, "vectors"), *v;
    int total = cJSON_GetArraySize(vectors), executed = 0, skipped = 0, filtered = 0;
    cJSON_ArrayForEach(v, vectors) {
        const cJSON *name = get(v, "name");
        if (!cJSON_IsString(name)) { check(0, "?", "a vector without a name"); continue; }
        if (!vector_selected(name->valuestring)) { filtered++; continue; }
        /* Every policy vector is a pure decision: none is skipped. */
        executed++;
        char why[1024] = "";
        check(run_vector(v, why, sizeof why), name->valuestring, why);
    }
    if (!vector_counts("policy-v2.json", total, executed, skipped, filtered)) failed++;
    if (!vector_filter()) check(executed == 12 && skipped == 0, "policy-v2.json", "12 executed, 0 skipped");

    /* The runner itself: an edited expectation is reported, not passed. */
    const cJSON *first = cJSON_GetArrayItem(vectors, 0);
    if (first) {
        cJSON *edited = cJSON_Duplicate(first, 1);
        cJSON_ReplaceItemInObjectCaseSensitive(edited, "expectedReasonOrCode", cJSON_CreateString("self"));
        char why[1024] = "";
        check(!run_vector(edited, why, sizeof why) && strstr(why, "expected self") != NULL, "runner self-check", why);
        cJSON_Delete(edited);
    }

    /* The constants: the hash the core computed from the corpus it embeds, which is this file. */
    char why[1024] = "";
    cJSON *answer = call("policy.constants", cJSON_CreateArray(), why, sizeof why);
    const cJSON *constants = value_of(answer, "policy.constants", why, sizeof why);
    check(constants && is(get(constants, "POLICY_SEMANTICS_HASH"), PUBLISHED_HASH), "POLICY_SEMANTICS_HASH", why);
    check(constants && get(constants, "POLICY_SEMANTICS_VERSION")->valueint == 2 &&
              get(constants, "POLICY_VECTOR_SCHEMA_VERSION")->valueint == 2,
          "versions", why);
    check(constants && cJSON_Compare(get(constants, "corpus"), doc, 1), "the embedded corpus is the file", why);
    cJSON_Delete(answer);
    cJSON_Delete(doc);
    free(text);
}

#define HIERARCHY                                                                                  \
    "{\"principals\":{"                                                                            \
    "\"root\":{\"id\":\"root\",\"kind\":\"local\",\"state\":\"active\",\"generation\":1,"          \
    "\"policy\":\"local-public\",\"rootSessionId\":\"root\"},"                                     \
    "\"lead\":{\"id\":\"lead\",\"kind\":\"remote\",\"state\":\"active\",\"generation\":1,"         \
    "\"policy\":\"remote-tree\",\"parentSessionId\":\"root\",\"rootSessionId\":\"root\"},"         \
    "\"worker\":{\"id\":\"worker\",\"kind\":\"remote\",\"state\":\"active\",\"generation\":1,"     \
    "\"policy\":\"remote-tree\",\"parentSessionId\":\"lead\",\"rootSessionId\":\"root\"}}}"

/* Calls `op` over `args` (JSON text) and checks that the answer contains `want`. */
static void answers(const char *op, const char *args, const char *want) {
    char *out = NULL;
    size_t len = 0;
    aic_error *err = NULL;
    aic_status st = aic_contract_call(op, strlen(op), args, strlen(args), &out, &len, &err);
    int ok = st == AIC_STATUS_OK && out && len == strlen(out) && strstr(out, want) != NULL;
    char why[2048];
    snprintf(why, sizeof why, "%s -> %s (want %s)", op, out ? out : aic_error_message(err), want);
    check(ok, op, why);
    aic_string_free(out);
    aic_error_free(err);
}

static void transitions_and_refusals(void) {
    answers("policy.revokeSubtree", "[" HIERARCHY ",\"lead\"]", "\"changedPrincipalIds\":[\"lead\",\"worker\"]");
    answers("policy.revokeSubtree", "[" HIERARCHY ",\"lead\"]",
            "\"worker\":{\"id\":\"worker\",\"kind\":\"remote\",\"state\":\"revoked\",\"generation\":2");
    answers("policy.adoptSubtree", "[" HIERARCHY ",\"worker\",\"root\",\"root\"]",
            "\"changedPrincipalIds\":[\"worker\"]");
    answers("policy.adoptSubtree", "[" HIERARCHY ",\"lead\",\"worker\",\"root\"]",
            "{\"ok\":false,\"error\":{\"class\":\"Error\",\"message\":\"Adoption would create an ownership cycle\"");
    answers("policy.adoptSubtree", "[" HIERARCHY ",\"ghost\",\"root\",\"root\"]",
            "\"message\":\"Unknown principal: ghost\"");
    answers("policy.isAncestor", "[" HIERARCHY ",\"root\",\"worker\"]", "{\"ok\":true,\"value\":true}");
    answers("policy.isAncestor", "[" HIERARCHY ",\"worker\",\"root\"]", "{\"ok\":true,\"value\":false}");
    answers("policy.authorize", "[" HIERARCHY ",\"worker\",\"send\",\"root\",{\"targetGeneration\":2}]",
            "{\"allowed\":false,\"code\":\"STALE_GENERATION\"}");
    answers("policy.authorize", "[" HIERARCHY ",\"worker\",\"send\",\"root\"]",
            "{\"allowed\":true,\"reason\":\"ancestor-chain\"}");
    answers("policy.authorize", "[{\"principals\":{}},\"toString\",\"send\",\"toString\"]",
            "\"code\":\"UNKNOWN_PRINCIPAL\"");
    answers("policy.authorize", "[null,\"a\",\"send\",\"b\"]",
            "\"class\":\"ContractValidationError\",\"message\":\"$.state: must be a plain object\"");
    answers("policy.authorize", "[" HIERARCHY ",\"root\",\"send\",\"root\",null]",
            "\"message\":\"$.context: must be a plain object\"");

    const char op[] = "policy.authorize";
    char *out = NULL;
    aic_status st = aic_contract_call(op, strlen(op), "{}", 2, &out, NULL, NULL);
    check(st == AIC_STATUS_INVALID_ARGUMENT && out == NULL, "arguments not an array", aic_status_name(st));
    st = aic_contract_call("policy.nothing", 14, "[]", 2, &out, NULL, NULL);
    check(st == AIC_STATUS_INVALID_ARGUMENT && out == NULL, "unknown operation", aic_status_name(st));
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "vectors";
    run_vectors(dir);
    transitions_and_refusals();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
