/* Runs vectors/asks-v1.json through aic_check_ask_json: each case's edges, send and maxOpenAsks
 * go in as JSON, and the answer must equal the case's expected. Then the export's error paths.
 * Prints executed, skipped (and, with AIC_VECTOR, filtered) counts; exits non-zero on any
 * failure or on any case that was none of them. Usage: asks <vectors-dir> */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_intercom.h"
#include "support.h"

static int passed, failed;

static void check(int ok, const char *name, const char *why) {
    if (ok) passed++;
    else { failed++; fprintf(stderr, "FAIL %s: %s\n", name, why ? why : ""); }
}

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* Runs one "check" case; returns 1 when the answer is the expected one, else 0 with `why`. */
static int run_case(const cJSON *c, char *why, size_t why_len) {
    cJSON *input = cJSON_CreateObject();
    const char *keys[] = {"edges", "send", "maxOpenAsks"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (get(c, keys[i])) cJSON_AddItemToObject(input, keys[i], cJSON_Duplicate(get(c, keys[i]), 1));
    char *text = cJSON_PrintUnformatted(input);
    char *out = NULL;
    size_t len = 0;
    aic_error *err = NULL;
    aic_status st = aic_check_ask_json(text, strlen(text), &out, &len, &err);
    cJSON *answer = st == AIC_STATUS_OK ? cJSON_ParseWithLength(out, len) : NULL;
    int ok = answer && len == strlen(out) && cJSON_Compare(answer, get(c, "expected"), 1);
    if (st != AIC_STATUS_OK) snprintf(why, why_len, "%s: %s", aic_status_name(st), aic_error_message(err));
    else if (!ok) {
        char *want = cJSON_PrintUnformatted(get(c, "expected"));
        snprintf(why, why_len, "expected %s, got %s", want ? want : "(none)", out);
        cJSON_free(want);
    }
    cJSON_Delete(answer);
    aic_string_free(out);
    aic_error_free(err);
    cJSON_free(text);
    cJSON_Delete(input);
    return ok;
}

static void run_vectors(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/asks-v1.json", dir);
    char *text = read_text(path);
    cJSON *doc = cJSON_Parse(text);
    if (!doc) { check(0, "asks-v1.json", "cannot parse"); free(text); return; }
    const cJSON *cases = get(doc, "cases"), *c;
    int total = cJSON_GetArraySize(cases), executed = 0, skipped = 0, filtered = 0;
    check(cJSON_IsString(get(doc, "corpus")) && strcmp(get(doc, "corpus")->valuestring, "agent-intercom/asks-v1") == 0 &&
              cJSON_IsNumber(get(doc, "version")) && get(doc, "version")->valueint == 1,
          "asks-v1.json", "corpus and version");
    check(cJSON_IsNumber(get(doc, "count")) && get(doc, "count")->valueint == total, "asks-v1.json", "count field");
    cJSON_ArrayForEach(c, cases) {
        const cJSON *id = get(c, "id"), *kind = get(c, "kind");
        if (!cJSON_IsString(id)) { check(0, "?", "a case without an id"); continue; }
        if (!vector_selected(id->valuestring)) { filtered++; continue; }
        if (!cJSON_IsString(kind) || strcmp(kind->valuestring, "check") != 0) {
            check(0, id->valuestring, "unknown kind: neither executed nor skipped");
            continue;
        }
        executed++;
        char why[1024] = "";
        check(run_case(c, why, sizeof why), id->valuestring, why);
    }
    if (!vector_counts("asks-v1.json", total, executed, skipped, filtered)) failed++;

    /* The runner itself: an edited expectation is reported, not passed. */
    const cJSON *first = cJSON_GetArrayItem(cases, 0);
    if (first) {
        cJSON *edited = cJSON_Duplicate(first, 1);
        cJSON_ReplaceItemInObjectCaseSensitive(edited, "expected", cJSON_Parse("{\"refused\":\"MUTUAL_ASK\"}"));
        char why[1024] = "";
        check(!run_case(edited, why, sizeof why) && strstr(why, "expected") != NULL, "runner self-check", why);
        cJSON_Delete(edited);
    }
    cJSON_Delete(doc);
    free(text);
}

static void error_paths(void) {
    struct { const char *json; aic_status want; } bad[] = {
        {"{", AIC_STATUS_INVALID_JSON},
        {"[]", AIC_STATUS_INVALID_ARGUMENT},
        {"{\"edges\":[],\"send\":{\"from\":\"a\",\"to\":\"b\"},\"maxOpenAsks\":1,\"id\":\"x\"}", AIC_STATUS_UNKNOWN_KEY},
        {"{\"edges\":[],\"send\":{\"from\":\"a\"},\"maxOpenAsks\":1}", AIC_STATUS_INVALID_ARGUMENT},
        {"{\"edges\":[],\"send\":{\"from\":\"a\",\"to\":\"b\"},\"maxOpenAsks\":-1}", AIC_STATUS_INVALID_ARGUMENT},
        {"{\"edges\":[],\"send\":{\"from\":\"a\",\"to\":\"b\"},\"maxOpenAsks\":0.5}", AIC_STATUS_UNSUPPORTED_NUMBER},
        {"{\"edges\":[{\"asker\":\"a\",\"messageId\":\"q\",\"asked\":\"b\",\"state\":\"open\"}],"
         "\"send\":{\"from\":\"a\",\"to\":\"b\"},\"maxOpenAsks\":1}", AIC_STATUS_INVALID_ARGUMENT},
        {"{\"edges\":[],\"send\":{\"from\":\"a\\ud800\",\"to\":\"b\"},\"maxOpenAsks\":1}", AIC_STATUS_UNPAIRED_SURROGATE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *out = NULL;
        aic_error *err = NULL;
        aic_status st = aic_check_ask_json(bad[i].json, strlen(bad[i].json), &out, NULL, &err);
        check(st == bad[i].want && out == NULL && aic_error_code(err) == st && strlen(aic_error_message(err)) > 0,
              bad[i].json, aic_status_name(st));
        aic_error_free(err);
    }
    const char ok[] = "{\"edges\":[],\"send\":{\"from\":\"a\",\"to\":\"b\",\"expectsReply\":true},\"maxOpenAsks\":0}";
    char *out = NULL;
    aic_status st = aic_check_ask_json(ok, strlen(ok), &out, NULL, NULL);
    check(st == AIC_STATUS_OK && out && strcmp(out, "{\"refused\":\"TOO_MANY_PENDING_ASKS\"}") == 0,
          "a refusal is an answer, without out_len", out);
    aic_string_free(out);
    out = NULL;
    st = aic_check_ask_json(ok, strlen(ok), NULL, NULL, NULL);
    check(st == AIC_STATUS_NULL_POINTER, "NULL out_json", aic_status_name(st));
    st = aic_check_ask_json(NULL, 3, &out, NULL, NULL);
    check(st == AIC_STATUS_NULL_POINTER && out == NULL, "NULL json with a length", aic_status_name(st));
    const char not_utf8[] = "{\"\xff\":1}";
    st = aic_check_ask_json(not_utf8, sizeof not_utf8 - 1, &out, NULL, NULL);
    check(st == AIC_STATUS_INVALID_UTF8 && out == NULL, "invalid UTF-8", aic_status_name(st));
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "vectors";
    run_vectors(dir);
    error_paths();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
