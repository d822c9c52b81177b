/* Runs vectors/http-signatures-v1.json through the C ABI (aic_contract_call and the httpsig.*
 * operations): RFC 9421 B.2.6 byte for byte, the RFC 9530 digests, signature bases, and the A2A
 * request and response profiles (signing with exact headers, then every refusal with its code).
 * Prints executed and skipped (and, with AIC_VECTOR, filtered) counts; exits non-zero on any
 * failure or on any case that was none of them. Usage: httpsig [vectors-dir] */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_intercom.h"
#include "support.h"
#include "contract_json.h"

/* Calls `op` with the JSON array `args` (consumed); returns the operation's value (free with
 * cJSON_Delete), or NULL when the call or the operation failed. */
static cJSON *call_value(const char *op, cJSON *args) {
    cJSON *answer = call(op, args);
    cJSON *value = NULL;
    if (cJSON_IsTrue(get(answer, "ok"))) value = cJSON_DetachItemFromObject(answer, "value");
    cJSON_Delete(answer);
    return value;
}

/* An argument list of copies of the given items (NULL items as JSON null). */
static cJSON *args_of(int n, const cJSON **items) {
    cJSON *args = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(args, items[i] ? cJSON_Duplicate(items[i], 1) : cJSON_CreateNull());
    return args;
}

/* A copy of `message` with header lines appended (pairs of name, value; NULL-terminated). */
static cJSON *with_headers(const cJSON *message, const char **pairs) {
    cJSON *out = cJSON_Duplicate(message, 1);
    cJSON *headers = cJSON_GetObjectItemCaseSensitive(out, "headers");
    for (size_t i = 0; pairs[i] && pairs[i + 1]; i += 2) {
        cJSON *line = cJSON_CreateArray();
        cJSON_AddItemToArray(line, cJSON_CreateString(pairs[i]));
        cJSON_AddItemToArray(line, cJSON_CreateString(pairs[i + 1]));
        cJSON_AddItemToArray(headers, line);
    }
    return out;
}

/* {keyid: public PEM} from {keyid: key name}. */
static cJSON *ring(const cJSON *keys, const cJSON *names) {
    cJSON *out = cJSON_CreateObject();
    const cJSON *entry;
    cJSON_ArrayForEach(entry, names) {
        const char *pem = str(get(keys, entry->valuestring), "publicKey");
        cJSON_AddItemToObject(out, entry->string, cJSON_CreateString(pem ? pem : ""));
    }
    return out;
}

/* Every member of `expected` equals the answer's; `answer` is freed. */
static void expect(const char *id, const char *what, cJSON *answer, const cJSON *expected) {
    if (!answer) {
        char why[128];
        snprintf(why, sizeof why, "%s: the call failed", what);
        fail(id, why);
        return;
    }
    const cJSON *want;
    cJSON_ArrayForEach(want, expected) {
        const cJSON *got = get(answer, want->string);
        if (!got || !cJSON_Compare(got, want, 1)) {
            char *shown = cJSON_PrintUnformatted(answer);
            char why[1024];
            snprintf(why, sizeof why, "%s: %s differs in %.900s", what, want->string, shown);
            free(shown);
            fail(id, why);
            break;
        }
    }
    cJSON_Delete(answer);
}

static cJSON *ok_with(const char *key, const cJSON *value) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddTrueToObject(o, "ok");
    if (key) cJSON_AddItemToObject(o, key, cJSON_Duplicate(value, 1));
    return o;
}

static void rfc_signature(const cJSON *c, const cJSON *keys, const char *id) {
    const cJSON *expected = get(c, "expected"), *label = get(c, "label");
    const char *pairs[] = {"Signature-Input", str(c, "signatureInput"), NULL, NULL};
    cJSON *with_input = with_headers(get(c, "message"), pairs);
    const cJSON *a[] = {with_input, label};
    cJSON *base = call_value("httpsig.signatureBase", args_of(2, a));
    const char *text = str(base, "base");
    const cJSON *length = get(expected, "baseLength");
    if (!text || strcmp(text, str(expected, "base")) != 0 || !cJSON_IsNumber(length) ||
        (double)strlen(text) != length->valuedouble)
        fail(id, "the signature base");
    cJSON_Delete(base);
    const cJSON *key = get(keys, str(c, "key"));
    const cJSON *s[] = {get(c, "message"), get(c, "signatureInput"), label, get(key, "privateKey")};
    cJSON *want = cJSON_CreateObject();
    cJSON_AddItemToObject(want, "signature", cJSON_Duplicate(get(c, "signature"), 1));
    cJSON_AddItemToObject(want, "signatureInput", cJSON_Duplicate(get(c, "signatureInput"), 1));
    expect(id, "sign", call_value("httpsig.sign", args_of(4, s)), want);
    cJSON_Delete(want);
    const char *sig[] = {"Signature", str(c, "signature"), NULL, NULL};
    cJSON *both = with_headers(with_input, sig);
    const cJSON *v[] = {both, label, get(key, "publicKey")};
    cJSON *ok = ok_with(NULL, NULL);
    expect(id, "verify", call_value("httpsig.verify", args_of(3, v)), ok);
    cJSON_Delete(ok);
    cJSON_Delete(both);
    cJSON_Delete(with_input);
}

/* Signs with `sign_op` over `n` leading arguments plus key and signer, checks `expected`, then
 * verifies the signed message (the argument at `signed_at`) as the case's `verify` says. */
static void sign_case(const cJSON *c, const cJSON *keys, const char *id, int response) {
    const cJSON *signer = get(c, "signer");
    const cJSON *priv = get(get(keys, str(signer, "key")), "privateKey");
    const cJSON *message = get(c, response ? "response" : "request");
    const cJSON *s[6] = {get(c, "profile"), message, get(c, "request"), get(c, "body"), priv, signer};
    const cJSON *rq[5] = {get(c, "profile"), message, get(c, "body"), priv, signer};
    cJSON *answer = response ? call_value("httpsig.signResponse", args_of(6, s))
                             : call_value("httpsig.signRequest", args_of(5, rq));
    if (!answer) {
        fail(id, "signing failed");
        return;
    }
    const char *pairs[] = {"Content-Digest", str(answer, "contentDigest"), "Signature-Input",
                           str(answer, "signatureInput"), "Signature", str(answer, "signature"),
                           NULL, NULL};
    cJSON *signed_message = with_headers(message, pairs);
    expect(id, "sign", answer, get(c, "expected"));
    const cJSON *verify = get(c, "verify");
    cJSON *keyring = ring(keys, get(verify, "keyring"));
    cJSON *result;
    if (response) {
        const cJSON *v[] = {get(c, "profile"), signed_message, get(c, "request"), get(c, "body"),
                            get(verify, "nowMs"), keyring};
        result = call_value("httpsig.verifyResponse", args_of(6, v));
    } else {
        const cJSON *v[] = {get(c, "profile"), signed_message, get(c, "body"), get(verify, "nowMs"),
                            keyring};
        result = call_value("httpsig.verifyRequest", args_of(5, v));
    }
    expect(id, "verify", result, get(verify, "expected"));
    cJSON_Delete(keyring);
    cJSON_Delete(signed_message);
}

static void run_case(const cJSON *c, const cJSON *keys, const char *id) {
    const char *kind = str(c, "kind");
    const cJSON *expected = get(c, "expected");
    if (!kind) {
        fail(id, "no kind");
    } else if (strcmp(kind, "rfc-signature") == 0) {
        rfc_signature(c, keys, id);
    } else if (strcmp(kind, "content-digest") == 0) {
        const cJSON *a[] = {get(c, "algorithm"), get(c, "body")};
        cJSON *value = call_value("httpsig.contentDigest", args_of(2, a));
        if (!value || !cJSON_Compare(value, expected, 1)) fail(id, "the digest");
        const cJSON *b[] = {value, get(c, "body")};
        cJSON *ok = ok_with(NULL, NULL);
        expect(id, "check", call_value("httpsig.checkContentDigest", args_of(2, b)), ok);
        cJSON_Delete(ok);
        cJSON_Delete(value);
    } else if (strcmp(kind, "check-content-digest") == 0) {
        const cJSON *a[] = {get(c, "field"), get(c, "body")};
        expect(id, "check", call_value("httpsig.checkContentDigest", args_of(2, a)), expected);
    } else if (strcmp(kind, "signature-base") == 0) {
        const char *pairs[] = {"Signature-Input", str(c, "signatureInput"), NULL, NULL};
        cJSON *message = with_headers(get(c, "message"), pairs);
        const cJSON *a[] = {message, get(c, "label")};
        expect(id, "base", call_value("httpsig.signatureBase", args_of(2, a)), expected);
        cJSON_Delete(message);
    } else if (strcmp(kind, "sign-request") == 0 || strcmp(kind, "sign-response") == 0) {
        sign_case(c, keys, id, strcmp(kind, "sign-response") == 0);
    } else if (strcmp(kind, "verify-request") == 0) {
        cJSON *keyring = ring(keys, get(c, "keyring"));
        const cJSON *a[] = {get(c, "profile"), get(c, "request"), get(c, "body"), get(c, "nowMs"),
                            keyring};
        expect(id, "verify", call_value("httpsig.verifyRequest", args_of(5, a)), expected);
        cJSON_Delete(keyring);
    } else if (strcmp(kind, "verify-response") == 0) {
        cJSON *keyring = ring(keys, get(c, "keyring"));
        const cJSON *a[] = {get(c, "profile"), get(c, "response"), get(c, "request"),
                            get(c, "body"), get(c, "nowMs"), keyring};
        expect(id, "verify", call_value("httpsig.verifyResponse", args_of(6, a)), expected);
        cJSON_Delete(keyring);
    } else {
        fail(id, "unknown kind");
    }
}

/* Arguments of the wrong shape are a failure of the call's value, never a crash. */
static void hostile_arguments(void) {
    const char *calls[][2] = {
        {"httpsig.verifyRequest", "[\"a2a-request\",{\"method\":\"POST\"},\"\",0,{}]"},
        {"httpsig.verifyRequest", "[\"a2a-request\",{\"method\":\"P T\",\"targetUri\":\"x\"},1]"},
        {"httpsig.verifyRequest", "[\"nope\"]"},
        {"httpsig.checkContentDigest", "[{\"base64\":\"%%%\"},\"\"]"},
        {"httpsig.signatureBase", "[{\"status\":99,\"headers\":[]},\"a\"]"},
        {"httpsig.signRequest", "[\"a2a-request\",{\"method\":\"POST\",\"targetUri\":"
                                "\"https://h/\",\"headers\":[[\"a\"]]},\"\",\"\",{}]"},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        cJSON *args = cJSON_Parse(calls[i][1]);
        cJSON *value = call_value(calls[i][0], args);
        if (value) fail(calls[i][0], "arguments of the wrong shape were accepted");
        cJSON_Delete(value);
    }
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "vectors";
    const char *file = "http-signatures-v1.json";
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char *text = read_text(path);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *cases = get(doc, "cases"), *keys = get(doc, "keys"), *count = get(doc, "count");
    int total = cJSON_GetArraySize(cases), executed = 0, filtered = 0;
    if (!cJSON_IsNumber(count) || count->valueint != total || total < 120) {
        fprintf(stderr, "FAIL %s: %d cases, the count field disagrees\n", file, total);
        failed++;
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        const char *id = str(c, "id");
        if (!vector_selected(id)) {
            filtered++;
            continue;
        }
        executed++;
        run_case(c, keys, id ? id : "?");
    }
    int counted = vector_counts(file, total, executed, 0, filtered);
    cJSON_Delete(doc);
    hostile_arguments();
    if (failed || !counted) {
        fprintf(stderr, "httpsig: %d failures\n", failed);
        return 1;
    }
    printf("httpsig: ok\n");
    return 0;
}
