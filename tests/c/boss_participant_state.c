/* Runs vectors/boss-participant-state-v1.json (every migration vector, every legacy stopping
 * reconciliation, the health event) and vectors/boss-participant-state-transition-v1.json (every
 * transition vector) through the C ABI (aic_contract_call), checks that the transition file's
 * tables are the core's and that the core's hashes of both files are the published ones, and
 * that refusals carry the contract's path and message. Prints executed and skipped (and, with
 * AIC_VECTOR, filtered) counts; exits non-zero on any failure or on any case that was none of
 * them. Usage: boss_participant_state [vectors-dir] */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_intercom.h"
#include "support.h"
#include "contract_json.h"

/* The arguments [a] or [a, b] (copies). */
static cJSON *args_of(const cJSON *a, const cJSON *b) {
    cJSON *args = cJSON_CreateArray();
    cJSON_AddItemToArray(args, cJSON_Duplicate(a, 1));
    if (b) cJSON_AddItemToArray(args, cJSON_Duplicate(b, 1));
    return args;
}

/* Records a failure unless `got` equals `want`. */
static void expect_same(const char *id, const char *what, const cJSON *got, const cJSON *want) {
    if (got && want && cJSON_Compare(got, want, 1)) return;
    char why[256];
    snprintf(why, sizeof why, "%s differs", what);
    fail(id, why);
}

/* op(a[, b]) must answer `want`. */
static void expect_answer(const char *id, const char *op, const cJSON *a, const cJSON *b,
                          const cJSON *want) {
    cJSON *answer = call(op, args_of(a, b));
    expect_same(id, op, value_of(answer), want);
    cJSON_Delete(answer);
}

static void migration_case(const cJSON *v, const char *id) {
    const cJSON *expected = get(v, "expected");
    cJSON *no = cJSON_CreateFalse();
    expect_answer(id, "boss.migrateLegacyWorkerRecordV1", get(v, "input"), NULL, expected);
    expect_answer(id, "boss.parseMigratedWorkerRecordV2", expected, NULL, expected);
    expect_answer(id, "boss.canDispatchMigratedWorker", expected, NULL, no);
    cJSON_Delete(no);
}

static void stopping_case(const cJSON *v, const char *id) {
    const cJSON *evidence = get(v, "evidence");
    cJSON *answer = call("boss.reconcileLegacyStoppingWorker", args_of(get(v, "pending"), evidence));
    const cJSON *settled = value_of(answer);
    if (!settled) {
        fail(id, "reconcileLegacyStoppingWorker refused");
        cJSON_Delete(answer);
        return;
    }
    cJSON *complete = cJSON_CreateString("complete");
    cJSON *no = cJSON_CreateFalse();
    expect_same(id, "state", get(settled, "state"), get(v, "expectedState"));
    expect_same(id, "reason", get(settled, "reason"), get(v, "expectedReason"));
    expect_same(id, "evidence", get(settled, "stoppingReconciliation"), evidence);
    expect_same(id, "migrationStatus", get(settled, "migrationStatus"), complete);
    expect_same(id, "readOnly", get(settled, "readOnly"), no);
    expect_same(id, "dispatchAllowed", get(settled, "dispatchAllowed"), no);
    expect_answer(id, "boss.parseMigratedWorkerRecordV2", settled, NULL, settled);
    cJSON_Delete(no);
    cJSON_Delete(complete);
    cJSON_Delete(answer);
}

static void transition_case(const cJSON *v, const char *id) {
    const cJSON *input = get(v, "input");
    cJSON *answer = call("boss.validateParticipantStateTransition", args_of(input, NULL));
    /* Accepted: ok, and no value (undefined). */
    if (!cJSON_IsTrue(get(answer, "ok")) || get(answer, "value")) fail(id, "not accepted");
    cJSON_Delete(answer);
    expect_answer(id, "boss.parseParticipantStateTransitionContextV1", input, NULL, input);
}

/* Counts of one file's cases. */
struct counts {
    int total, executed, filtered;
};

static void run_case(struct counts *c, const char *id, const cJSON *v,
                     void (*run)(const cJSON *, const char *)) {
    c->total++;
    if (!vector_selected(id)) {
        c->filtered++;
        return;
    }
    c->executed++;
    run(v, id);
}

/* Every vector of `key`, each with the id `<prefix><name>`. */
static void run_list(struct counts *c, const cJSON *doc, const char *key, const char *prefix,
                     void (*run)(const cJSON *, const char *)) {
    const cJSON *v;
    cJSON_ArrayForEach(v, get(doc, key)) {
        char id[512];
        const cJSON *name = get(v, "name");
        snprintf(id, sizeof id, "%s%s", prefix, cJSON_IsString(name) ? name->valuestring : "");
        run_case(c, id, v, run);
    }
}

static void health_case(const cJSON *v, const char *id) {
    expect_answer(id, "boss.parseParticipantHealthEventV1", v, NULL, v);
}

/* The file's `count` is its number of cases, and that is `expected`. */
static int counted(const char *file, const cJSON *doc, const struct counts *c, int expected) {
    const cJSON *count = get(doc, "count");
    if (!cJSON_IsNumber(count) || count->valueint != c->total || c->total != expected) {
        fprintf(stderr, "FAIL %s: %d cases, count field and expected %d disagree\n", file, c->total,
                expected);
        failed++;
    }
    return vector_counts(file, c->total, c->executed, 0, c->filtered);
}

static cJSON *load(const char *dir, const char *file) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *text = read_text(path);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    if (!doc) {
        fprintf(stderr, "%s: not JSON\n", path);
        exit(2);
    }
    return doc;
}

/* The core's hash of its embedded corpus, the file's known answer and the published digest
 * agree, and the core's corpus is the file. */
static void check_hash(const char *op, const cJSON *doc, const char *published) {
    cJSON *answer = call(op, cJSON_CreateArray());
    const cJSON *hash = get(value_of(answer), "semanticsHash");
    const cJSON *known = get(doc, "semanticsHash");
    if (!cJSON_IsString(hash) || strcmp(hash->valuestring, published) != 0 || !cJSON_IsString(known) ||
        strcmp(known->valuestring, published) != 0)
        fail(op, "semantics hash");
    expect_same(op, "corpus", get(value_of(answer), "corpus"), doc);
    cJSON_Delete(answer);
}

/* A refusal carries the contract's message. */
static void check_refusal(const char *op, const char *args, const char *message) {
    cJSON *answer = call(op, cJSON_Parse(args));
    const cJSON *got = get(get(answer, "error"), "message");
    if (!cJSON_IsString(got) || strcmp(got->valuestring, message) != 0) fail(op, message);
    cJSON_Delete(answer);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "vectors";
    const char *state_file = "boss-participant-state-v1.json";
    const char *transition_file = "boss-participant-state-transition-v1.json";
    cJSON *state = load(dir, state_file);
    cJSON *transition = load(dir, transition_file);

    struct counts s = {0, 0, 0};
    run_list(&s, state, "migrationVectors", "migration: ", migration_case);
    run_list(&s, state, "stoppingReconciliationVectors", "stopping: ", stopping_case);
    run_case(&s, "health event", get(state, "healthEvent"), health_case);
    int ok = counted(state_file, state, &s, 14);

    struct counts t = {0, 0, 0};
    run_list(&t, transition, "transitionVectors", "", transition_case);
    ok &= counted(transition_file, transition, &t, 12);

    check_hash("boss.participantStateVectors", state,
               "0da19269f0c2befd9b22b8d146d6bd30450f3f0d64598148fd9317f36a5fc920");
    check_hash("boss.participantStateTransitionVectors", transition,
               "143fb362364d0742df565e8a02f778a493007e799c429cec8468f38e6520c86a");

    cJSON *constants = call("boss.constants", cJSON_CreateArray());
    const cJSON *c = value_of(constants);
    expect_same("tables", "same-generation table", get(c, "PARTICIPANT_STATE_TRANSITION_TABLE"),
                get(transition, "sameGenerationTransitionTable"));
    expect_same("tables", "new-generation table", get(c, "PARTICIPANT_NEW_GENERATION_TRANSITIONS"),
                get(transition, "newGenerationTransitionTable"));
    cJSON_Delete(constants);

    check_refusal("boss.validateParticipantStateTransition",
                  "[{\"version\":1,\"previousState\":\"failed\",\"state\":\"lost\","
                  "\"previousWorkerGeneration\":4,\"workerGeneration\":4,"
                  "\"evidence\":{\"kind\":\"failure_observed\",\"evidenceId\":\"e\",\"outcome\":\"lost\"}}]",
                  "$.state: transition failed -> lost is not canonical for the current generation");
    check_refusal("boss.canDispatchParticipantState", "[\"newer-state\"]",
                  "$.state: must be one of: provisioning, registering, ready, working, waiting, "
                  "paused, stalled, blocked, failed, lost, unreachable, stopped");

    cJSON_Delete(state);
    cJSON_Delete(transition);
    if (failed || !ok) {
        fprintf(stderr, "boss_participant_state: %d failures\n", failed);
        return 1;
    }
    printf("boss_participant_state: ok\n");
    return 0;
}
