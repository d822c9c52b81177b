/* Every (pointer, length) argument of every export, at the edges of the C ABI contract:
 * - a length (or element count, or output capacity) no C object can have, SIZE_MAX and
 *   PTRDIFF_MAX + 1 (and, for element arrays, a count whose byte size passes PTRDIFF_MAX), is
 *   AIC_STATUS_INVALID_ARGUMENT naming the argument, whatever the pointer (the buffers here are
 *   one element long: a length that got through would be read past them; a debug build of the
 *   library aborts on forming such a slice);
 * - NULL with a non-zero length is AIC_STATUS_NULL_POINTER naming the argument;
 * - NULL with length 0 behaves exactly as a non-NULL empty input;
 * then every required output pointer refused when NULL, the optional ones accepted, and every
 * release function and handle accessor given NULL. Prints "N passed, N failed".
 * Usage: hardening [function]   (only the arguments of that function) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_intercom.h"

static int passed, failed;

static void check(int ok, const char *function, const char *label, const char *what) {
    if (ok) passed++;
    else { failed++; fprintf(stderr, "FAIL %s(%s): %s\n", function, label, what); }
}
#define CHECK(cond) check((cond), __func__, "", #cond)

/* One-element buffers: any read past them is a bug ASan reports. */
static char X[] = "x";
static aic_candidate CANDS[1] = {{"id-1", 4, "w", 1, NULL, 0}};
static size_t IDX[1];

/* A path no directory can be created under, so broker and store calls fail after reading their
 * inputs instead of starting anything. */
#define NO_DIR "/dev/null/aic-hardening"

/* Calls one export with (p, n) as its argument number `which` and valid values elsewhere. */
typedef aic_status (*call_fn)(int which, void *p, size_t n, aic_error **err);

static aic_status scope_parse(int which, void *p, size_t n, aic_error **err) {
    (void)which;
    aic_scope_kind kind;
    return aic_scope_parse(p, n, &kind, err);
}

static aic_status same_scope(int which, void *p, size_t n, aic_error **err) {
    bool same;
    return which == 0 ? aic_same_scope(p, n, NULL, 0, &same, err) : aic_same_scope(NULL, 0, p, n, &same, err);
}

/* The three functions over a candidate array; ID is the selector / actor id / subject id. */
enum { RESOLVE, LIST, AUDIENCE };
enum { CANDIDATES, CAND_ID, CAND_NAME, CAND_SCOPE, ID, SCOPE, INDICES };

static aic_status routing(int fn, int which, void *p, size_t n, aic_error **err) {
    aic_candidate one[1] = {{"id-1", 4, "w", 1, NULL, 0}};
    const aic_candidate *cands = one;
    size_t count = 1, cap = 1, found = 99;
    const char *id = "id-1", *scope = NULL;
    size_t id_len = 4, scope_len = 0;
    size_t *indices = IDX;
    switch (which) {
    case CANDIDATES: cands = p; count = n; break;
    case CAND_ID: one[0].id = p; one[0].id_len = n; break;
    case CAND_NAME: one[0].name = p; one[0].name_len = n; break;
    case CAND_SCOPE: one[0].scope = p; one[0].scope_len = n; break;
    case ID: id = p; id_len = n; break;
    case SCOPE: scope = p; scope_len = n; break;
    case INDICES: indices = p; cap = n; break;
    }
    aic_resolve_kind kind;
    switch (fn) {
    case RESOLVE: return aic_resolve_target(cands, count, scope, scope_len, id, id_len, &kind, indices, cap, &found, err);
    case LIST: return aic_list_visible(cands, count, id, id_len, scope, scope_len, indices, cap, &found, err);
    default:
        return aic_audience(AIC_AUDIENCE_EVENT_SESSION_LEFT, cands, count, id, id_len, scope, scope_len, indices, cap, &found, err);
    }
}
static aic_status resolve_target(int which, void *p, size_t n, aic_error **err) { return routing(RESOLVE, which, p, n, err); }
static aic_status list_visible(int which, void *p, size_t n, aic_error **err) { return routing(LIST, which, p, n, err); }
static aic_status audience(int which, void *p, size_t n, aic_error **err) { return routing(AUDIENCE, which, p, n, err); }

static aic_status resolve_target_json(int which, void *p, size_t n, aic_error **err) {
    char *out = NULL;
    aic_status st;
    if (which == 0) st = aic_resolve_target_json(p, n, NULL, 0, "w", 1, &out, NULL, err);
    else if (which == 1) st = aic_resolve_target_json("[]", 2, p, n, "w", 1, &out, NULL, err);
    else st = aic_resolve_target_json("[]", 2, NULL, 0, p, n, &out, NULL, err);
    aic_string_free(out);
    return st;
}

static aic_status plan_replacement(int which, void *p, size_t n, aic_error **err) {
    aic_replacement_plan plan;
    return which == 0 ? aic_plan_replacement(p, n, NULL, 0, &plan, err) : aic_plan_replacement(NULL, 0, p, n, &plan, err);
}

static aic_status canonical_json(int which, void *p, size_t n, aic_error **err) {
    (void)which;
    char *out = NULL;
    aic_status st = aic_canonical_json(p, n, &out, NULL, err);
    aic_string_free(out);
    return st;
}

/* A valid aic_check_ask_json input. */
#define ASK "{\"edges\":[],\"send\":{\"from\":\"a\",\"to\":\"b\"},\"maxOpenAsks\":1}"

static aic_status check_ask_json(int which, void *p, size_t n, aic_error **err) {
    (void)which;
    char *out = NULL;
    aic_status st = aic_check_ask_json(p, n, &out, NULL, err);
    aic_string_free(out);
    return st;
}

static aic_status canonical_hash(int which, void *p, size_t n, aic_error **err) {
    char hex[AIC_HASH_HEX_LEN + 1];
    return which == 0 ? aic_canonical_hash(p, n, "{}", 2, hex, err) : aic_canonical_hash("d", 1, p, n, hex, err);
}

static aic_status broker_start(int which, void *p, size_t n, aic_error **err) {
    aic_broker *broker = NULL;
    /* agent_dir: a bad setting fails the call before anything starts; settings: NO_DIR fails it */
    aic_status st = which == 0 ? aic_broker_start(p, n, "not-a-setting", 13, &broker, err)
                               : aic_broker_start(NO_DIR, strlen(NO_DIR), p, n, &broker, err);
    aic_broker_free(broker);
    return st;
}

static aic_status pad_open(int which, void *p, size_t n, aic_error **err) {
    aic_pad *pad = NULL;
    aic_status st = which == 0 ? aic_pad_open(p, n, NULL, 0, &pad, err)
                               : aic_pad_open(NO_DIR "/pad.db", strlen(NO_DIR "/pad.db"), p, n, &pad, err);
    aic_pad_close(pad);
    return st;
}

static aic_status pad_request(int which, void *p, size_t n, aic_error **err) {
    char *out = NULL;
    aic_status st = which == 0 ? aic_pad_request(NULL, p, n, "{}", 2, &out, NULL, err)
                               : aic_pad_request(NULL, "check.ttl", 9, p, n, &out, NULL, err);
    aic_string_free(out);
    return st;
}

static const struct arg {
    const char *function;
    const char *label; /* how error messages name the argument */
    call_fn call;
    int which;
    void *valid;       /* a real one-element buffer for it */
    size_t elem;       /* its element size */
} ARGS[] = {
    {"aic_scope_parse", "scopeId", scope_parse, 0, X, 1},
    {"aic_same_scope", "left", same_scope, 0, X, 1},
    {"aic_same_scope", "right", same_scope, 1, X, 1},
#define ROUTING(fn, call, id_label, scope_label)                                 \
    {fn, "candidates", call, CANDIDATES, CANDS, sizeof(aic_candidate)},          \
    {fn, "candidates[0].id", call, CAND_ID, X, 1},                               \
    {fn, "candidates[0].name", call, CAND_NAME, X, 1},                           \
    {fn, "candidates[0].scope", call, CAND_SCOPE, X, 1},                         \
    {fn, id_label, call, ID, X, 1},                                              \
    {fn, scope_label, call, SCOPE, X, 1},                                        \
    {fn, "out_indices", call, INDICES, IDX, sizeof(size_t)}
    ROUTING("aic_resolve_target", resolve_target, "selector", "actorScope"),
    ROUTING("aic_list_visible", list_visible, "actorId", "actorScope"),
    ROUTING("aic_audience", audience, "subjectId", "subjectScope"),
#undef ROUTING
    {"aic_resolve_target_json", "candidates", resolve_target_json, 0, X, 1},
    {"aic_resolve_target_json", "actorScope", resolve_target_json, 1, X, 1},
    {"aic_resolve_target_json", "selector", resolve_target_json, 2, X, 1},
    {"aic_plan_replacement", "oldScope", plan_replacement, 0, X, 1},
    {"aic_plan_replacement", "newScope", plan_replacement, 1, X, 1},
    {"aic_canonical_json", "json", canonical_json, 0, X, 1},
    {"aic_canonical_hash", "domain", canonical_hash, 0, X, 1},
    {"aic_canonical_hash", "json", canonical_hash, 1, X, 1},
    {"aic_check_ask_json", "json", check_ask_json, 0, X, 1},
    {"aic_broker_start", "agent_dir", broker_start, 0, X, 1},
    {"aic_broker_start", "settings", broker_start, 1, X, 1},
    {"aic_pad_open", "path", pad_open, 0, X, 1},
    {"aic_pad_open", "options_json", pad_open, 1, X, 1},
    {"aic_pad_request", "op", pad_request, 0, X, 1},
    {"aic_pad_request", "args_json", pad_request, 1, X, 1},
};

/* The message names the argument: it starts with its label and a space. */
static int names(const aic_error *err, const char *label) {
    const char *m = aic_error_message(err);
    size_t n = strlen(label);
    return strncmp(m, label, n) == 0 && m[n] == ' ';
}

static void refused(const struct arg *a, void *p, size_t n, const char *what) {
    aic_error *err = NULL;
    aic_status st = a->call(a->which, p, n, &err);
    int ok = st == AIC_STATUS_INVALID_ARGUMENT && err && aic_error_code(err) == st && names(err, a->label) &&
             strstr(aic_error_message(err), "PTRDIFF_MAX") != NULL;
    char why[512];
    snprintf(why, sizeof why, "%s: want INVALID_ARGUMENT naming it, got %s \"%s\"", what, aic_status_name(st),
             aic_error_message(err));
    check(ok, a->function, a->label, why);
    aic_error_free(err);
}

static void run(const struct arg *a) {
    const size_t over = (size_t)PTRDIFF_MAX + 1;
    refused(a, a->valid, SIZE_MAX, "length SIZE_MAX");
    refused(a, a->valid, over, "length PTRDIFF_MAX + 1");
    refused(a, NULL, SIZE_MAX, "NULL with length SIZE_MAX");
    if (a->elem > 1) refused(a, a->valid, (size_t)PTRDIFF_MAX / a->elem + 1, "count * element size past PTRDIFF_MAX");

    aic_error *err = NULL;
    aic_status st = a->call(a->which, NULL, 1, &err);
    check(st == AIC_STATUS_NULL_POINTER && err && names(err, a->label), a->function, a->label,
          "NULL with length 1: want NULL_POINTER naming it");
    aic_error_free(err);

    aic_error *null_err = NULL, *empty_err = NULL;
    aic_status null_st = a->call(a->which, NULL, 0, &null_err);
    aic_status empty_st = a->call(a->which, a->valid, 0, &empty_err);
    check(null_st == empty_st && (null_err == NULL) == (empty_err == NULL) &&
              strcmp(aic_error_message(null_err), aic_error_message(empty_err)) == 0,
          a->function, a->label, "NULL with length 0 differs from an empty input");
    aic_error_free(null_err);
    aic_error_free(empty_err);
}

/* A required output given NULL: NULL_POINTER naming it. `*err` is read here, after the call
 * that set it (an argument beside the call would be read in an unspecified order). */
static void required(aic_status st, aic_error **err, const char *function, const char *label) {
    check(st == AIC_STATUS_NULL_POINTER && *err && aic_error_code(*err) == st && names(*err, label), function, label,
          "NULL output: want NULL_POINTER naming it");
    aic_error_free(*err);
    *err = NULL;
}

static void outputs(void) {
    aic_error *err = NULL;
    aic_scope_kind kind;
    aic_resolve_kind rk;
    size_t count = 0, len = 0;
    bool same;
    char hex[AIC_HASH_HEX_LEN + 1], *json = NULL;

    required(aic_scope_parse(NULL, 0, NULL, &err), &err, "aic_scope_parse", "out_kind");
    required(aic_same_scope(NULL, 0, NULL, 0, NULL, &err), &err, "aic_same_scope", "out_same");
    required(aic_resolve_target(CANDS, 1, NULL, 0, "id-1", 4, NULL, IDX, 1, &count, &err), &err, "aic_resolve_target", "out_kind");
    required(aic_resolve_target(CANDS, 1, NULL, 0, "id-1", 4, &rk, IDX, 1, NULL, &err), &err, "aic_resolve_target", "out_count");
    required(aic_list_visible(CANDS, 1, "id-1", 4, NULL, 0, IDX, 1, NULL, &err), &err, "aic_list_visible", "out_count");
    required(aic_audience(AIC_AUDIENCE_EVENT_SESSION_LEFT, CANDS, 1, "id-1", 4, NULL, 0, IDX, 1, NULL, &err), &err, "aic_audience", "out_count");
    required(aic_resolve_target_json("[]", 2, NULL, 0, "w", 1, NULL, &len, &err), &err, "aic_resolve_target_json", "out_json");
    required(aic_plan_replacement(NULL, 0, NULL, 0, NULL, &err), &err, "aic_plan_replacement", "out_plan");
    required(aic_canonical_json("[]", 2, NULL, &len, &err), &err, "aic_canonical_json", "out_json");
    required(aic_canonical_hash("d", 1, "{}", 2, NULL, &err), &err, "aic_canonical_hash", "out_hex");
    required(aic_check_ask_json(ASK, strlen(ASK), NULL, &len, &err), &err, "aic_check_ask_json", "out_json");
    required(aic_broker_start(NO_DIR, strlen(NO_DIR), NULL, 0, NULL, &err), &err, "aic_broker_start", "out_broker");
    required(aic_pad_open(NO_DIR, strlen(NO_DIR), NULL, 0, NULL, &err), &err, "aic_pad_open", "out_pad");
    required(aic_pad_request(NULL, "check.ttl", 9, "{}", 2, NULL, &len, &err), &err, "aic_pad_request", "out_json");
    required(aic_broker_stop(NULL, &err), &err, "aic_broker_stop", "broker");
    required(aic_pad_request(NULL, "unread", 6, "{}", 2, &json, &len, &err), &err, "aic_pad_request", "pad");

    /* out_indices: a NULL buffer is refused with any non-zero capacity, even with nothing to write */
    CHECK(aic_resolve_target(CANDS, 1, NULL, 0, "nobody", 6, &rk, NULL, 0, &count, NULL) == AIC_STATUS_OK && count == 0);
    CHECK(aic_resolve_target(CANDS, 1, NULL, 0, "id-1", 4, &rk, NULL, 0, &count, NULL) == AIC_STATUS_OK && count == 1);
    required(aic_resolve_target(CANDS, 1, NULL, 0, "nobody", 6, &rk, NULL, 1, &count, &err), &err, "aic_resolve_target", "out_indices");

    /* optional: out_len and err */
    CHECK(aic_canonical_json("[]", 2, &json, NULL, NULL) == AIC_STATUS_OK && json && strcmp(json, "[]") == 0);
    aic_string_free(json);
    json = NULL;
    CHECK(aic_resolve_target_json("[]", 2, NULL, 0, "w", 1, &json, NULL, NULL) == AIC_STATUS_OK && json != NULL);
    aic_string_free(json);
    json = NULL;
    CHECK(aic_pad_request(NULL, "check.ttl", 9, "{}", 2, &json, NULL, NULL) == AIC_STATUS_OK && json != NULL);
    aic_string_free(json);
    json = NULL;
    CHECK(aic_check_ask_json(ASK, strlen(ASK), &json, NULL, NULL) == AIC_STATUS_OK && json != NULL);
    aic_string_free(json);
    CHECK(aic_protocol_v4_corpus_json(NULL) != NULL);
    CHECK(aic_scope_parse(X, SIZE_MAX, &kind, NULL) == AIC_STATUS_INVALID_ARGUMENT);
    CHECK(aic_same_scope(NULL, 0, NULL, 0, &same, NULL) == AIC_STATUS_OK && same);
    CHECK(aic_canonical_hash("d", 1, "{}", 2, hex, NULL) == AIC_STATUS_OK && strlen(hex) == AIC_HASH_HEX_LEN);

    /* releases and accessors take NULL */
    aic_error_free(NULL);
    aic_string_free(NULL);
    aic_broker_free(NULL);
    aic_pad_close(NULL);
    CHECK(aic_error_code(NULL) == AIC_STATUS_NULL_POINTER);
    CHECK(strcmp(aic_error_message(NULL), "") == 0);
    CHECK(strcmp(aic_broker_socket_path(NULL), "") == 0);
    CHECK(!aic_broker_running(NULL));
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    size_t ran = 0;
    for (size_t i = 0; i < sizeof ARGS / sizeof ARGS[0]; i++) {
        if (only && strcmp(only, ARGS[i].function) != 0) continue;
        run(&ARGS[i]);
        ran++;
    }
    if (!only) outputs();
    printf("%zu arguments; %d passed, %d failed\n", ran, passed, failed);
    return failed || ran == 0 ? 1 : 0;
}
