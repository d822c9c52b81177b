/* The scratchpad through the C ABI: vectors/scratchpad-v1.json (every kind, through the rule
 * checks of aic_pad_request), a store round trip, and the error paths. Prints executed and
 * skipped (and, with AIC_VECTOR, filtered) counts. Usage: pad <vectors-dir> <scratch-dir> */
#define _POSIX_C_SOURCE 200809L /* symlink */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_intercom.h"
#include "support.h"

static int passed, failed;

static void check(int ok, const char *name, const char *why) {
    if (ok) passed++;
    else { failed++; fprintf(stderr, "FAIL %s: %s\n", name, why ? why : ""); }
}

/* Runs one request; returns the parsed result (NULL on error, with *status set). */
static char last_error[1024];

static cJSON *request(aic_pad *pad, const char *op, cJSON *args, aic_status *status, const char **message) {
    char *text = args ? cJSON_PrintUnformatted(args) : NULL;
    char *out = NULL;
    size_t len = 0;
    aic_error *err = NULL;
    *status = aic_pad_request(pad, op, strlen(op), text, text ? strlen(text) : 0, &out, &len, &err);
    cJSON *result = NULL;
    if (*status == AIC_STATUS_OK) {
        result = cJSON_ParseWithLength(out, len);
        if (message) *message = NULL;
    } else if (message) {
        snprintf(last_error, sizeof last_error, "%s", aic_error_message(err));
        *message = last_error;
    }
    aic_string_free(out);
    aic_error_free(err);
    free(text);
    return result;
}

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* Copies a string-or-null field under a new name (absent stays absent). */
static void copy(cJSON *to, const char *to_key, const cJSON *from, const char *from_key) {
    const cJSON *v = get(from, from_key);
    if (v) cJSON_AddItemToObject(to, to_key, cJSON_Duplicate(v, 1));
}

/* Maps ids to the labels their posts carried; "?" for an unknown id. */
#define MAX_LABELS 64
static const char *label_ids[MAX_LABELS];
static const char *label_names[MAX_LABELS];
static int n_labels;

static const char *label_of(const cJSON *v) {
    const cJSON *id = cJSON_IsObject(v) ? get(v, "id") : v;
    if (!cJSON_IsString(id)) return "?";
    for (int i = 0; i < n_labels; i++)
        if (strcmp(label_ids[i], id->valuestring) == 0) return label_names[i];
    return "?";
}

static int labels_match(const cJSON *got, const cJSON *want) {
    if (!cJSON_IsArray(got) || cJSON_GetArraySize(got) != cJSON_GetArraySize(want)) return 0;
    for (int i = 0; i < cJSON_GetArraySize(want); i++)
        if (strcmp(label_of(cJSON_GetArrayItem(got, i)), cJSON_GetArrayItem(want, i)->valuestring) != 0) return 0;
    return 1;
}

/* A store scenario on a fresh store; returns 1 when every step behaved as expected. */
static int run_scenario(const cJSON *c, const char *scratch, int n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/scenario-%d.sqlite", scratch, n);
    char *options = cJSON_PrintUnformatted(get(c, "options"));
    aic_pad *pad = NULL;
    aic_status st = aic_pad_open(path, strlen(path), options, strlen(options), &pad, NULL);
    free(options);
    if (st != AIC_STATUS_OK) return 0;
    int ok = 1;
    cJSON *results = cJSON_CreateArray(); /* keeps the ids alive for the label table */
    n_labels = 0;
    const cJSON *step;
    cJSON_ArrayForEach(step, get(c, "steps")) {
        const char *op = get(step, "op")->valuestring;
        const cJSON *expect = get(step, "expect");
        const cJSON *error = expect ? get(expect, "error") : NULL;
        cJSON *res = request(pad, op, (cJSON *)get(step, "args"), &st, NULL);
        if (error) {
            ok = ok && res == NULL && strcmp(aic_status_name(st), error->valuestring) == 0;
            cJSON_Delete(res);
            continue;
        }
        if (!res) { ok = 0; break; }
        cJSON_AddItemToArray(results, res);
        const cJSON *label = get(step, "label");
        if (label && n_labels < MAX_LABELS) {
            label_ids[n_labels] = get(res, "id")->valuestring;
            label_names[n_labels++] = label->valuestring;
        }
        if (expect && get(expect, "ids"))
            ok = ok && labels_match(cJSON_IsArray(res) ? res : get(res, "messages"), get(expect, "ids"));
        if (expect && get(expect, "evicted")) ok = ok && labels_match(get(res, "evicted"), get(expect, "evicted"));
    }
    cJSON_Delete(results);
    aic_pad_close(pad);
    remove(path);
    return ok;
}

static int run_vectors(const char *dir, const char *scratch) {
    char path[4096];
    snprintf(path, sizeof path, "%s/scratchpad-v1.json", dir);
    char *text = read_text(path);
    cJSON *doc = cJSON_Parse(text);
    const cJSON *cases = get(doc, "cases");
    int total = cJSON_GetArraySize(cases), executed = 0, skipped = 0, filtered = 0;
    check(cJSON_IsNumber(get(doc, "count")) && get(doc, "count")->valueint == total, "count", "count field");
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        const char *id = get(c, "id")->valuestring, *kind = get(c, "kind")->valuestring;
        if (!vector_selected(id)) { filtered++; continue; }
        cJSON *args = cJSON_CreateObject();
        const char *op = NULL;
        if (strcmp(kind, "visibility") == 0) {
            op = "check.visible";
            const cJSON *m = get(c, "message"), *r = get(c, "reader");
            cJSON *mm = cJSON_AddObjectToObject(args, "message"), *rr = cJSON_AddObjectToObject(args, "reader");
            copy(mm, "from", m, "from"); copy(mm, "to", m, "to"); copy(mm, "privacy", m, "privacy");
            copy(mm, "sender_team", m, "senderTeam"); copy(mm, "project_root", m, "projectRoot");
            copy(mm, "expires_at", m, "expiresAt");
            copy(rr, "agent", r, "agent"); copy(rr, "team", r, "team"); copy(rr, "project_root", r, "projectRoot");
            copy(args, "now", c, "now");
        } else if (strcmp(kind, "ttl") == 0) {
            op = "check.ttl";
            /* ttlJson is number text canonical JSON cannot hold (0.5, 1e300): sent as written. */
            const cJSON *text = get(c, "ttlJson");
            if (cJSON_IsString(text)) cJSON_AddItemToObject(args, "ttl_hours", cJSON_CreateRaw(text->valuestring));
            else copy(args, "ttl_hours", c, "ttlHours");
        } else if (strcmp(kind, "transition") == 0) {
            op = "check.transition"; copy(args, "from", c, "from"); copy(args, "to", c, "to");
        } else if (strcmp(kind, "addressing") == 0) {
            op = "check.addressing"; copy(args, "privacy", c, "privacy"); copy(args, "to", c, "to");
        } else if (strcmp(kind, "task_read") == 0) {
            op = "check.task_read";
            cJSON *tt = cJSON_AddObjectToObject(args, "task");
            copy(tt, "creator", get(c, "task"), "creator"); copy(tt, "assignee", get(c, "task"), "assignee");
            copy(args, "agent", c, "agent");
        } else if (strcmp(kind, "redaction") == 0) {
            op = "check.redact"; copy(args, "text", c, "text"); copy(args, "project_root", c, "projectRoot");
        } else if (strcmp(kind, "rate") == 0) {
            op = "check.rate"; copy(args, "per_minute", c, "perMinute"); copy(args, "takes", c, "takes");
        } else if (strcmp(kind, "scenario") == 0) {
            executed++;
            check(run_scenario(c, scratch, executed), id, "scenario step mismatch");
            cJSON_Delete(args);
            continue;
        }
        if (!op) { skipped++; fprintf(stderr, "skip %s: unknown kind %s\n", id, kind); cJSON_Delete(args); continue; }
        executed++;
        aic_status st;
        cJSON *got = request(NULL, op, args, &st, NULL);
        const char *code = st == AIC_STATUS_OK ? NULL : aic_status_name(st);
        int ok = 0;
        if (strcmp(kind, "visibility") == 0) {
            ok = got && cJSON_IsBool(get(got, "visible")) &&
                 cJSON_IsTrue(get(got, "visible")) == cJSON_IsTrue(get(c, "visible"));
        } else if (strcmp(kind, "ttl") == 0) {
            const cJSON *e = get(c, "expected");
            ok = cJSON_IsNumber(e) ? got && get(got, "hours")->valuedouble == e->valuedouble
                                   : code && strcmp(code, e->valuestring) == 0;
        } else if (strcmp(kind, "transition") == 0) {
            ok = cJSON_IsTrue(get(c, "allowed")) ? got != NULL : code && strcmp(code, "INVALID_TRANSITION") == 0;
        } else if (strcmp(kind, "addressing") == 0 || strcmp(kind, "task_read") == 0) {
            const char *e = get(c, "expected")->valuestring;
            ok = strcmp(e, "ok") == 0 ? got != NULL : code && strcmp(code, e) == 0;
        } else if (strcmp(kind, "redaction") == 0) {
            ok = got && strcmp(get(got, "text")->valuestring, get(c, "expected")->valuestring) == 0;
        } else if (strcmp(kind, "rate") == 0) {
            const cJSON *exp = get(c, "expected");
            ok = got && cJSON_GetArraySize(got) == cJSON_GetArraySize(exp);
            for (int i = 0; ok && i < cJSON_GetArraySize(exp); i++) {
                const cJSON *e = cJSON_GetArrayItem(exp, i), *g = cJSON_GetArrayItem(got, i);
                const cJSON *wait = get(e, "retryAfterMs");
                ok = cJSON_IsTrue(get(g, "allowed")) == cJSON_IsTrue(get(e, "allowed")) &&
                     (!wait || (get(g, "retry_after_ms") && get(g, "retry_after_ms")->valuedouble == wait->valuedouble));
            }
        }
        check(ok, id, code ? code : "mismatch");
        cJSON_Delete(got);
        cJSON_Delete(args);
    }
    check(vector_counts("scratchpad-v1.json", total, executed, skipped, filtered) && skipped == 0, "scratchpad-v1.json",
          "cases not executed");
    cJSON_Delete(doc);
    free(text);
    return executed;
}

static void store_round_trip(const char *scratch) {
    char path[4096];
    snprintf(path, sizeof path, "%s/pad.sqlite", scratch);
    remove(path);
    aic_pad *pad = NULL;
    aic_error *err = NULL;
    aic_status st = aic_pad_open(path, strlen(path), NULL, 0, &pad, &err);
    check(st == AIC_STATUS_OK && pad, "open", err ? aic_error_message(err) : NULL);
    aic_error_free(err);

    cJSON *args = cJSON_Parse("{\"from\":\"a\",\"to\":\"b\",\"privacy\":\"private\",\"content\":\"h\\u00e9\"}");
    const char *msg = NULL;
    cJSON *posted = request(pad, "post", args, &st, &msg);
    check(posted && cJSON_IsString(get(posted, "id")), "post", msg);
    cJSON_Delete(args);
    args = cJSON_Parse("{\"agent\":\"b\"}");
    cJSON *unread = request(pad, "unread", args, &st, NULL);
    check(unread && cJSON_GetArraySize(unread) == 1 &&
              strcmp(get(cJSON_GetArrayItem(unread, 0), "content")->valuestring, "h\xc3\xa9") == 0 &&
              strcmp(get(cJSON_GetArrayItem(unread, 0), "id")->valuestring, get(posted, "id")->valuestring) == 0,
          "unread returns the post", NULL);
    cJSON_Delete(unread);
    unread = request(pad, "unread", args, &st, NULL);
    check(unread && cJSON_GetArraySize(unread) == 0, "unread is read-once", NULL);
    cJSON_Delete(unread);
    cJSON_Delete(args);
    cJSON_Delete(posted);

    /* Refusals: stable codes, and nothing changes. */
    struct { const char *op, *args; aic_status want; } bad[] = {
        {"post", "{\"from\":\"a\",\"content\":\"x\",\"ttl_hours\":0}", AIC_STATUS_INVALID_TTL},
        {"post", "{\"from\":\"a\",\"content\":\"x\",\"ttl_hours\":100000}", AIC_STATUS_INVALID_TTL},
        {"post", "{\"from\":\"a\",\"content\":\"x\",\"ttl_hours\":0.5}", AIC_STATUS_INVALID_TTL},
        {"post", "{\"from\":\"a\",\"content\":\"x\",\"privacy\":\"private\"}", AIC_STATUS_PRIVATE_WITHOUT_RECIPIENT},
        {"post", "{\"from\":\"a\",\"content\":\"x\",\"privacy\":\"loud\"}", AIC_STATUS_INVALID_ARGUMENT},
        {"post", "{\"from\":1,\"content\":\"x\"}", AIC_STATUS_INVALID_ARGUMENT},
        {"post", "{\"from\":\"a\",\"to\":\"b\",\"Privacy\":\"private\",\"content\":\"x\"}", AIC_STATUS_UNKNOWN_KEY},
        {"post", "{\"from\":\"a\",\"content\":\"x\",\"ttl\":1}", AIC_STATUS_UNKNOWN_KEY},
        {"post", "{\"from\":\"a\",\"content\":\"a\\ud800b\"}", AIC_STATUS_UNPAIRED_SURROGATE},
        {"task.get", "{\"id\":\"missing\",\"agent\":\"a\"}", AIC_STATUS_NOT_FOUND},
        {"task.get", "{\"id\":\"missing\"}", AIC_STATUS_INVALID_ARGUMENT},
        {"nonsense", "{}", AIC_STATUS_INVALID_ARGUMENT},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *out = NULL;
        err = NULL;
        st = aic_pad_request(pad, bad[i].op, strlen(bad[i].op), bad[i].args, strlen(bad[i].args), &out, NULL, &err);
        check(st == bad[i].want && out == NULL && aic_error_code(err) == st && strlen(aic_error_message(err)) > 0,
              bad[i].args, aic_status_name(st));
        aic_error_free(err);
    }
    char *out = NULL;
    st = aic_pad_request(pad, "post", 4, "{not json", 9, &out, NULL, NULL);
    check(st == AIC_STATUS_INVALID_JSON, "bad JSON", aic_status_name(st));
    st = aic_pad_request(pad, "post", 4, "{\"from\":\"a\",\"content\":\"\xff\"}", 26, &out, NULL, NULL);
    check(st == AIC_STATUS_INVALID_UTF8, "invalid UTF-8", aic_status_name(st));
    st = aic_pad_request(NULL, "post", 4, "{}", 2, &out, NULL, NULL);
    check(st == AIC_STATUS_NULL_POINTER, "NULL pad", aic_status_name(st));
    st = aic_pad_request(pad, "list", 4, "{\"agent\":\"z\"}", 13, NULL, NULL, NULL);
    check(st == AIC_STATUS_NULL_POINTER, "NULL out", aic_status_name(st));
    st = aic_pad_request(pad, NULL, 5, NULL, 0, &out, NULL, NULL);
    check(st == AIC_STATUS_NULL_POINTER, "NULL op with a length", aic_status_name(st));
    args = cJSON_Parse("{\"agent\":\"a\",\"limit\":1000}");
    cJSON *page = request(pad, "list", args, &st, NULL);
    check(page && cJSON_GetArraySize(get(page, "messages")) == 1, "refusals stored nothing", NULL);
    cJSON_Delete(page);
    cJSON_Delete(args);
    aic_pad_close(pad);
    aic_pad_close(NULL);

    /* A file that is not a database is refused and left as it was. */
    snprintf(path, sizeof path, "%s/not-a-db.sqlite", scratch);
    FILE *f = fopen(path, "wb");
    const char junk[] = "this is not a database, and it must stay exactly like this............";
    fwrite(junk, 1, sizeof junk, f);
    fclose(f);
    pad = NULL;
    err = NULL;
    st = aic_pad_open(path, strlen(path), NULL, 0, &pad, &err);
    check(st == AIC_STATUS_STORE_CORRUPT && pad == NULL, "corrupt store refused", aic_status_name(st));
    aic_error_free(err);
    char *after = read_text(path);
    check(memcmp(after, junk, sizeof junk) == 0, "corrupt store untouched", NULL);
    free(after);
    remove(path);
    st = aic_pad_open(path, strlen(path), "{\"per_project_cap\":0}", 21, &pad, NULL);
    check(st == AIC_STATUS_INVALID_ARGUMENT && pad == NULL, "bad option", aic_status_name(st));
    st = aic_pad_open(path, strlen(path), "{\"colour\":1}", 12, &pad, NULL);
    check(st == AIC_STATUS_UNKNOWN_KEY && pad == NULL, "unknown option", aic_status_name(st));
    st = aic_pad_open(NULL, 0, NULL, 0, &pad, NULL);
    check(st == AIC_STATUS_INVALID_ARGUMENT, "empty path", aic_status_name(st));
    remove(path);

    /* A planted (dangling) symbolic link at the store path is refused; nothing is created. */
    char target[4096];
    snprintf(path, sizeof path, "%s/linked.sqlite", scratch);
    snprintf(target, sizeof target, "%s/elsewhere.sqlite", scratch);
    check(symlink(target, path) == 0, "symlink", NULL);
    pad = NULL;
    st = aic_pad_open(path, strlen(path), NULL, 0, &pad, NULL);
    check(st == AIC_STATUS_STORE_IO && pad == NULL, "symlinked store refused", aic_status_name(st));
    FILE *through = fopen(target, "rb");
    check(through == NULL, "nothing created through the link", NULL);
    if (through) fclose(through);
    remove(path);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "vectors";
    const char *scratch = argc > 2 ? argv[2] : "/tmp";
    run_vectors(dir, scratch);
    store_round_trip(scratch);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
