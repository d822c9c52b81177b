/* The helpers of the C runners that speak JSON (cJSON) to aic_contract_call: a failure counter
 * and its report, member access, and one call that consumes its argument list and answers the
 * parsed {"ok":...} answer. Include after cJSON.h and agent_intercom.h. (The case-file runners
 * share outcome_cases.h instead, which takes the arguments as text.) */
#ifndef AIC_CONTRACT_JSON_H
#define AIC_CONTRACT_JSON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed;

static inline void fail(const char *id, const char *why) {
    failed++;
    fprintf(stderr, "FAIL %s: %s\n", id, why);
}

static inline const cJSON *get(const cJSON *obj, const char *key) {
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static inline const char *str(const cJSON *obj, const char *key) {
    const cJSON *item = get(obj, key);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

/* Calls `op` with the JSON array `args` (consumed); returns the parsed answer {"ok":...} (free
 * with cJSON_Delete), or NULL when the call itself failed. */
static inline cJSON *call(const char *op, cJSON *args) {
    char *text = cJSON_PrintUnformatted(args);
    cJSON_Delete(args);
    char *out = NULL;
    size_t out_len = 0;
    aic_error *err = NULL;
    aic_status st = aic_contract_call(op, strlen(op), text, strlen(text), &out, &out_len, &err);
    free(text);
    if (st != AIC_STATUS_OK) {
        aic_error_free(err);
        return NULL;
    }
    cJSON *answer = cJSON_ParseWithLength(out, out_len);
    aic_string_free(out);
    return answer;
}

/* The value of a successful answer; NULL for a refusal (or an answer without a value). */
static inline const cJSON *value_of(const cJSON *answer) {
    return cJSON_IsTrue(get(answer, "ok")) ? get(answer, "value") : NULL;
}

#endif
