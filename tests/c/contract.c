/* aic_contract_call for the canonical subpath: the readers and canonicalJson / canonicalFrame /
 * canonicalHash / validateVersionedStoreRecord answer as the TypeScript core does (paths,
 * messages, classes, our codes), and bad calls are call failures: NULL pointers, invalid UTF-8,
 * arguments that are not a JSON array, an unknown operation. Prints "N passed, N failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "agent_intercom.h"

static int passed, failed;

static void check(int ok, const char *what, const char *detail) {
    if (ok) passed++;
    else { failed++; fprintf(stderr, "FAIL %s%s%s\n", what, detail ? ": " : "", detail ? detail : ""); }
}

/* Runs op over args; returns the parsed answer (NULL, with a failure counted, if the call
 * failed). */
static cJSON *answer(const char *op, const char *args) {
    char *out = NULL;
    size_t len = 0;
    aic_error *err = NULL;
    aic_status status = aic_contract_call(op, strlen(op), args, strlen(args), &out, &len, &err);
    if (status != AIC_STATUS_OK) {
        check(0, op, aic_error_message(err));
        aic_error_free(err);
        return NULL;
    }
    check(out != NULL && strlen(out) == len, op, "length of the answer");
    cJSON *json = cJSON_Parse(out);
    check(json != NULL, op, out);
    aic_string_free(out);
    return json;
}

/* op(args) answers ok with this value (JSON text; NULL for no value). */
static void ok(const char *op, const char *args, const char *value) {
    cJSON *json = answer(op, args);
    if (!json) return;
    check(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(json, "ok")), op, args);
    cJSON *got = cJSON_GetObjectItemCaseSensitive(json, "value");
    if (value == NULL) {
        check(got == NULL, op, "no value for undefined");
    } else {
        cJSON *want = cJSON_Parse(value);
        check(want && got && cJSON_Compare(got, want, 1), op, value);
        cJSON_Delete(want);
    }
    cJSON_Delete(json);
}

/* op(args) refuses with this class and message, and (when non-NULL) this path and code. */
static void refused(const char *op, const char *args, const char *cls, const char *message, const char *path,
                    const char *code) {
    cJSON *json = answer(op, args);
    if (!json) return;
    cJSON *error = cJSON_GetObjectItemCaseSensitive(json, "error");
    check(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(json, "ok")) && cJSON_IsObject(error), op, args);
    const char *got_class = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, "class"));
    const char *got_message = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, "message"));
    const char *got_path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, "path"));
    const char *got_code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, "code"));
    check(got_class && strcmp(got_class, cls) == 0, op, got_class ? got_class : "no class");
    check(got_message && strcmp(got_message, message) == 0, message, got_message ? got_message : "no message");
    check(path ? got_path && strcmp(got_path, path) == 0 : got_path == NULL, message, got_path ? got_path : "no path");
    check(code ? got_code && strcmp(got_code, code) == 0 : got_code == NULL, message, got_code ? got_code : "no code");
    cJSON_Delete(json);
}

#define CVE "ContractValidationError"

static void readers(void) {
    ok("canonical.readString", "[\"abc\",\"$.a\"]", "\"abc\"");
    refused("canonical.readString", "[\"\",\"$.a\"]", CVE, "$.a: must be a non-empty string", "$.a", NULL);
    refused("canonical.readString", "[\"a\\ud800\",\"p\"]", CVE, "p: string contains an unpaired high surrogate", "p", NULL);
    ok("canonical.readOptionalString", "[]", NULL); /* no argument: undefined */
}

static void readers_more(void) {
    refused("canonical.readOptionalString", "[null,\"p\"]", CVE, "p: must be a non-empty string", "p", NULL);
    refused("canonical.readIdentifier", "[\"a b\",\"id\"]", CVE,
            "id: identifier must not contain ASCII whitespace or control characters", "id", NULL);
    ok("canonical.readInteger", "[5,\"n\",5]", "5");
    refused("canonical.readInteger", "[1.5,\"n\"]", CVE, "n: must be a safe integer >= 0", "n", NULL);
    refused("canonical.readInteger", "[9007199254740992,\"n\"]", CVE, "n: must be a safe integer >= 0", "n", NULL);
    ok("canonical.readBoolean", "[false,\"b\"]", "false");
    refused("canonical.readBoolean", "[0,\"b\"]", CVE, "b: must be a boolean", "b", NULL);
    ok("canonical.readEnum", "[\"b\",[\"a\",\"b\"],\"e\"]", "\"b\"");
    refused("canonical.readEnum", "[\"z\",[\"a\",\"b\"],\"e\"]", CVE, "e: must be one of: a, b", "e", NULL);
    ok("canonical.readStringArray", "[[\"a\",\"b\"],\"l\"]", "[\"a\",\"b\"]");
    refused("canonical.readStringArray", "[[\"a\",1],\"l\"]", CVE, "l[1]: must be a non-empty string", "l[1]", NULL);
    ok("canonical.readTimestamp", "[\"2024-02-29T00:00:00.000Z\",\"t\"]", "\"2024-02-29T00:00:00.000Z\"");
    refused("canonical.readTimestamp", "[\"2023-02-29T00:00:00.000Z\",\"t\"]", CVE,
            "t: must be a canonical UTC ISO-8601 timestamp", "t", NULL);
    refused("canonical.readHexDigest", "[\"ABC\",\"d\"]", CVE, "d: must be a lowercase SHA-256 digest", "d", NULL);
    ok("canonical.assertRecord", "[{\"a\":1}]", NULL);
    refused("canonical.assertRecord", "[[]]", CVE, "$: must be a plain object", "$", NULL);
    refused("canonical.assertExactKeys", "[{\"a\":1,\"z\":2},[\"a\"],[],\"$.x\"]", CVE, "$.x.z: is not supported", "$.x.z",
            NULL);
    refused("canonical.assertExactKeys", "[{\"a\":1},[\"a\",\"b\"]]", CVE, "$.b: is required", "$.b", NULL);
    refused("canonical.assertExactKeys", "[null,[\"a\"]]", "TypeError", "Cannot convert undefined or null to object", NULL,
            NULL);
    ok("canonical.counter", "[\"brokerRevision\",0]", "0");
    refused("canonical.counter", "[\"deliveryClaimGeneration\",0]", CVE, "claimGeneration: must be a safe integer >= 1",
            "claimGeneration", NULL);
    ok("canonical.readMonotonicCounter", "[0,\"p\",\"k\",0]", "0");
}

static void canonical(void) {
    ok("canonical.canonicalJson", "[{\"b\":1,\"10\":[true,null],\"9\":\"x\",\"a\":\"\\u00e9\"}]",
       "\"{\\\"9\\\":\\\"x\\\",\\\"10\\\":[true,null],\\\"a\\\":\\\"\\u00e9\\\",\\\"b\\\":1}\"");
    refused("canonical.canonicalJson", "[{\"a\":[1,-0]}]", CVE,
            "$.a[1]: number must be a safe integer and must not be negative zero", "$.a[1]", "UNSUPPORTED_NUMBER");
    refused("canonical.canonicalJson", "[{\"a\":0.5}]", CVE,
            "$.a: number must be a safe integer and must not be negative zero", "$.a", "UNSUPPORTED_NUMBER");
    refused("canonical.canonicalJson", "[{\"\\ud800\":1}]", CVE, "$.[key]: string contains an unpaired high surrogate",
            "$.[key]", "UNPAIRED_SURROGATE");
    refused("canonical.canonicalJson", "[]", CVE, "$: undefined is not a canonical value", "$", "UNSUPPORTED_VALUE");
    ok("canonical.canonicalFrame", "[\"d\",{\"\\u00e9\":1}]", "\"agent-intercom-canonical-frame-v1:1:d:8:{\\\"\\u00e9\\\":1}\"");
    ok("canonical.canonicalHash", "[\"boss-test-v1\",{\"b\":2,\"a\":1}]",
       "\"4ff6c078039d0d494b220a4dafa919c183136d4cf7e303eed1bc642ab0b8e4c2\"");
    refused("canonical.canonicalHash", "[\"a b\",{}]", CVE, "domain: must be non-empty printable ASCII without whitespace",
            "domain", "INVALID_DOMAIN");
    /* Nesting beyond the limit, with the path of the container that is too deep. */
    char deep[2 * 130 + 3];
    size_t n = 0;
    deep[n++] = '[';
    for (int i = 0; i < 129; i++) deep[n++] = '[';
    for (int i = 0; i < 129; i++) deep[n++] = ']';
    deep[n++] = ']';
    deep[n] = 0;
    cJSON *json = answer("canonical.canonicalJson", deep);
    if (json) {
        cJSON *error = cJSON_GetObjectItemCaseSensitive(json, "error");
        const char *code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, "code"));
        const char *detail = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, "detail"));
        check(code && strcmp(code, "NESTING_TOO_DEEP") == 0, "nesting code", code);
        check(detail && strcmp(detail, "nesting deeper than 128 levels") == 0, "nesting detail", detail);
        cJSON_Delete(json);
    }
}

static void store_gate(void) {
    /* The gate says "call the parser" (C has none: the caller parses) or answers the result. */
    ok("canonical.validateVersionedStoreRecord", "[{\"version\":2},2]", "{\"ok\":true,\"status\":\"valid\"}");
    ok("canonical.validateVersionedStoreRecord", "[{\"version\":3},2]",
       "{\"ok\":false,\"status\":\"unsupported_newer_version\",\"observedVersion\":null,\"path\":\"$.version\","
       "\"message\":\"unsupported store version 3; expected 2\",\"preserveExisting\":true,\"mutationAllowed\":false}");
    ok("canonical.validateVersionedStoreRecord", "[[],2]",
       "{\"ok\":false,\"status\":\"corrupt\",\"path\":\"$\",\"message\":\"$: must be a plain object\","
       "\"preserveExisting\":true,\"mutationAllowed\":false}");
    ok("canonical.validateVersionedStoreRecord", "[{\"version\":\"b.v1\"},\"a.v1\"]",
       "{\"ok\":false,\"status\":\"foreign_version\",\"observedVersion\":null,\"path\":\"$.version\","
       "\"message\":\"foreign store version b.v1\",\"preserveExisting\":true,\"mutationAllowed\":false}");
}

/* A call that fails (no answer) with this status. */
static void call_fails(const char *what, const char *op, size_t op_len, const char *args, size_t args_len, char **out,
                       aic_status want) {
    size_t len = 0;
    aic_error *err = NULL;
    aic_status status = aic_contract_call(op, op_len, args, args_len, out, &len, &err);
    char detail[160];
    snprintf(detail, sizeof detail, "status %s, want %s", aic_status_name(status), aic_status_name(want));
    check(status == want && err != NULL && aic_error_code(err) == want, what, detail);
    aic_error_free(err);
}

static void bad_calls(void) {
    char *out = NULL;
    const char *op = "canonical.readString";
    const char bad_utf8[] = "[\"\xff\"]";
    call_fails("NULL op", NULL, 5, "[]", 2, &out, AIC_STATUS_NULL_POINTER);
    call_fails("NULL args", op, strlen(op), NULL, 2, &out, AIC_STATUS_NULL_POINTER);
    call_fails("NULL out", op, strlen(op), "[]", 2, NULL, AIC_STATUS_NULL_POINTER);
    call_fails("invalid UTF-8 args", op, strlen(op), bad_utf8, strlen(bad_utf8), &out, AIC_STATUS_INVALID_UTF8);
    call_fails("invalid UTF-8 op", "canonical.\xff", 11, "[]", 2, &out, AIC_STATUS_INVALID_UTF8);
    call_fails("args not an array", op, strlen(op), "{}", 2, &out, AIC_STATUS_INVALID_ARGUMENT);
    call_fails("args not JSON", op, strlen(op), "[u]", 3, &out, AIC_STATUS_INVALID_JSON);
    call_fails("unknown op", "canonical.nope", 14, "[]", 2, &out, AIC_STATUS_INVALID_ARGUMENT);
    check(out == NULL, "out untouched on failure", NULL);
    /* A NULL error pointer is allowed: the status alone reports the failure. */
    check(aic_contract_call("canonical.nope", 14, "[]", 2, &out, NULL, NULL) == AIC_STATUS_INVALID_ARGUMENT,
          "NULL err", NULL);
}

int main(void) {
    readers();
    readers_more();
    canonical();
    store_gate();
    bad_calls();
    printf("contract: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
