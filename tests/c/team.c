/* The team manifest through aic_contract_call: team.parse (text and value, every kind of
 * refusal, no value echoed), team.resolvePath, and the stat checks (team.checkDirectory,
 * team.checkFile, team.checkLength) over facts from a real lstat/fstat of a temporary
 * directory and file, as a C reader of the manifest would use them; then bad calls.
 * Prints "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_intercom.h"

static int passed, failed;

static void check(int ok, const char *what, int line) {
    if (ok) passed++;
    else { failed++; fprintf(stderr, "FAIL line %d: %s\n", line, what); }
}
#define CHECK(cond) check((cond), #cond, __LINE__)

#define RUN "team_1a2b3c4d-5e6f-47a8-b9c0-d1e2f3a4b5c6"
#define LEAD "tmuxdeck-c8f1e03a-9b4d-4c7e-81f6-a8b0c3d5e7f9"
#define WORKER "tmuxdeck-9a1b3c5d-7e9f-4a2b-84cc-8f1e03a9b4d2"
#define SECRET "secret-7a4b8c9d"
#define INVALID "ERR_TEAM_MANIFEST_INVALID"
#define UNAVAILABLE "ERR_TEAM_MANIFEST_UNAVAILABLE"

/* The answer of op over args (a JSON array), parsed; NULL (and a failed check) when the call
 * itself failed. */
static cJSON *call(const char *op, const char *args) {
    char *out = NULL;
    size_t len = 0;
    aic_error *err = NULL;
    aic_status status = aic_contract_call(op, strlen(op), args, strlen(args), &out, &len, &err);
    if (status != AIC_STATUS_OK) {
        fprintf(stderr, "FAIL %s: status %d: %s\n", op, (int)status, aic_error_message(err));
        failed++;
        aic_error_free(err);
        return NULL;
    }
    cJSON *answer = cJSON_ParseWithLength(out, len);
    if (strstr(out, SECRET)) { failed++; fprintf(stderr, "FAIL %s echoes a value: %s\n", op, out); }
    aic_string_free(out);
    return answer;
}

static int is_ok(const cJSON *answer) {
    return answer && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(answer, "ok"));
}

/* Whether the answer is a TeamManifestError with this code, message === code. */
static int is_refusal(const cJSON *answer, const char *code) {
    if (!answer || !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(answer, "ok"))) return 0;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(answer, "error");
    const char *class_ = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "class"));
    const char *message = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "message"));
    const char *c = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "code"));
    return class_ && message && c && !strcmp(class_, "TeamManifestError") && !strcmp(message, code) &&
           !strcmp(c, code) && !cJSON_GetObjectItemCaseSensitive(e, "path");
}

static int class_is(const cJSON *answer, const char *name) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(answer, "error");
    const char *class_ = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "class"));
    return class_ && !strcmp(class_, name);
}

static const cJSON *value_of(const cJSON *answer) {
    return cJSON_GetObjectItemCaseSensitive(answer, "value");
}

static const char *string_at(const cJSON *object, const char *key) {
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(object, key));
}

#define MEMBERS "[{\"sessionId\":\"" LEAD "\",\"role\":\"lead\"},{\"sessionId\":\"" WORKER "\",\"role\":\"worker\"}]"
#define MANIFEST_WITH(members, created, extra)                                                   \
    "{\"version\":\"tmuxdeck.team.v1\",\"backend\":\"tmuxdeck\",\"runId\":\"" RUN "\",\"leadId\":\"" LEAD \
    "\",\"members\":" members ",\"createdAt\":" created ",\"capabilities\":[]" extra "}"
#define MANIFEST MANIFEST_WITH(MEMBERS, "1723680000000", "")

static void constants(void) {
    cJSON *a = call("team.constants", "[]");
    const cJSON *v = value_of(a);
    CHECK(is_ok(a));
    CHECK(!strcmp(string_at(v, "TMUXDECK_TEAM_MANIFEST_VERSION"), "tmuxdeck.team.v1"));
    CHECK(!strcmp(string_at(v, "TMUXDECK_TEAM_MANIFEST_BACKEND"), "tmuxdeck"));
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(v, "MAX_TEAM_MANIFEST_BYTES")) == 65536);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(v, "MAX_TEAM_MANIFEST_MEMBERS")) == 64);
    const cJSON *codes = cJSON_GetObjectItemCaseSensitive(v, "codes");
    CHECK(!strcmp(string_at(codes, "INVALID"), INVALID) && !strcmp(string_at(codes, "UNAVAILABLE"), UNAVAILABLE));
    cJSON_Delete(a);
}

/* args: a JSON array holding the manifest as a value; the same again with it as a JSON string. */
static void parse_both(const char *manifest, int valid) {
    size_t n = strlen(manifest);
    char *as_value = malloc(n + 3);
    snprintf(as_value, n + 3, "[%s]", manifest);
    cJSON *list = cJSON_CreateArray();
    cJSON_AddItemToArray(list, cJSON_CreateString(manifest));
    char *as_text = cJSON_PrintUnformatted(list);
    const char *forms[2] = {as_value, as_text};
    for (int i = 0; i < 2; i++) {
        cJSON *a = call("team.parse", forms[i]);
        if (valid) {
            const cJSON *v = value_of(a);
            CHECK(is_ok(a));
            CHECK(string_at(v, "runId") && !strcmp(string_at(v, "runId"), RUN));
            CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(v, "members")) >= 1);
            CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(v, "capabilities")) == 0);
        } else {
            if (!is_refusal(a, INVALID)) fprintf(stderr, "  (input %s)\n", forms[i]);
            CHECK(is_refusal(a, INVALID));
        }
        cJSON_Delete(a);
    }
    free(as_value);
    cJSON_free(as_text);
    cJSON_Delete(list);
}

static void parse(void) {
    parse_both(MANIFEST, 1);
    parse_both(MANIFEST_WITH("[{\"sessionId\":\"" LEAD "\",\"role\":\"lead\"}]", "1", ""), 1);
    /* The answer is the fresh manifest, in the TypeScript key order. */
    cJSON *a = call("team.parse", "[" MANIFEST_WITH(MEMBERS, "1723680000000", "") "]");
    const cJSON *first = value_of(a) ? value_of(a)->child : NULL;
    CHECK(first && !strcmp(first->string, "version"));
    cJSON_Delete(a);

    const char *bad[] = {
        MANIFEST_WITH(MEMBERS, "1723680000000", ",\"scope\":\"" SECRET "\""),
        MANIFEST_WITH(MEMBERS, "1723680000000", ",\"cwd\":\"/home/" SECRET "\""),
        MANIFEST_WITH(MEMBERS, "0", ""),
        MANIFEST_WITH(MEMBERS, "-0", ""),
        MANIFEST_WITH(MEMBERS, "1.5", ""),
        MANIFEST_WITH(MEMBERS, "9007199254740992", ""),
        MANIFEST_WITH(MEMBERS, "\"" SECRET "\"", ""),
        MANIFEST_WITH("[]", "1", ""),
        MANIFEST_WITH("[{\"sessionId\":\"" WORKER "\",\"role\":\"worker\"}]", "1", ""),
        MANIFEST_WITH("[{\"sessionId\":\"" LEAD "\",\"role\":\"worker\"}]", "1", ""),
        MANIFEST_WITH("[{\"sessionId\":\"" LEAD "\",\"role\":\"lead\"},{\"sessionId\":\"" LEAD "\",\"role\":\"lead\"}]", "1", ""),
        MANIFEST_WITH("[{\"sessionId\":\"" LEAD "\",\"role\":\"lead\",\"x\":\"" SECRET "\"}]", "1", ""),
        MANIFEST_WITH("[{\"sessionId\":\"" SECRET "\",\"role\":\"lead\"}]", "1", ""),
        MANIFEST_WITH("{}", "1", ""),
        "[]", "null", "\"" SECRET "\"", "{}", "1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) parse_both(bad[i], 0);

    /* Text-only refusals: not JSON, a BOM. */
    cJSON *t = call("team.parse", "[\"{" SECRET "\"]");
    CHECK(is_refusal(t, INVALID));
    cJSON_Delete(t);
    t = call("team.parse", "[\"\\ufeff{}\"]");
    CHECK(is_refusal(t, INVALID));
    cJSON_Delete(t);
    /* Repeated key in the text: the last wins, as JSON.parse. */
    cJSON *list = cJSON_CreateArray();
    cJSON_AddItemToArray(list, cJSON_CreateString(MANIFEST_WITH(MEMBERS, "5", ",\"createdAt\":7")));
    char *args = cJSON_PrintUnformatted(list);
    t = call("team.parse", args);
    CHECK(is_ok(t) && cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(value_of(t), "createdAt")) == 7);
    cJSON_Delete(t);
    cJSON_free(args);
    cJSON_Delete(list);
}

static void resolve(void) {
    cJSON *a = call("team.resolvePath", "[\"  \"]");
    CHECK(is_ok(a) && !value_of(a));
    cJSON_Delete(a);
    a = call("team.resolvePath", "[null]");
    CHECK(is_ok(a) && !value_of(a));
    cJSON_Delete(a);
    a = call("team.resolvePath", "[\"" SECRET "/team.json\"]");
    CHECK(is_refusal(a, INVALID));
    cJSON_Delete(a);
    a = call("team.resolvePath", "[\"\\ufeff /run/teams/team.json\\n\"]");
    CHECK(is_ok(a) && !strcmp(string_at(value_of(a), "path"), "/run/teams/team.json"));
    CHECK(is_ok(a) && !strcmp(string_at(value_of(a), "parent"), "/run/teams"));
    cJSON_Delete(a);
}

/* Facts JSON of a struct stat. */
static void facts(char *out, size_t cap, const struct stat *st) {
    snprintf(out, cap,
             "{\"directory\":%s,\"file\":%s,\"symlink\":%s,\"mode\":%lu,\"uid\":%lu,\"size\":%lld,"
             "\"dev\":%lu,\"ino\":%lu}",
             S_ISDIR(st->st_mode) ? "true" : "false", S_ISREG(st->st_mode) ? "true" : "false",
             S_ISLNK(st->st_mode) ? "true" : "false", (unsigned long)st->st_mode, (unsigned long)st->st_uid,
             (long long)st->st_size, (unsigned long)st->st_dev, (unsigned long)st->st_ino);
}

static int check_op(const char *op, const char *stat, unsigned long uid, const char *before, const char *code) {
    char args[1024];
    if (before) snprintf(args, sizeof args, "[%s,%lu,%s]", stat, uid, before);
    else snprintf(args, sizeof args, "[%s,%lu]", stat, uid);
    cJSON *a = call(op, args);
    int ok = code ? is_refusal(a, code) : is_ok(a) && !value_of(a);
    cJSON_Delete(a);
    return ok;
}

/* A C reader: lstat the directory and the file, ask the core, open O_NOFOLLOW, fstat, ask
 * again with the lstat as `before`, read, ask about the length, parse. */
static void files(void) {
    char dir[] = "/tmp/aic-team-XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); failed++; return; }
    char path[256], other[256];
    snprintf(path, sizeof path, "%s/team.json", dir);
    snprintf(other, sizeof other, "%s/other.json", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    const char *text = MANIFEST;
    CHECK(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    fd = open(other, O_WRONLY | O_CREAT | O_EXCL, 0644);
    close(fd);
    unsigned long uid = (unsigned long)getuid();

    struct stat ds, ls, fs, os;
    char dfacts[512], lfacts[512], ffacts[512], ofacts[512];
    CHECK(lstat(dir, &ds) == 0 && lstat(path, &ls) == 0 && lstat(other, &os) == 0);
    facts(dfacts, sizeof dfacts, &ds);
    facts(lfacts, sizeof lfacts, &ls);
    facts(ofacts, sizeof ofacts, &os);
    CHECK(check_op("team.checkDirectory", dfacts, uid, NULL, NULL));
    CHECK(check_op("team.checkDirectory", dfacts, uid + 1, NULL, UNAVAILABLE));
    CHECK(check_op("team.checkDirectory", lfacts, uid, NULL, UNAVAILABLE));
    CHECK(check_op("team.checkFile", lfacts, uid, NULL, NULL));
    CHECK(check_op("team.checkFile", lfacts, uid + 1, NULL, UNAVAILABLE));
    CHECK(check_op("team.checkFile", dfacts, uid, NULL, UNAVAILABLE));
    CHECK(check_op("team.checkFile", ofacts, uid, NULL, UNAVAILABLE)); /* mode 0644 */

    fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    CHECK(fd >= 0 && fstat(fd, &fs) == 0);
    facts(ffacts, sizeof ffacts, &fs);
    CHECK(check_op("team.checkFile", ffacts, uid, lfacts, NULL));
    CHECK(check_op("team.checkFile", ffacts, uid, ofacts, UNAVAILABLE)); /* another file */
    CHECK(check_op("team.checkDirectory", dfacts, uid, dfacts, NULL));
    char buf[65537 + 1];
    ssize_t n = read(fd, buf, 65537);
    close(fd);
    CHECK(n == (ssize_t)strlen(text));
    char args[64];
    snprintf(args, sizeof args, "[%zd]", n);
    cJSON *a = call("team.checkLength", args);
    CHECK(is_ok(a));
    cJSON_Delete(a);
    a = call("team.checkLength", "[65537]");
    CHECK(is_refusal(a, UNAVAILABLE));
    cJSON_Delete(a);
    buf[n > 0 ? n : 0] = 0;
    cJSON *list = cJSON_CreateArray();
    cJSON_AddItemToArray(list, cJSON_CreateString(buf));
    char *parse_args = cJSON_PrintUnformatted(list);
    a = call("team.parse", parse_args);
    CHECK(is_ok(a) && !strcmp(string_at(value_of(a), "leadId"), LEAD));
    cJSON_Delete(a);
    cJSON_free(parse_args);
    cJSON_Delete(list);

    /* Mode 0755 on the directory. */
    chmod(dir, 0755);
    CHECK(lstat(dir, &ds) == 0);
    facts(dfacts, sizeof dfacts, &ds);
    CHECK(check_op("team.checkDirectory", dfacts, uid, NULL, UNAVAILABLE));
    unlink(path);
    unlink(other);
    rmdir(dir);
}

static void bad_calls(void) {
    /* Malformed facts are a caller's mistake: a TypeError, still a refusal. */
    cJSON *a = call("team.checkFile", "[{\"file\":true},1]");
    CHECK(a && !is_ok(a) && class_is(a, "TypeError"));
    cJSON_Delete(a);
    a = call("team.checkFile", "[{\"directory\":false,\"file\":true,\"symlink\":false,\"mode\":-1,\"uid\":1},1]");
    CHECK(a && !is_ok(a) && class_is(a, "TypeError"));
    cJSON_Delete(a);
    a = call("team.checkDirectory", "[{\"directory\":true,\"file\":false,\"symlink\":false,\"mode\":448,\"uid\":1},null]");
    CHECK(a && !is_ok(a) && class_is(a, "TypeError"));
    cJSON_Delete(a);
    /* No uid (a platform without one): no ownership check. */
    a = call("team.checkDirectory", "[{\"directory\":true,\"file\":false,\"symlink\":false,\"mode\":448,\"uid\":1}]");
    CHECK(is_ok(a));
    cJSON_Delete(a);
    a = call("team.parse", "[]");
    CHECK(is_refusal(a, INVALID));
    cJSON_Delete(a);

    char *out = NULL;
    aic_error *err = NULL;
    CHECK(aic_contract_call("team.nope", 9, "[]", 2, &out, NULL, &err) == AIC_STATUS_INVALID_ARGUMENT);
    aic_error_free(err);
    err = NULL;
    CHECK(aic_contract_call("team.parse", 10, "{}", 2, &out, NULL, &err) == AIC_STATUS_INVALID_ARGUMENT);
    aic_error_free(err);
    err = NULL;
    CHECK(aic_contract_call("team.parse", 10, "[", 1, &out, NULL, &err) == AIC_STATUS_INVALID_JSON);
    aic_error_free(err);
    err = NULL;
    CHECK(aic_contract_call("team.parse", 10, "[\xff]", 3, &out, NULL, &err) != AIC_STATUS_OK);
    aic_error_free(err);
    err = NULL;
    CHECK(aic_contract_call("team.parse", 10, NULL, 1, &out, NULL, &err) == AIC_STATUS_NULL_POINTER);
    aic_error_free(err);
    CHECK(out == NULL);
}

int main(void) {
    constants();
    parse();
    resolve();
    files();
    bad_calls();
    printf("team: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
