/* The C client (aic_client_*) against a broker started in this process: registration, frames
 * both ways, refusals as the broker's codes and texts, a closed connection (never SIGPIPE), and
 * the remote-access flow (enrollment, register over the gateway, reconnect with the session
 * credential, child enrollment, inspection, revocation), and the opt-in extensions of
 * docs/hub.md (the offline queue, read receipts, delivery_status) as generic frames. Then against a fake broker that answers
 * register with each case of vectors/broker-client-v1.json, which the Rust client and Node's
 * connect() run too: the same code, message and closing for every answer.
 *
 * Usage: client [vectors-dir] (default: vectors). The remote flow runs against our broker's
 * gateway; AIC_REMOTE_AGENT_DIR=<agentDir> runs it against the broker already running there (the
 * Pi adapter's, say) instead. AIC_VECTOR=<substring> runs only the matching cases.
 * Prints "N passed, N failed, N skipped". */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "agent_intercom.h"
#include "support.h"

static int passed, failed, skipped;
#define CHECK(cond) do { if (cond) passed++; else { failed++; fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)

#define SESSION "{\"cwd\":\"/c\",\"model\":\"c\",\"pid\":1,\"startedAt\":1,\"lastActivity\":1}"

/* The status of a call and its error: keeps the message in last_message, frees the error
 * (and sets *err to NULL). `err` is passed by address: the call that fills it is another
 * argument, evaluated in no particular order. */
static char last_message[1024];
static aic_status take(aic_status status, aic_error **err) {
    snprintf(last_message, sizeof last_message, "%s", *err ? aic_error_message(*err) : "");
    if (*err) CHECK(aic_error_code(*err) == status);
    else CHECK(status == AIC_STATUS_OK);
    aic_error_free(*err);
    *err = NULL;
    return status;
}

static aic_client *connect_to(const char *path) {
    aic_client *c = NULL;
    aic_error *err = NULL;
    aic_status st = take(aic_client_connect(path, strlen(path), &c, &err), &err);
    if (st != AIC_STATUS_OK) fprintf(stderr, "connect %s: %s\n", path, last_message);
    return c;
}

/* A frame of this library parsed (cJSON_Delete it), the string released; NULL for NULL. */
static cJSON *parsed(char *json) {
    if (!json) return NULL;
    cJSON *frame = cJSON_Parse(json);
    aic_string_free(json);
    return frame;
}

/* Registers; on success returns the registered frame parsed (cJSON_Delete it). */
static cJSON *reg(aic_client *c, const char *request, aic_status *status) {
    char *json = NULL;
    size_t len = 0;
    aic_error *err = NULL;
    *status = take(aic_client_register(c, request, strlen(request), &json, &len, &err), &err);
    if (*status != AIC_STATUS_OK) return NULL;
    CHECK(json != NULL && strlen(json) == len);
    return parsed(json);
}

static aic_status send_text(aic_client *c, const char *frame) {
    aic_error *err = NULL;
    return take(aic_client_send_frame(c, frame, strlen(frame), &err), &err);
}

/* The next frame (parsed) within timeout_ms; NULL when none came or the call failed (*status). */
static cJSON *recv_json(aic_client *c, uint32_t timeout_ms, aic_status *status) {
    char *json = NULL;
    aic_error *err = NULL;
    *status = take(aic_client_recv_frame(c, timeout_ms, &json, NULL, &err), &err);
    return parsed(json);
}

/* The next frame of this type, skipping others (at most 50 frames, 5 s each). */
static cJSON *expect(aic_client *c, const char *type) {
    for (int i = 0; i < 50; i++) {
        aic_status st;
        cJSON *f = recv_json(c, 5000, &st);
        if (!f) return NULL;
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(f, "type");
        if (cJSON_IsString(t) && strcmp(t->valuestring, type) == 0) return f;
        cJSON_Delete(f);
    }
    return NULL;
}

static cJSON *access_control(const char *socket_path, const char *request, aic_status *status) {
    char *json = NULL;
    aic_error *err = NULL;
    *status = take(aic_client_access_control(socket_path, strlen(socket_path), request, strlen(request), &json, NULL, &err), &err);
    return parsed(json);
}

static const char *str(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static int is(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* A reader blocked in aic_client_recv_frame until another thread closes the client. */
static void *blocked_reader(void *arg) {
    static aic_status result;
    /* Frames still due (bob's session_left) come first; then the wait that close() ends. */
    for (int i = 0; i < 50; i++) {
        char *json = NULL;
        aic_error *err = NULL;
        result = aic_client_recv_frame(arg, 60000, &json, NULL, &err);
        aic_error_free(err);
        aic_string_free(json);
        if (result != AIC_STATUS_OK) break;
    }
    return &result;
}

static void local_client(const char *socket_path) {
    aic_status st;
    aic_error *err = NULL;

    /* Conventions: NULL handles, NULL outputs, bad text. */
    aic_client *none = NULL;
    CHECK(take(aic_client_connect(NULL, 0, &none, &err), &err) == AIC_STATUS_INVALID_ARGUMENT);
    CHECK(take(aic_client_connect(socket_path, strlen(socket_path), NULL, &err), &err) == AIC_STATUS_NULL_POINTER);
    CHECK(strstr(last_message, "out_client") != NULL);
    CHECK(take(aic_client_connect("/tmp\xff", 5, &none, &err), &err) == AIC_STATUS_INVALID_UTF8);
    CHECK(take(aic_client_connect("/nonexistent/aic.sock", 21, &none, &err), &err) == AIC_STATUS_NOT_CONNECTED && none == NULL);
    CHECK(take(aic_client_send_frame(NULL, "{}", 2, &err), &err) == AIC_STATUS_NULL_POINTER);
    CHECK(take(aic_client_recv_frame(NULL, 0, NULL, NULL, &err), &err) == AIC_STATUS_NULL_POINTER);
    CHECK(take(aic_client_close(NULL, &err), &err) == AIC_STATUS_NULL_POINTER);
    aic_client_free(NULL);

    aic_client *alice = connect_to(socket_path);
    aic_client *bob = connect_to(socket_path);
    CHECK(alice && bob);
    if (!alice || !bob) return;

    /* Requests refused before anything is sent leave the connection as it was. */
    CHECK(reg(alice, "{", &st) == NULL && st == AIC_STATUS_INVALID_JSON);
    CHECK(reg(alice, "{\"session\":" SESSION ",\"sessionid\":\"a\"}", &st) == NULL && st == AIC_STATUS_UNKNOWN_KEY);
    CHECK(reg(alice, "{\"session\":" SESSION ",\"access\":{\"enrollmentToken\":\"\"}}", &st) == NULL && st == AIC_STATUS_INVALID_ARGUMENT);
    CHECK(reg(alice, "{\"session\":" SESSION ",\"access\":{\"sessionCredential\":\"c\",\"sessionId\":\"s\",\"generation\":0}}", &st) == NULL && st == AIC_STATUS_INVALID_ARGUMENT);
    CHECK(reg(alice, "{\"session\":" SESSION ",\"sessionId\":\"x\",\"access\":{\"enrollmentToken\":\"t\"}}", &st) == NULL && st == AIC_STATUS_INVALID_ARGUMENT);
    char *json = NULL;
    CHECK(take(aic_client_register(alice, "{}", 2, NULL, NULL, &err), &err) == AIC_STATUS_NULL_POINTER);
    CHECK(take(aic_client_send_frame(alice, "{\"type\":", 8, &err), &err) == AIC_STATUS_INVALID_JSON);
    CHECK(take(aic_client_send_frame(alice, "[1]", 3, &err), &err) == AIC_STATUS_INVALID_ARGUMENT);

    cJSON *registered = reg(alice, "{\"session\":" SESSION ",\"sessionId\":\"c-alice\"}", &st);
    CHECK(st == AIC_STATUS_OK && is(str(registered, "type"), "registered") && is(str(registered, "sessionId"), "c-alice"));
    CHECK(cJSON_GetObjectItemCaseSensitive(registered, "access") == NULL);
    cJSON_Delete(registered);
    registered = reg(bob, "{\"session\":" SESSION ",\"sessionId\":\"c-bob\"}", &st);
    CHECK(st == AIC_STATUS_OK && is(str(registered, "sessionId"), "c-bob"));
    cJSON_Delete(registered);

    /* A zero wait never blocks: whatever is due, then no frame (NULL, length 0). */
    size_t len = 99;
    int got = 1, ok = 1;
    for (int i = 0; i < 10 && got; i++) {
        json = NULL;
        ok &= take(aic_client_recv_frame(alice, 0, &json, &len, &err), &err) == AIC_STATUS_OK;
        got = json != NULL;
        aic_string_free(json);
    }
    CHECK(ok && !got && len == 0);

    /* A message from alice to bob, acknowledged by bob, delivered to alice. */
    CHECK(send_text(alice, "{\"type\":\"send\",\"to\":\"c-bob\",\"message\":{\"id\":\"m1\",\"timestamp\":1,\"content\":{\"text\":\"hi from C\"}}}") == AIC_STATUS_OK);
    cJSON *message = expect(bob, "message");
    CHECK(message != NULL);
    const cJSON *body = cJSON_GetObjectItemCaseSensitive(message, "message");
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(body, "content");
    CHECK(is(str(content, "text"), "hi from C"));
    char ack[512];
    snprintf(ack, sizeof ack, "{\"type\":\"message_received\",\"deliveryId\":\"%s\"}", str(message, "deliveryId") ? str(message, "deliveryId") : "");
    cJSON_Delete(message);
    CHECK(send_text(bob, ack) == AIC_STATUS_OK);
    cJSON *delivered = expect(alice, "delivered");
    CHECK(delivered && is(str(delivered, "messageId"), "m1"));
    cJSON_Delete(delivered);
    CHECK(send_text(alice, "{\"type\":\"list\",\"requestId\":\"l1\"}") == AIC_STATUS_OK);
    cJSON *sessions = expect(alice, "sessions");
    CHECK(sessions && cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(sessions, "sessions")) == 2);
    cJSON_Delete(sessions);

    /* A second register: the broker's INVALID_REQUEST with its text; it then hangs up, and a
     * send on the closed connection is NOT_CONNECTED, not a SIGPIPE. */
    CHECK(reg(bob, "{\"session\":" SESSION "}", &st) == NULL && st == AIC_STATUS_INVALID_REQUEST);
    CHECK(strcmp(last_message, "Received duplicate register message") == 0);
    CHECK(recv_json(bob, 5000, &st) == NULL && st == AIC_STATUS_NOT_CONNECTED);
    CHECK(strcmp(last_message, "the broker closed the connection") == 0);
    CHECK(send_text(bob, "{\"type\":\"list\",\"requestId\":\"l2\"}") == AIC_STATUS_NOT_CONNECTED);
    aic_client_free(bob);

    /* Closing from another thread unblocks a reader there. */
    pthread_t reader;
    CHECK(pthread_create(&reader, NULL, blocked_reader, alice) == 0);
    CHECK(take(aic_client_close(alice, &err), &err) == AIC_STATUS_OK);
    void *result = NULL;
    pthread_join(reader, &result);
    CHECK(result && *(aic_status *)result == AIC_STATUS_NOT_CONNECTED);
    CHECK(take(aic_client_close(alice, &err), &err) == AIC_STATUS_OK);
    aic_client_free(alice);

    /* `access` on the local socket: registered locally, so without the remote-access contract:
     * the client refuses it and closes the connection. */
    aic_client *local = connect_to(socket_path);
    CHECK(reg(local, "{\"session\":" SESSION ",\"access\":{\"enrollmentToken\":\"tok\"}}", &st) == NULL);
    CHECK(st == AIC_STATUS_REMOTE_ACCESS_INCOMPATIBLE);
    CHECK(recv_json(local, 0, &st) == NULL && st == AIC_STATUS_NOT_CONNECTED);
    aic_client_free(local);

    /* access_control with a wrong admin token (our broker refuses every one for now). */
    CHECK(access_control(socket_path, "{\"adminToken\":\"wrong\",\"action\":\"inspect_tree\",\"principalId\":\"p\"}", &st) == NULL);
    CHECK(st == AIC_STATUS_ACCESS_DENIED);
    CHECK(access_control(socket_path, "{\"action\":\"inspect_tree\"}", &st) == NULL && st == AIC_STATUS_INVALID_ARGUMENT);
    CHECK(access_control(socket_path, "{\"adminToken\":\"t\",\"action\":\"x\",\"typo\":1}", &st) == NULL && st == AIC_STATUS_UNKNOWN_KEY);
    CHECK(access_control("/nonexistent/aic.sock", "{\"adminToken\":\"t\",\"action\":\"x\"}", &st) == NULL && st == AIC_STATUS_NOT_CONNECTED);
}

/* The delivery_status state of one of the client's messages (malloc'd), or NULL. */
static char *delivery_state(aic_client *c, const char *message_id) {
    char request[512];
    snprintf(request, sizeof request, "{\"type\":\"delivery_status\",\"requestId\":\"st-%s\",\"messageId\":\"%s\"}", message_id, message_id);
    if (send_text(c, request) != AIC_STATUS_OK) return NULL;
    cJSON *answer = expect(c, "delivery_status");
    char rid[300];
    snprintf(rid, sizeof rid, "st-%s", message_id);
    char *state = answer && is(str(answer, "requestId"), rid) && str(answer, "state") ? strdup(str(answer, "state")) : NULL;
    cJSON_Delete(answer);
    return state;
}

static int state_is(aic_client *c, const char *message_id, const char *expected) {
    char *state = delivery_state(c, message_id);
    int same = is(state, expected);
    if (!same) fprintf(stderr, "%s: state %s, expected %s\n", message_id, state ? state : "(none)", expected);
    free(state);
    return same;
}

/* Waits until `watcher` hears session `id` leave. */
static int heard_leave(aic_client *watcher, const char *id) {
    for (int i = 0; i < 20; i++) {
        cJSON *f = expect(watcher, "session_left");
        if (!f) return 0;
        int match = is(str(f, "sessionId"), id);
        cJSON_Delete(f);
        if (match) return 1;
    }
    return 0;
}

/* The opt-in extensions (docs/hub.md) through the generic frames: a send with queue and
 * receipts to a session that is not connected is queued; the session registers again and gets
 * it; its acknowledgement is the sender's `delivered`, its message_read the sender's
 * `message_read`; delivery_status follows. A name never queues. */
static void extensions(const char *socket_path) {
    aic_status st;
    aic_client *alice = connect_to(socket_path);
    aic_client *bob = connect_to(socket_path);
    CHECK(alice && bob);
    if (!alice || !bob) return;
    cJSON *r = reg(alice, "{\"session\":" SESSION ",\"sessionId\":\"x-alice\"}", &st);
    cJSON_Delete(r);
    r = reg(bob, "{\"session\":{\"cwd\":\"/c\",\"model\":\"c\",\"pid\":1,\"startedAt\":1,\"lastActivity\":1,\"name\":\"bobby\"},\"sessionId\":\"x-bob\"}", &st);
    CHECK(st == AIC_STATUS_OK);
    cJSON_Delete(r);
    aic_client_free(bob);
    CHECK(heard_leave(alice, "x-bob"));

    CHECK(send_text(alice, "{\"type\":\"send\",\"to\":\"bobby\",\"queue\":true,\"message\":{\"id\":\"xn1\",\"timestamp\":1,\"content\":{\"text\":\"by name\"}}}") == AIC_STATUS_OK);
    cJSON *refused = expect(alice, "delivery_failed");
    CHECK(refused && is(str(refused, "code"), "SESSION_NOT_FOUND") && cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(refused, "accepted")));
    cJSON_Delete(refused);

    CHECK(send_text(alice, "{\"type\":\"send\",\"to\":\"x-bob\",\"queue\":true,\"receipts\":true,\"message\":{\"id\":\"xq1\",\"timestamp\":1,\"content\":{\"text\":\"queued in C\"}}}") == AIC_STATUS_OK);
    cJSON *queued = expect(alice, "delivery_queued");
    CHECK(queued && is(str(queued, "messageId"), "xq1"));
    char delivery[256];
    snprintf(delivery, sizeof delivery, "%s", queued && str(queued, "deliveryId") ? str(queued, "deliveryId") : "");
    cJSON_Delete(queued);
    CHECK(delivery[0] != 0);
    CHECK(state_is(alice, "xq1", "queued"));

    bob = connect_to(socket_path);
    r = reg(bob, "{\"session\":" SESSION ",\"sessionId\":\"x-bob\"}", &st);
    CHECK(st == AIC_STATUS_OK);
    cJSON_Delete(r);
    cJSON *message = expect(bob, "message");
    CHECK(message && is(str(message, "deliveryId"), delivery));
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(message, "message"), "content");
    CHECK(is(str(content, "text"), "queued in C"));
    CHECK(is(str(cJSON_GetObjectItemCaseSensitive(message, "from"), "id"), "x-alice"));
    cJSON_Delete(message);
    char frame[512];
    snprintf(frame, sizeof frame, "{\"type\":\"message_received\",\"deliveryId\":\"%s\"}", delivery);
    CHECK(send_text(bob, frame) == AIC_STATUS_OK);
    cJSON *delivered = expect(alice, "delivered");
    CHECK(delivered && is(str(delivered, "messageId"), "xq1") && is(str(delivered, "deliveryId"), delivery));
    cJSON_Delete(delivered);
    CHECK(state_is(alice, "xq1", "delivered"));
    snprintf(frame, sizeof frame, "{\"type\":\"message_read\",\"deliveryId\":\"%s\"}", delivery);
    CHECK(send_text(bob, frame) == AIC_STATUS_OK);
    cJSON *read = expect(alice, "message_read");
    CHECK(read && is(str(read, "messageId"), "xq1") && is(str(read, "deliveryId"), delivery));
    cJSON_Delete(read);
    CHECK(state_is(alice, "xq1", "read"));
    CHECK(state_is(bob, "xq1", "unknown"));
    aic_client_free(bob);
    aic_client_free(alice);
}

/* The admin token of the broker of an intercom directory (malloc'd), or NULL. */
static char *admin_token(const char *intercom_dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/broker-admin.json", intercom_dir);
    if (access(path, R_OK) != 0) return NULL;
    char *text = read_text(path);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const char *token = str(doc, "adminToken");
    char *copy = token ? strdup(token) : NULL;
    cJSON_Delete(doc);
    return copy;
}

/* Waits until the broker no longer counts `principal` as connected (admin inspect_tree). */
static int wait_disconnected(const char *local, const char *admin, const char *principal) {
    char request[1024];
    snprintf(request, sizeof request, "{\"adminToken\":\"%s\",\"action\":\"inspect_tree\",\"principalId\":\"%s\"}", admin, principal);
    for (int i = 0; i < 200; i++) {
        aic_status st;
        cJSON *r = access_control(local, request, &st);
        const cJSON *p;
        int connected = 0;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(r, "principals")) {
            if (is(str(p, "id"), principal) && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "connected"))) connected = 1;
        }
        cJSON_Delete(r);
        if (st == AIC_STATUS_OK && !connected) return 1;
        struct timespec pause = {0, 20 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    return 0;
}

static void remote_flow(const char *intercom_dir) {
    char local[4096], gateway[4096], request[4096];
    snprintf(local, sizeof local, "%s/broker.sock", intercom_dir);
    snprintf(gateway, sizeof gateway, "%s/remote-gateway.sock", intercom_dir);
    char *admin = admin_token(intercom_dir);
    CHECK(admin != NULL);
    CHECK(access(gateway, F_OK) == 0);
    if (!admin) return;
    aic_status st;

    /* A local root session, the parent of the enrollment. */
    aic_client *root = connect_to(local);
    cJSON *r = reg(root, "{\"session\":" SESSION ",\"sessionId\":\"c-root\"}", &st);
    CHECK(st == AIC_STATUS_OK);
    cJSON_Delete(r);

    snprintf(request, sizeof request,
             "{\"adminToken\":\"%s\",\"action\":\"issue_enrollment\",\"enrollment\":{\"name\":\"c-remote\","
             "\"parentSessionId\":\"c-root\",\"rootSessionId\":\"c-root\",\"remoteHostId\":\"c-host\","
             "\"canDelegate\":true,\"maxDepth\":3,\"maxChildren\":2}}", admin);
    cJSON *issued = access_control(local, request, &st);
    CHECK(st == AIC_STATUS_OK && is(str(issued, "action"), "issue_enrollment") && num(issued, "expiresAt") > 0);
    char token[512];
    snprintf(token, sizeof token, "%s", str(issued, "enrollmentToken") ? str(issued, "enrollmentToken") : "");
    cJSON_Delete(issued);
    CHECK(token[0] != 0);

    /* Enroll over the gateway: the broker assigns the id and issues the session credential. */
    aic_client *remote = connect_to(gateway);
    snprintf(request, sizeof request, "{\"session\":" SESSION ",\"access\":{\"enrollmentToken\":\"%s\"}}", token);
    cJSON *enrolled = reg(remote, request, &st);
    CHECK(st == AIC_STATUS_OK);
    const cJSON *access_meta = cJSON_GetObjectItemCaseSensitive(enrolled, "access");
    const cJSON *contract = cJSON_GetObjectItemCaseSensitive(enrolled, "remoteAccess");
    CHECK(is(str(contract, "feature"), "remote-access-v1"));
    CHECK(is(str(access_meta, "origin"), "remote") && is(str(access_meta, "parentSessionId"), "c-root"));
    CHECK(is(str(access_meta, "rootSessionId"), "c-root") && is(str(access_meta, "remoteHostId"), "c-host"));
    CHECK(num(access_meta, "depth") == 1 && num(access_meta, "maxDepth") == 3 && num(access_meta, "maxChildren") == 2);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(access_meta, "canDelegate")));
    char id[256], credential[512];
    snprintf(id, sizeof id, "%s", str(enrolled, "sessionId") ? str(enrolled, "sessionId") : "");
    snprintf(credential, sizeof credential, "%s", str(access_meta, "sessionCredential") ? str(access_meta, "sessionCredential") : "");
    int generation = (int)num(access_meta, "generation");
    cJSON_Delete(enrolled);
    CHECK(id[0] && credential[0] && generation >= 1);

    /* The token was consumed: a replay is refused. */
    aic_client *replay = connect_to(gateway);
    CHECK(reg(replay, request, &st) == NULL && st == AIC_STATUS_ACCESS_DENIED);
    aic_client_free(replay);

    /* The credential while its session is live: refused; once it left: the same principal. */
    char access_json[1200];
    snprintf(access_json, sizeof access_json, "{\"sessionCredential\":\"%s\",\"sessionId\":\"%s\",\"generation\":%d}", credential, id, generation);
    snprintf(request, sizeof request, "{\"session\":" SESSION ",\"access\":%s}", access_json);
    aic_client *twin = connect_to(gateway);
    CHECK(reg(twin, request, &st) == NULL && st == AIC_STATUS_ACCESS_DENIED);
    aic_client_free(twin);
    aic_client_free(remote);
    CHECK(wait_disconnected(local, admin, id));
    remote = connect_to(gateway);
    cJSON *again = reg(remote, request, &st);
    CHECK(st == AIC_STATUS_OK && is(str(again, "sessionId"), id));
    access_meta = cJSON_GetObjectItemCaseSensitive(again, "access");
    CHECK(num(access_meta, "generation") == generation && str(access_meta, "sessionCredential") == NULL);
    cJSON_Delete(again);

    /* A child enrollment through the gateway, and the child registered under the remote. */
    snprintf(request, sizeof request, "{\"action\":\"issue_child_enrollment\",\"access\":%s,\"enrollment\":{\"name\":\"c-child\"}}", access_json);
    cJSON *child_issued = access_control(gateway, request, &st);
    CHECK(st == AIC_STATUS_OK && is(str(child_issued, "parentSessionId"), id));
    char child_token[512];
    snprintf(child_token, sizeof child_token, "%s", str(child_issued, "enrollmentToken") ? str(child_issued, "enrollmentToken") : "");
    cJSON_Delete(child_issued);
    aic_client *child = connect_to(gateway);
    snprintf(request, sizeof request, "{\"session\":" SESSION ",\"access\":{\"enrollmentToken\":\"%s\"}}", child_token);
    cJSON *child_reg = reg(child, request, &st);
    CHECK(st == AIC_STATUS_OK);
    access_meta = cJSON_GetObjectItemCaseSensitive(child_reg, "access");
    CHECK(is(str(access_meta, "parentSessionId"), id) && is(str(access_meta, "rootSessionId"), "c-root") && num(access_meta, "depth") == 2);
    cJSON_Delete(child_reg);

    /* Inspection: the remote sees its subtree through the gateway, the admin through the local socket. */
    snprintf(request, sizeof request, "{\"action\":\"inspect_tree\",\"access\":%s}", access_json);
    cJSON *tree = access_control(gateway, request, &st);
    CHECK(st == AIC_STATUS_OK && cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(tree, "principals")) == 2);
    cJSON_Delete(tree);
    snprintf(request, sizeof request, "{\"adminToken\":\"%s\",\"action\":\"inspect_tree\",\"principalId\":\"%s\"}", admin, id);
    tree = access_control(local, request, &st);
    CHECK(st == AIC_STATUS_OK && cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(tree, "principals")) == 2);
    cJSON_Delete(tree);
    /* A wrong credential on the gateway. */
    CHECK(access_control(gateway, "{\"action\":\"inspect_tree\",\"access\":{\"sessionCredential\":\"nope\",\"sessionId\":\"x\",\"generation\":1}}", &st) == NULL);
    CHECK(st == AIC_STATUS_ACCESS_DENIED);

    /* Revoking the subtree disconnects both and refuses the credential from then on. */
    snprintf(request, sizeof request, "{\"adminToken\":\"%s\",\"action\":\"revoke_subtree\",\"principalId\":\"%s\"}", admin, id);
    cJSON *revoked = access_control(local, request, &st);
    CHECK(st == AIC_STATUS_OK && cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(revoked, "changedPrincipalIds")) == 2);
    cJSON_Delete(revoked);
    for (int i = 0; i < 50; i++) {
        cJSON *f = recv_json(child, 5000, &st);
        if (!f) break;
        cJSON_Delete(f);
    }
    CHECK(st == AIC_STATUS_NOT_CONNECTED);
    aic_client_free(child);
    aic_client_free(remote);
    snprintf(request, sizeof request, "{\"session\":" SESSION ",\"access\":%s}", access_json);
    aic_client *revoked_client = connect_to(gateway);
    CHECK(reg(revoked_client, request, &st) == NULL && st == AIC_STATUS_ACCESS_DENIED);
    aic_client_free(revoked_client);

    aic_client_free(root);
    free(admin);
}

/* A fake broker: takes one connection, reads its first frame, answers with `bytes`, and holds
 * the connection until the client hangs up. */
struct fake {
    int listener;
    const unsigned char *bytes;
    size_t len;
    char *first; /* the first frame's body (malloc'd), NULL when none came */
};

static int read_all(int fd, void *buf, size_t len) {
    for (size_t got = 0; got < len;) {
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n <= 0) return -1;
        got += (size_t)n;
    }
    return 0;
}

static void *fake_broker(void *arg) {
    struct fake *f = arg;
    int fd = accept(f->listener, NULL, NULL);
    if (fd < 0) return NULL;
    unsigned char head[4];
    if (read_all(fd, head, 4) == 0) {
        size_t n = (size_t)head[0] << 24 | (size_t)head[1] << 16 | (size_t)head[2] << 8 | head[3];
        char *body = malloc(n + 1);
        if (body && read_all(fd, body, n) == 0) {
            body[n] = 0;
            f->first = body;
            for (size_t sent = 0; sent < f->len;) {
                ssize_t w = send(fd, f->bytes + sent, f->len - sent, MSG_NOSIGNAL);
                if (w <= 0) break;
                sent += (size_t)w;
            }
        } else {
            free(body);
        }
    }
    char sink[256];
    while (read(fd, sink, sizeof sink) > 0) {
    }
    close(fd);
    return NULL;
}

static int listen_at(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 1) != 0) {
        if (fd >= 0) close(fd);
        return -1;
    }
    return fd;
}

/* The bytes a case answers with: `frame` behind its length, or `wireHex` as it is (malloc'd). */
static unsigned char *case_bytes(const cJSON *c, size_t *len) {
    const char *frame = str(c, "frame");
    if (frame) {
        size_t n = strlen(frame);
        unsigned char *out = malloc(n + 4);
        out[0] = (unsigned char)(n >> 24), out[1] = (unsigned char)(n >> 16);
        out[2] = (unsigned char)(n >> 8), out[3] = (unsigned char)n;
        memcpy(out + 4, frame, n);
        *len = n + 4;
        return out;
    }
    const char *hex = str(c, "wireHex");
    size_t n = hex ? strlen(hex) / 2 : 0;
    unsigned char *out = malloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        unsigned v = 0;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (unsigned char)v;
    }
    *len = n;
    return out;
}

/* One case: returns whether the registration ended as `expected` says. */
static int answer_case(const cJSON *c, const char *socket_path) {
    size_t len = 0;
    unsigned char *bytes = case_bytes(c, &len);
    struct fake f = {listen_at(socket_path), bytes, len, NULL};
    pthread_t thread;
    int ok = f.listener >= 0 && pthread_create(&thread, NULL, fake_broker, &f) == 0;
    if (ok) {
        aic_client *client = connect_to(socket_path);
        const cJSON *access = cJSON_GetObjectItemCaseSensitive(c, "access");
        char *access_json = access ? cJSON_PrintUnformatted(access) : NULL;
        char request[1024];
        snprintf(request, sizeof request, "{\"session\":" SESSION "%s%s}", access_json ? ",\"access\":" : "",
                 access_json ? access_json : "");
        aic_status st;
        cJSON_Delete(reg(client, request, &st));
        char message[1024];
        snprintf(message, sizeof message, "%s", last_message);
        /* The fake broker sends nothing more: only a connection the client closed fails now. */
        aic_status after;
        cJSON_Delete(recv_json(client, 0, &after));
        aic_client_free(client);
        pthread_join(thread, NULL);

        const cJSON *expected = cJSON_GetObjectItemCaseSensitive(c, "expected");
        const cJSON *closes = cJSON_GetObjectItemCaseSensitive(expected, "closes");
        ok = is(aic_status_name(st), str(expected, "code")) && is(message, str(expected, "message")) &&
             cJSON_IsBool(closes) && (after == AIC_STATUS_NOT_CONNECTED) == cJSON_IsTrue(closes);
        if (!ok) fprintf(stderr, "%s: got %s \"%s\" (closes: %d)\n", str(c, "id"), aic_status_name(st), message,
                         after == AIC_STATUS_NOT_CONNECTED);
        /* What went out: a register frame, with the credential when the case has one. */
        cJSON *first = cJSON_Parse(f.first ? f.first : "");
        cJSON *sent = cJSON_GetObjectItemCaseSensitive(first, "access");
        ok = ok && is(str(first, "type"), "register") && (access ? cJSON_Compare(access, sent, 1) : sent == NULL);
        cJSON_Delete(first);
        free(f.first);
        cJSON_free(access_json);
    }
    if (f.listener >= 0) close(f.listener);
    unlink(socket_path);
    free(bytes);
    return ok;
}

static void shared_answers(const char *vectors_dir, const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/broker-client-v1.json", vectors_dir);
    char *text = read_text(path);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    CHECK(cJSON_GetArraySize(cases) == (int)num(doc, "count"));
    int total = 0, executed = 0, filtered = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        total++;
        if (!vector_selected(str(c, "id"))) {
            filtered++;
            continue;
        }
        executed++;
        char socket_path[4200];
        snprintf(socket_path, sizeof socket_path, "%s/fake-%d.sock", dir, total);
        CHECK(answer_case(c, socket_path));
    }
    CHECK(vector_counts("broker-client-v1.json", total, executed, 0, filtered));
    cJSON_Delete(doc);
}

int main(int argc, char **argv) {
    const char *vectors_dir = argc > 1 ? argv[1] : "vectors";
    signal(SIGPIPE, SIG_DFL); /* a send on a closed connection must not depend on SIGPIPE being ignored */
    char dir_template[] = "/tmp/aic-c-client-XXXXXX";
    char *dir = mkdtemp(dir_template);
    CHECK(dir != NULL);
    const char *settings = "idle_exit_ms=0\nlog_level=off\n";
    aic_broker *broker = NULL;
    CHECK(aic_broker_start(dir, strlen(dir), settings, strlen(settings), &broker, NULL) == AIC_STATUS_OK);
    char socket_path[4096], intercom_dir[4096];
    snprintf(socket_path, sizeof socket_path, "%s", aic_broker_socket_path(broker));
    snprintf(intercom_dir, sizeof intercom_dir, "%s/intercom", dir);
    char expected_gateway[4200];
    snprintf(expected_gateway, sizeof expected_gateway, "%s/remote-gateway.sock", intercom_dir);
    CHECK(strcmp(aic_broker_gateway_path(broker), expected_gateway) == 0);
    CHECK(strcmp(aic_broker_gateway_path(NULL), "") == 0);

    local_client(socket_path);
    extensions(socket_path);

    const char *external = getenv("AIC_REMOTE_AGENT_DIR");
    if (external && *external) {
        char external_intercom[4096];
        snprintf(external_intercom, sizeof external_intercom, "%s/intercom", external);
        printf("remote flow: against the broker of %s\n", external);
        remote_flow(external_intercom);
    } else {
        remote_flow(intercom_dir);
    }
    shared_answers(vectors_dir, dir);

    aic_broker_free(broker);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
