/* Error paths and conventions of the C ABI: NULL handling, invalid UTF-8, stable status codes,
 * ownership, and that rejected scope ids are never echoed. Prints "N passed, N failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_intercom.h"

static int passed, failed;
#define CHECK(cond) do { if (cond) passed++; else { failed++; fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)

static aic_status scope(const char *s, size_t n, aic_scope_kind *kind, aic_error **err) {
    return aic_scope_parse(s, n, kind, err);
}

int main(void) {
    aic_error *err = NULL;
    aic_scope_kind kind = 99;

    /* version and constants */
    CHECK(aic_abi_version() == AIC_ABI_VERSION);
    CHECK(strlen(aic_version()) > 0);
    CHECK(strcmp(aic_protocol_name(), "pi-intercom") == 0);
    CHECK(aic_protocol_version() == 4);
    CHECK(strcmp(aic_scope_env(), "AGENT_INTERCOM_SCOPE_ID") == 0);
    CHECK(strcmp(aic_scope_id_pattern_source(), "^[A-Za-z0-9_-]{16,128}$") == 0);
    CHECK(aic_vector_schema_version() == 2);
    CHECK(strcmp(aic_protocol_v4_semantics_hash(), "ef23cae55b3cca7683fee60e5f2421350cde731dc5424c82286a33a8b9cdf6cb") == 0);
    CHECK(aic_protocol_v4_corpus_json(NULL) != NULL);
    CHECK(strcmp(aic_status_name(AIC_STATUS_INVALID_SCOPE), "INVALID_SCOPE") == 0);
    CHECK(strcmp(aic_status_name(12345), "UNKNOWN") == 0);

    /* scopes */
    CHECK(scope(NULL, 0, &kind, &err) == AIC_STATUS_OK && kind == AIC_SCOPE_KIND_UNSCOPED && err == NULL);
    CHECK(scope("", 0, &kind, NULL) == AIC_STATUS_OK && kind == AIC_SCOPE_KIND_UNSCOPED);
    CHECK(scope("Scope_AAAAAAAAAA", 16, &kind, NULL) == AIC_STATUS_OK && kind == AIC_SCOPE_KIND_SCOPED);
    /* length is authoritative: a trailing newline inside the length is invalid */
    CHECK(scope("Scope_AAAAAAAAAA\n", 17, &kind, NULL) == AIC_STATUS_INVALID_SCOPE);
    const char *secret = "Secret.Scope.Value.42";
    kind = 99;
    CHECK(scope(secret, strlen(secret), &kind, &err) == AIC_STATUS_INVALID_SCOPE);
    CHECK(kind == 99); /* outputs untouched on failure */
    CHECK(err != NULL && aic_error_code(err) == AIC_STATUS_INVALID_SCOPE);
    CHECK(err != NULL && strstr(aic_error_message(err), "must match") != NULL);
    CHECK(err != NULL && strstr(aic_error_message(err), secret) == NULL);
    aic_error_free(err);
    err = NULL;
    CHECK(scope(NULL, 5, &kind, &err) == AIC_STATUS_NULL_POINTER && aic_error_code(err) == AIC_STATUS_NULL_POINTER);
    aic_error_free(err);
    CHECK(scope("Scope_AAAAAAAAAA", 16, NULL, NULL) == AIC_STATUS_NULL_POINTER);
    CHECK(scope("Scope_AAAAAAAAA\xff", 16, &kind, &err) == AIC_STATUS_INVALID_UTF8);
    aic_error_free(err);
    aic_error_free(NULL);
    aic_string_free(NULL);
    CHECK(aic_error_code(NULL) == AIC_STATUS_NULL_POINTER);
    CHECK(strcmp(aic_error_message(NULL), "") == 0);

    bool same = false;
    CHECK(aic_same_scope(NULL, 0, "", 0, &same, NULL) == AIC_STATUS_OK && same);
    CHECK(aic_same_scope("Scope_AAAAAAAAAA", 16, "Scope_AAAAAAAAAA", 16, &same, NULL) == AIC_STATUS_OK && same);
    CHECK(aic_same_scope("Scope_AAAAAAAAAA", 16, "scope_aaaaaaaaaa", 16, &same, NULL) == AIC_STATUS_OK && !same);
    CHECK(aic_same_scope("Scope_AAAAAAAAAA", 16, NULL, 0, &same, NULL) == AIC_STATUS_OK && !same);
    CHECK(aic_same_scope("bad", 3, NULL, 0, &same, NULL) == AIC_STATUS_INVALID_SCOPE);

    /* routing */
    aic_candidate c[3] = {
        {"id-1", 4, "Worker", 6, "Scope_AAAAAAAAAA", 16},
        {"id-2", 4, "worker", 6, "Scope_AAAAAAAAAA", 16},
        {"id-3", 4, NULL, 0, NULL, 0},
    };
    aic_resolve_kind rk = 0;
    size_t idx[3] = {0}, count = 0;
    CHECK(aic_resolve_target(c, 3, "Scope_AAAAAAAAAA", 16, "worker", 6, &rk, idx, 3, &count, NULL) == AIC_STATUS_OK);
    CHECK(rk == AIC_RESOLVE_KIND_SAME_SCOPE_NAME && count == 1 && idx[0] == 1);
    CHECK(aic_resolve_target(c, 3, "Scope_AAAAAAAAAA", 16, "id-", 3, &rk, idx, 1, &count, NULL) == AIC_STATUS_OK);
    CHECK(rk == AIC_RESOLVE_KIND_AMBIGUOUS_TARGET && count == 2 && idx[0] == 0); /* capacity 1: count still 2 */
    CHECK(aic_resolve_target(c, 3, NULL, 0, "id-", 3, &rk, NULL, 0, &count, NULL) == AIC_STATUS_OK);
    CHECK(rk == AIC_RESOLVE_KIND_SAME_SCOPE_PREFIX && count == 1);
    CHECK(aic_resolve_target(NULL, 3, NULL, 0, "x", 1, &rk, idx, 3, &count, NULL) == AIC_STATUS_NULL_POINTER);
    CHECK(aic_resolve_target(NULL, 0, NULL, 0, "x", 1, &rk, idx, 3, &count, NULL) == AIC_STATUS_OK && rk == AIC_RESOLVE_KIND_SESSION_NOT_FOUND);
    CHECK(aic_resolve_target(c, 3, NULL, 0, "x", 1, &rk, NULL, 3, &count, NULL) == AIC_STATUS_NULL_POINTER); /* even with nothing to write */
    CHECK(aic_resolve_target(c, 3, NULL, 0, "id-3", 4, &rk, NULL, 3, &count, NULL) == AIC_STATUS_NULL_POINTER);
    aic_candidate bad_scope[1] = {{"id-9", 4, NULL, 0, "short", 5}};
    CHECK(aic_resolve_target(bad_scope, 1, NULL, 0, "x", 1, &rk, idx, 3, &count, &err) == AIC_STATUS_INVALID_SCOPE);
    CHECK(err && strstr(aic_error_message(err), "candidates[0].scope") != NULL);
    aic_error_free(err);
    aic_candidate bad_utf8[1] = {{"id-\xc3", 4, NULL, 0, NULL, 0}};
    CHECK(aic_resolve_target(bad_utf8, 1, NULL, 0, "x", 1, &rk, idx, 3, &count, NULL) == AIC_STATUS_INVALID_UTF8);
    CHECK(aic_audience(77, c, 3, "id-1", 4, NULL, 0, idx, 3, &count, NULL) == AIC_STATUS_INVALID_ARGUMENT);
    CHECK(aic_audience(AIC_AUDIENCE_EVENT_SESSION_LEFT, c, 3, "id-1", 4, "Scope_AAAAAAAAAA", 16, idx, 3, &count, NULL) == AIC_STATUS_OK && count == 1 && idx[0] == 1);
    CHECK(aic_list_visible(c, 3, "id-3", 4, NULL, 0, idx, 3, &count, NULL) == AIC_STATUS_OK && count == 1 && idx[0] == 2);
    CHECK(aic_list_visible(c, 3, "id-3", 4, NULL, 0, idx, 3, NULL, NULL) == AIC_STATUS_NULL_POINTER);

    char *json = NULL;
    size_t len = 0;
    const char *cj = "[{\"id\":\"id-1\",\"name\":\"w\"},{\"id\":\"id-2\",\"name\":\"w\",\"scope\":null}]";
    CHECK(aic_resolve_target_json(cj, strlen(cj), NULL, 0, "w", 1, &json, &len, NULL) == AIC_STATUS_OK);
    CHECK(json && strcmp(json, "{\"kind\":\"AMBIGUOUS_TARGET\",\"targetIds\":[\"id-1\",\"id-2\"]}") == 0 && len == strlen(json));
    aic_string_free(json);
    json = NULL;
    CHECK(aic_resolve_target_json("[{\"name\":\"w\"}]", 14, NULL, 0, "w", 1, &json, NULL, &err) == AIC_STATUS_INVALID_ARGUMENT && json == NULL);
    aic_error_free(err);
    CHECK(aic_resolve_target_json("[{", 2, NULL, 0, "w", 1, &json, NULL, NULL) == AIC_STATUS_INVALID_JSON);
    CHECK(aic_resolve_target_json("{}", 2, NULL, 0, "w", 1, &json, NULL, NULL) == AIC_STATUS_INVALID_ARGUMENT);

    aic_replacement_plan plan;
    CHECK(aic_plan_replacement("Scope_AAAAAAAAAA", 16, "Scope_BBBBBBBBBB", 16, &plan, NULL) == AIC_STATUS_OK);
    CHECK(plan.kind == AIC_REPLACEMENT_KIND_OLD_LEFT_BEFORE_NEW_JOINED && plan.steps[0].kind == AIC_LIFECYCLE_KIND_LEFT && !plan.steps[0].in_new_scope && plan.steps[1].kind == AIC_LIFECYCLE_KIND_JOINED && plan.steps[1].in_new_scope);
    CHECK(aic_plan_replacement(NULL, 0, "", 0, &plan, NULL) == AIC_STATUS_OK && plan.kind == AIC_REPLACEMENT_KIND_SAME_SCOPE_LEFT_BEFORE_JOINED);
    CHECK(aic_frame_disposition_of(3, 3, false) == AIC_FRAME_DISPOSITION_DISCARD);

    /* canonical */
    char hex[AIC_HASH_HEX_LEN + 1];
    CHECK(aic_canonical_hash("boss-test-v1", 12, "{\"b\":2,\"a\":1}", 13, hex, NULL) == AIC_STATUS_OK);
    CHECK(strcmp(hex, "4ff6c078039d0d494b220a4dafa919c183136d4cf7e303eed1bc642ab0b8e4c2") == 0);
    CHECK(aic_canonical_hash("boss-test-v1", 12, "{}", 2, NULL, NULL) == AIC_STATUS_NULL_POINTER);
    CHECK(aic_canonical_hash(NULL, 0, "{}", 2, hex, NULL) == AIC_STATUS_INVALID_DOMAIN);
    CHECK(aic_canonical_hash("d", 1, NULL, 0, hex, NULL) == AIC_STATUS_INVALID_JSON);
    CHECK(aic_canonical_hash("d", 1, "\"\xed\xa0\x80\"", 5, hex, NULL) == AIC_STATUS_INVALID_UTF8); /* CESU surrogate bytes */
    CHECK(aic_canonical_json("[1.5]", 5, &json, &len, &err) == AIC_STATUS_UNSUPPORTED_NUMBER && strstr(aic_error_message(err), "$[0]") != NULL);
    aic_error_free(err);
    CHECK(aic_canonical_json("[1]", 3, NULL, NULL, NULL) == AIC_STATUS_NULL_POINTER);
    /* a huge document is fine */
    size_t big = 4u << 20;
    char *doc = malloc(big + 3);
    doc[0] = '"';
    memset(doc + 1, 'x', big);
    doc[big + 1] = '"';
    doc[big + 2] = 0;
    CHECK(aic_canonical_json(doc, big + 2, &json, &len, NULL) == AIC_STATUS_OK && len == big + 2);
    aic_string_free(json);
    free(doc);

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
