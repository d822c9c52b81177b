/* Runs vectors/transport-envelope-v1.json through the C ABI (aic_contract_call): each case's
 * envelopes, in order, through envelope.verifySequence (one fresh nonce set per case, so a
 * replayed envelope is REPLAYED), the known-answer signatures through envelope.sign and the
 * signing inputs through envelope.signingInput. Prints executed and skipped (and, with
 * AIC_VECTOR, filtered) counts; exits non-zero on any failure or on any case that was none of
 * them. Usage: envelope [vectors-dir] */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_intercom.h"
#include "support.h"
#include "contract_json.h"

/* The envelope text, padded with spaces to `size` bytes when the case asks (owned). */
static char *padded(const char *text, const cJSON *size) {
    size_t len = strlen(text);
    size_t want = len;
    if (cJSON_IsNumber(size) && size->valuedouble > (double)len) want = (size_t)size->valuedouble;
    char *out = malloc(want + 1);
    if (!out) exit(2);
    memcpy(out, text, len);
    memset(out + len, ' ', want - len);
    out[want] = 0;
    return out;
}

static void run_case(const cJSON *doc, const cJSON *c, const char *id) {
    const cJSON *envelopes = cJSON_GetObjectItemCaseSensitive(c, "envelopes");
    const cJSON *expected = cJSON_GetObjectItemCaseSensitive(c, "expected");
    const cJSON *pad = cJSON_GetObjectItemCaseSensitive(c, "pad_to_bytes");
    const cJSON *now = cJSON_GetObjectItemCaseSensitive(c, "now_ms");
    if (!now) now = cJSON_GetObjectItemCaseSensitive(doc, "now_ms");
    cJSON *list = cJSON_CreateArray();
    const cJSON *e;
    cJSON_ArrayForEach(e, envelopes) {
        char *text = padded(e->valuestring, pad);
        cJSON_AddItemToArray(list, cJSON_CreateString(text));
        free(text);
    }
    cJSON *first = cJSON_Duplicate(cJSON_GetArrayItem(list, 0), 1);
    cJSON *args = cJSON_CreateArray();
    cJSON_AddItemToArray(args, list);
    const cJSON *keyring = cJSON_GetObjectItemCaseSensitive(doc, "keyring");
    const cJSON *skew = cJSON_GetObjectItemCaseSensitive(doc, "skew_ms");
    cJSON_AddItemToArray(args, cJSON_Duplicate(keyring, 1));
    cJSON_AddItemToArray(args, cJSON_Duplicate(now, 1));
    cJSON_AddItemToArray(args, cJSON_Duplicate(skew, 1));
    cJSON *answer = call("envelope.verifySequence", args);
    const cJSON *outcomes = value_of(answer);
    if (!outcomes || cJSON_GetArraySize(outcomes) != cJSON_GetArraySize(expected)) {
        fail(id, "no outcome per envelope");
    } else {
        for (int i = 0; i < cJSON_GetArraySize(expected); i++) {
            const cJSON *o = cJSON_GetArrayItem(outcomes, i);
            const cJSON *ok = cJSON_GetObjectItemCaseSensitive(o, "ok");
            const char *got = cJSON_IsTrue(ok) ? "OK" : str(o, "code");
            const char *want = cJSON_GetArrayItem(expected, i)->valuestring;
            if (!got || strcmp(got, want) != 0) {
                char why[512];
                snprintf(why, sizeof why, "envelope %d: expected %s, got %s (%s)", i, want,
                         got ? got : "?", str(o, "message") ? str(o, "message") : "");
                fail(id, why);
            }
        }
    }
    cJSON_Delete(answer);
    const cJSON *sign = cJSON_GetObjectItemCaseSensitive(c, "sign");
    if (sign) {
        const cJSON *signers = cJSON_GetObjectItemCaseSensitive(doc, "signers");
        args = cJSON_CreateArray();
        cJSON_AddItemToArray(args, cJSON_CreateString(str(sign, "fields")));
        const cJSON *signer = cJSON_GetObjectItemCaseSensitive(signers, str(sign, "signer"));
        cJSON_AddItemToArray(args, cJSON_Duplicate(signer, 1));
        answer = call("envelope.sign", args);
        const cJSON *signed_text = value_of(answer);
        if (!cJSON_IsString(signed_text) ||
            strcmp(signed_text->valuestring, first->valuestring) != 0)
            fail(id, "envelope.sign does not reproduce the envelope");
        cJSON_Delete(answer);
    }
    const char *hash = str(c, "signing_input_sha256");
    if (hash) {
        args = cJSON_CreateArray();
        cJSON_AddItemToArray(args, cJSON_Duplicate(first, 1));
        answer = call("envelope.signingInput", args);
        const char *got = str(value_of(answer), "sha256");
        if (!got || strcmp(got, hash) != 0) fail(id, "the signing input's SHA-256 differs");
        cJSON_Delete(answer);
    }
    cJSON_Delete(first);
}

/* A refusal carries the class IntercomError and the stable code. */
static void check_refusal(void) {
    cJSON *args = cJSON_Parse("[\"{}\", {}, 0]");
    cJSON *answer = call("envelope.verify", args);
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(answer, "error");
    if (!str(error, "class") || strcmp(str(error, "class"), "IntercomError") != 0 ||
        !str(error, "code") || strcmp(str(error, "code"), "ENVELOPE_MALFORMED") != 0)
        fail("refusal", "class and code");
    cJSON_Delete(answer);
    answer = call("envelope.constants", cJSON_CreateArray());
    const cJSON *max = cJSON_GetObjectItemCaseSensitive(value_of(answer), "MAX_ENVELOPE_BYTES");
    if (!cJSON_IsNumber(max) || max->valuedouble != 2097152.0)
        fail("constants", "MAX_ENVELOPE_BYTES");
    cJSON_Delete(answer);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "vectors";
    const char *file = "transport-envelope-v1.json";
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *text = read_text(path);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(doc, "count");
    int total = cJSON_GetArraySize(cases), executed = 0, filtered = 0;
    if (!cJSON_IsNumber(count) || count->valueint != total) fail(file, "count field");
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        const char *id = str(c, "id");
        if (!vector_selected(id)) {
            filtered++;
            continue;
        }
        executed++;
        run_case(doc, c, id ? id : "?");
    }
    cJSON_Delete(doc);
    int counted = vector_counts(file, total, executed, 0, filtered);
    check_refusal();
    if (failed || !counted) {
        fprintf(stderr, "envelope: %d failures\n", failed);
        return 1;
    }
    printf("envelope: ok\n");
    return 0;
}
