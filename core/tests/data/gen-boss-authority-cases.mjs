// Regenerates core/tests/data/boss_authority_cases.json: the credential registry, credential-use,
// credential audit, authority transition/event/request and store-gate cases of ./boss, each with
// its outcome as the TypeScript core 0.2.0 gives it (the value, "the input itself", or the
// error's class, message and code). The cases are this repository's; only the outcomes come from
// running them against the TypeScript core's built dist:
//   AIC_TS_CORE_DIST=/path/to/agent-intercom-core/dist node core/tests/data/gen-boss-authority-cases.mjs \
//     > core/tests/data/boss_authority_cases.json
const dist = process.env.AIC_TS_CORE_DIST || '/work/ext/core/dist';
const m = await import(`${dist}/boss.js`);
const t0 = "2026-07-28T12:00:00.000Z", t1 = "2026-07-28T12:01:00.000Z", t2 = "2026-07-28T12:02:00.000Z";
const before = "2026-07-28T11:59:59.999Z", justBefore = "2026-07-28T12:01:59.999Z", after = "2026-07-28T12:02:00.001Z";
const H = "a".repeat(64);
const w = (o, k, v) => ({ ...o, [k]: v });
const without = (o, ...keys) => { const c = { ...o }; for (const k of keys) delete c[k]; return c; };

const C = [];
const add = (id, op, args) => C.push({ id, op, args });

// Credential envelope, digest record and use context.
const env = { version: "boss.participant-credential.v1", namespace: "boss-run-v1", credentialKind: "enrollment", credentialId: "cred-1", credential: "secret-1", bossRunId: "run-a", participantId: "worker-a", role: "worker", communicationProfile: "worker", bindingEpoch: 2, issuedAt: t0, expiresAt: t2, nonce: "nonce-1" };
const rec = { version: "boss.credential-digest.v1", namespace: "boss-run-v1", credentialKind: "enrollment", credentialId: "cred-1", digest: m.credentialDigest(env), bossRunId: "run-a", participantId: "worker-a", role: "worker", bindingEpoch: 2, nonce: "nonce-1", issuedAt: t0, expiresAt: t2, state: "issued", auditEventId: "audit-1" };
const ctx = { now: t1, credentialKind: "enrollment", bossRunId: "run-a", participantId: "worker-a", role: "worker", bindingEpoch: 2, nonce: "nonce-1" };
const consumed = { ...rec, state: "consumed", consumedAt: t1 };
const revoked = { ...rec, state: "revoked", revokedAt: t1 };

add("digest-record/ok", "parseBossCredentialDigestRecord", [rec]);
add("digest-record/consumed", "parseBossCredentialDigestRecord", [consumed]);
add("digest-record/consumed-at-issue", "parseBossCredentialDigestRecord", [w(consumed, "consumedAt", t0)]);
add("digest-record/consumed-last-ms", "parseBossCredentialDigestRecord", [w(consumed, "consumedAt", justBefore)]);
add("digest-record/consumed-early", "parseBossCredentialDigestRecord", [w(consumed, "consumedAt", before)]);
add("digest-record/consumed-at-expiry", "parseBossCredentialDigestRecord", [w(consumed, "consumedAt", t2)]);
add("digest-record/consumed-late", "parseBossCredentialDigestRecord", [w(consumed, "consumedAt", after)]);
add("digest-record/consumed-missing", "parseBossCredentialDigestRecord", [w(rec, "state", "consumed")]);
add("digest-record/consumed-stray", "parseBossCredentialDigestRecord", [w(rec, "consumedAt", t1)]);
add("digest-record/revoked", "parseBossCredentialDigestRecord", [revoked]);
add("digest-record/revoked-after-expiry", "parseBossCredentialDigestRecord", [w(revoked, "revokedAt", after)]);
add("digest-record/revoked-early", "parseBossCredentialDigestRecord", [w(revoked, "revokedAt", before)]);
add("digest-record/revoked-missing", "parseBossCredentialDigestRecord", [w(rec, "state", "revoked")]);
add("digest-record/revoked-stray", "parseBossCredentialDigestRecord", [w(rec, "revokedAt", t1)]);
add("digest-record/both", "parseBossCredentialDigestRecord", [{ ...consumed, revokedAt: t1 }]);
add("digest-record/expired", "parseBossCredentialDigestRecord", [w(rec, "state", "expired")]);
add("digest-record/state", "parseBossCredentialDigestRecord", [w(rec, "state", "used")]);
add("digest-record/version", "parseBossCredentialDigestRecord", [w(rec, "version", "boss.credential-digest.v2")]);
add("digest-record/namespace", "parseBossCredentialDigestRecord", [w(rec, "namespace", "boss-run-v2")]);
add("digest-record/kind", "parseBossCredentialDigestRecord", [w(rec, "credentialKind", "session")]);
add("digest-record/digest-shape", "parseBossCredentialDigestRecord", [w(rec, "digest", H.toUpperCase())]);
add("digest-record/role", "parseBossCredentialDigestRecord", [w(rec, "role", "king")]);
add("digest-record/epoch", "parseBossCredentialDigestRecord", [w(rec, "bindingEpoch", 0)]);
add("digest-record/nonce", "parseBossCredentialDigestRecord", [w(rec, "nonce", "")]);
add("digest-record/order", "parseBossCredentialDigestRecord", [w(rec, "expiresAt", t0)]);
add("digest-record/timestamp", "parseBossCredentialDigestRecord", [w(rec, "issuedAt", "2026-07-28T12:00:00Z")]);
add("digest-record/audit", "parseBossCredentialDigestRecord", [without(rec, "auditEventId")]);
add("digest-record/extra", "parseBossCredentialDigestRecord", [w(rec, "profile", "worker")]);
add("digest-record/array", "parseBossCredentialDigestRecord", [[rec]]);
add("digest-record/null", "parseBossCredentialDigestRecord", [null]);

const use = (id, envelope, record, context) => add(`use/${id}`, "authorizeBossCredentialUse", [envelope, record, context]);
use("ok", env, rec, ctx);
use("at-issue", env, rec, w(ctx, "now", t0));
use("last-ms", env, rec, w(ctx, "now", justBefore));
use("not-yet", env, rec, w(ctx, "now", before));
use("at-expiry", env, rec, w(ctx, "now", t2));
use("after-expiry", env, rec, w(ctx, "now", after));
use("consumed", env, consumed, ctx);
use("revoked", env, revoked, ctx);
use("expired-state", env, w(rec, "state", "expired"), ctx);
use("stolen", w(env, "credential", "stolen"), rec, ctx);
use("credential-id", env, w(rec, "credentialId", "cred-2"), ctx);
use("registry-expiry", env, w(rec, "expiresAt", "2026-07-28T12:03:00.000Z"), ctx);
use("registry-issue", env, w(rec, "issuedAt", "2026-07-28T11:00:00.000Z"), ctx);
use("digest-before-state", w(env, "nonce", "nonce-x"), consumed, ctx);
use("kind-context", env, rec, w(ctx, "credentialKind", "reconnect"));
use("kind-record", env, w(rec, "credentialKind", "reconnect"), ctx);
use("run", env, rec, w(ctx, "bossRunId", "run-b"));
use("run-record", env, w(rec, "bossRunId", "run-b"), ctx);
use("participant", env, rec, w(ctx, "participantId", "worker-b"));
use("role", env, rec, w(ctx, "role", "scout"));
use("role-record", env, w(rec, "role", "scout"), ctx);
use("epoch", env, rec, w(ctx, "bindingEpoch", 1));
use("epoch-record", env, w(rec, "bindingEpoch", 3), ctx);
use("nonce", env, rec, w(ctx, "nonce", "nonce-stolen"));
use("nonce-record", env, w(rec, "nonce", "nonce-2"), ctx);
use("kind-before-run", env, rec, { ...ctx, credentialKind: "reconnect", bossRunId: "run-b" });
use("bad-envelope", w(env, "communicationProfile", "scout"), rec, ctx);
use("bad-record", env, w(rec, "state", "used"), ctx);
use("bad-context", env, rec, w(ctx, "now", "now"));
use("context-extra", env, rec, w(ctx, "sessionId", "s"));
use("context-missing", env, rec, without(ctx, "nonce"));
use("context-epoch", env, rec, w(ctx, "bindingEpoch", 0));
use("envelope-first", w(env, "version", "x"), w(rec, "version", "x"), w(ctx, "now", 1));
use("record-before-context", env, w(rec, "version", "x"), w(ctx, "now", 1));
use("nulls", null, null, null);

const audit = { version: "boss.credential-audit-event.v1", eventId: "audit-attempt-1", credentialId: "cred-1", credentialKind: "enrollment", bossRunId: "run-a", participantId: "worker-a", presentedBindingEpoch: 2, operation: "deny", outcome: "RUN_SUBSTITUTION", nonceDigest: H, occurredAt: t1 };
add("audit/deny", "parseBossCredentialAuditEvent", [audit]);
add("audit/reordered", "parseBossCredentialAuditEvent", [Object.fromEntries(Object.entries(audit).reverse())]);
add("audit/consume", "parseBossCredentialAuditEvent", [{ ...audit, operation: "consume", outcome: "accepted" }]);
add("audit/rotate", "parseBossCredentialAuditEvent", [{ ...audit, operation: "rotate", outcome: "accepted", authorityTransitionId: "t-1" }]);
add("audit/revoke-missing", "parseBossCredentialAuditEvent", [{ ...audit, operation: "revoke", outcome: "accepted" }]);
add("audit/issue-with-transition", "parseBossCredentialAuditEvent", [{ ...audit, operation: "issue", outcome: "accepted", authorityTransitionId: "t-1" }]);
add("audit/deny-accepted", "parseBossCredentialAuditEvent", [w(audit, "outcome", "accepted")]);
add("audit/consume-denied", "parseBossCredentialAuditEvent", [w(audit, "operation", "consume")]);
add("audit/outcome", "parseBossCredentialAuditEvent", [w(audit, "outcome", "STOLEN")]);
add("audit/operation", "parseBossCredentialAuditEvent", [w(audit, "operation", "steal")]);
add("audit/version", "parseBossCredentialAuditEvent", [w(audit, "version", "boss.credential-audit-event.v2")]);
add("audit/transition-empty", "parseBossCredentialAuditEvent", [w(audit, "authorityTransitionId", "")]);
add("audit/event-id", "parseBossCredentialAuditEvent", [w(audit, "eventId", 1)]);
add("audit/kind", "parseBossCredentialAuditEvent", [w(audit, "credentialKind", "x")]);
add("audit/epoch", "parseBossCredentialAuditEvent", [w(audit, "presentedBindingEpoch", 0)]);
add("audit/nonce-digest", "parseBossCredentialAuditEvent", [w(audit, "nonceDigest", "abc")]);
add("audit/occurred", "parseBossCredentialAuditEvent", [w(audit, "occurredAt", "yesterday")]);
add("audit/event-before-nonce", "parseBossCredentialAuditEvent", [{ ...audit, eventId: "", nonceDigest: "x" }]);
add("audit/missing", "parseBossCredentialAuditEvent", [without(audit, "occurredAt")]);
add("audit/extra", "parseBossCredentialAuditEvent", [w(audit, "nonce", "n")]);

// Authority transitions.
const tr = { version: "boss.authority-transition.v1", authorityTransitionId: "transition-manager-2", expectedBrokerRevision: 12, brokerRevision: 13, operation: "replace_manager", target: { bossRunId: "run-a", participantId: "manager-a", replacementParticipantId: "manager-b" }, prior: { participantBindingEpoch: 4 }, proposed: { participantBindingEpoch: 5 }, idempotencyKey: "idem-2", state: "prepared", prepareToken: "prepare-token-2", preparedAt: t0 };
const committed = { ...tr, state: "committed", brokerRevision: 14, committedAt: t1 };
const aborted = { ...tr, state: "aborted", brokerRevision: 14, abortedAt: t1, abortReason: "projection rejected" };
const op = (operation, target, prior, proposed) => ({ ...tr, operation, target, prior, proposed });
const rt = (id, v) => add(`transition/${id}`, "parseAuthorityTransitionRecord", [v]);
rt("prepared", tr);
rt("committed", committed);
rt("aborted", aborted);
rt("revision-equal", w(tr, "brokerRevision", 12));
rt("revision-expected", w(tr, "expectedBrokerRevision", -1));
rt("revision-zero", { ...tr, expectedBrokerRevision: 0, brokerRevision: 1 });
rt("not-increasing", w(tr, "proposed", { participantBindingEpoch: 4 }));
rt("decreasing", w(tr, "proposed", { participantBindingEpoch: 3 }));
rt("proposed-zero", w(tr, "proposed", { participantBindingEpoch: 0 }));
rt("replacement-missing", w(tr, "target", { bossRunId: "run-a", participantId: "manager-a" }));
rt("run-missing", w(tr, "target", { participantId: "manager-a", replacementParticipantId: "manager-b" }));
rt("participant-missing", w(tr, "target", { bossRunId: "run-a", replacementParticipantId: "manager-b" }));
rt("target-extra", w(tr, "target", { ...tr.target, credentialId: "c" }));
rt("target-unknown", w(tr, "target", { ...tr.target, sessionId: "s" }));
rt("target-empty", w(tr, "target", { ...tr.target, participantId: "" }));
rt("target-array", w(tr, "target", []));
rt("prior-empty", w(tr, "prior", {}));
rt("prior-missing-dimension", w(tr, "prior", { bossBindingEpoch: 4 }));
rt("prior-unknown", w(tr, "prior", { participantBindingEpoch: 4, workerGeneration: 1 }));
rt("unpaired", { ...tr, prior: { participantBindingEpoch: 4, bossBindingEpoch: 1 } });
rt("unpaired-proposed", { ...tr, proposed: { participantBindingEpoch: 5, bossBindingEpoch: 1 } });
rt("unaffected-changed", { ...tr, prior: { participantBindingEpoch: 4, bossBindingEpoch: 1 }, proposed: { participantBindingEpoch: 5, bossBindingEpoch: 2 } });
rt("unaffected-kept", { ...tr, prior: { participantBindingEpoch: 4, bossBindingEpoch: 1 }, proposed: { participantBindingEpoch: 5, bossBindingEpoch: 1 } });
rt("prepared-committed-at", w(tr, "committedAt", t1));
rt("prepared-reason", w(tr, "abortReason", "x"));
rt("committed-missing", without(committed, "committedAt"));
rt("committed-aborted", { ...committed, abortedAt: t2, abortReason: "late" });
rt("committed-early", w(committed, "committedAt", before));
rt("aborted-missing", without(aborted, "abortReason"));
rt("aborted-committed", w(aborted, "committedAt", t1));
rt("aborted-early", w(aborted, "abortedAt", before));
rt("state", w(tr, "state", "rolled_back"));
rt("operation", w(tr, "operation", "force"));
rt("version", w(tr, "version", "boss.authority-transition.v2"));
rt("prepare-token", w(tr, "prepareToken", ""));
rt("prepared-at", w(tr, "preparedAt", "2026-07-28"));
rt("idempotency", without(tr, "idempotencyKey"));
rt("bind-participant", op("bind_participant", { bossRunId: "run-a", participantId: "worker-new" }, { participantBindingEpoch: 0 }, { participantBindingEpoch: 1 }));
rt("bind-participant-nonzero", op("bind_participant", { bossRunId: "run-a", participantId: "worker-new" }, { participantBindingEpoch: 1 }, { participantBindingEpoch: 2 }));
rt("bind-participant-proposed-zero", op("bind_participant", { bossRunId: "run-a", participantId: "worker-new" }, { participantBindingEpoch: 0 }, { participantBindingEpoch: 0 }));
rt("bind-boss", op("bind_boss", { bossRunId: "run-a" }, { bossBindingEpoch: 0 }, { bossBindingEpoch: 1 }));
rt("bind-boss-nonzero", op("bind_boss", { bossRunId: "run-a" }, { bossBindingEpoch: 1 }, { bossBindingEpoch: 2 }));
rt("bind-boss-participant", op("bind_boss", { bossRunId: "run-a", participantId: "p" }, { bossBindingEpoch: 0 }, { bossBindingEpoch: 1 }));
rt("bind-boss-other-zero", op("bind_boss", { bossRunId: "run-a" }, { bossBindingEpoch: 0, controllerGeneration: 0 }, { bossBindingEpoch: 1, controllerGeneration: 0 }));
for (const [operation, target, key] of [
  ["rebind_boss", { bossRunId: "run-a" }, "bossBindingEpoch"],
  ["revoke_boss", { bossRunId: "run-a" }, "bossBindingEpoch"],
  ["rebind_participant", { bossRunId: "run-a", participantId: "worker-a" }, "participantBindingEpoch"],
  ["revoke_participant", { bossRunId: "run-a", participantId: "worker-a" }, "participantBindingEpoch"],
  ["replace_participant", { bossRunId: "run-a", participantId: "worker-a", replacementParticipantId: "worker-b" }, "participantBindingEpoch"],
  ["controller_takeover", { bossRunId: "run-a", controllerPrincipalId: "controller-b" }, "controllerGeneration"],
  ["rotate_credential", { bossRunId: "run-a", participantId: "worker-a", credentialId: "cred-2" }, "participantBindingEpoch"],
  ["rebind_subscriber", { subscriberPrincipalId: "owner-a" }, "subscriberBindingEpoch"],
]) {
  rt(`${operation}/ok`, op(operation, target, { [key]: 2 }, { [key]: 3 }));
  rt(`${operation}/zero`, op(operation, target, { [key]: 0 }, { [key]: 1 }));
  rt(`${operation}/wrong-dimension`, op(operation, target, { participantBindingEpoch: 2, bossBindingEpoch: 2 }, { participantBindingEpoch: 3, bossBindingEpoch: 3 }));
}
rt("rebind_subscriber/with-run", op("rebind_subscriber", { bossRunId: "run-a", subscriberPrincipalId: "owner-a" }, { subscriberBindingEpoch: 2 }, { subscriberBindingEpoch: 3 }));
rt("rebind_subscriber/participant", op("rebind_subscriber", { subscriberPrincipalId: "owner-a", participantId: "p" }, { subscriberBindingEpoch: 2 }, { subscriberBindingEpoch: 3 }));
rt("rebind_subscriber/missing", op("rebind_subscriber", { bossRunId: "run-a" }, { subscriberBindingEpoch: 2 }, { subscriberBindingEpoch: 3 }));
rt("controller_takeover/missing", op("controller_takeover", { bossRunId: "run-a" }, { controllerGeneration: 2 }, { controllerGeneration: 3 }));
rt("rotate_credential/missing", op("rotate_credential", { bossRunId: "run-a", participantId: "worker-a" }, { participantBindingEpoch: 2 }, { participantBindingEpoch: 3 }));
rt("rotate_credential/replacement", op("rotate_credential", { bossRunId: "run-a", participantId: "worker-a", credentialId: "c", replacementParticipantId: "x" }, { participantBindingEpoch: 2 }, { participantBindingEpoch: 3 }));

const ev = { version: "boss.authority-event.v1", eventId: "authority-event-1", bossRunId: "run-a", authorityTransitionId: "transition-manager-2", brokerRevision: 13, operation: "replace_manager", state: "committed", target: { bossRunId: "run-a", participantId: "manager-a", replacementParticipantId: "manager-b" }, prior: { participantBindingEpoch: 4 }, resulting: { participantBindingEpoch: 5 }, occurredAt: t1 };
const sub = { ...without(ev, "bossRunId"), operation: "rebind_subscriber", target: { subscriberPrincipalId: "owner-a" }, prior: { subscriberBindingEpoch: 2 }, resulting: { subscriberBindingEpoch: 3 } };
const re = (id, v) => add(`event/${id}`, "parseAuthorityTransitionEvent", [v]);
re("ok", ev);
re("run-mismatch", w(ev, "bossRunId", "run-b"));
re("run-missing", without(ev, "bossRunId"));
re("decreasing", w(ev, "resulting", { participantBindingEpoch: 3 }));
re("prepared", w(ev, "state", "prepared"));
re("state-missing", without(ev, "state"));
re("subscriber", sub);
re("subscriber-run", { ...sub, bossRunId: "run-a", target: { bossRunId: "run-a", subscriberPrincipalId: "owner-a" } });
re("revision", w(ev, "brokerRevision", -1));
re("revision-zero", w(ev, "brokerRevision", 0));
re("operation", w(ev, "operation", "bind"));
re("version", w(ev, "version", "boss.authority-event.v2"));
re("unpaired", { ...ev, resulting: { participantBindingEpoch: 5, controllerGeneration: 1 } });
re("bind", { ...ev, operation: "bind_participant", prior: { participantBindingEpoch: 0 }, resulting: { participantBindingEpoch: 1 } });
re("bind-nonzero", { ...ev, operation: "bind_participant", prior: { participantBindingEpoch: 2 }, resulting: { participantBindingEpoch: 3 }, target: { bossRunId: "run-a", participantId: "p" } });
re("resulting-empty", w(ev, "resulting", {}));
re("occurred", w(ev, "occurredAt", t1.replace("Z", "+00:00")));
re("extra", w(ev, "proposed", { participantBindingEpoch: 5 }));
re("event-id", w(ev, "eventId", ""));

const common = { version: "boss.authority-request.v1", requestId: "authority-request-1", idempotencyKey: "authority-idem-1", authorityTransitionId: "transition-manager-2", expectedBrokerRevision: 12 };
const prep = { ...common, operation: "prepare", payload: { requestedOperation: "replace_manager", target: { bossRunId: "run-a", participantId: "manager-a", replacementParticipantId: "manager-b" }, prior: { participantBindingEpoch: 4 } } };
const pp = (payload) => w(prep, "payload", { ...prep.payload, ...payload });
const rq = (id, v) => add(`request/${id}`, "parseAuthorityTransitionRequest", [v]);
rq("prepare", prep);
rq("commit", { ...common, operation: "commit", payload: { prepareToken: "prepare-token-2" } });
rq("abort", { ...common, operation: "abort", payload: { prepareToken: "prepare-token-2", reason: "projection rejected" } });
rq("query", { ...common, operation: "query", payload: {} });
rq("query-extra", { ...common, operation: "query", payload: { ignored: true } });
rq("query-array", { ...common, operation: "query", payload: [] });
rq("commit-reason", { ...common, operation: "commit", payload: { prepareToken: "p", reason: "r" } });
rq("commit-token", { ...common, operation: "commit", payload: { prepareToken: "" } });
rq("abort-missing", { ...common, operation: "abort", payload: { prepareToken: "p" } });
rq("abort-reason", { ...common, operation: "abort", payload: { prepareToken: "p", reason: 1 } });
rq("version", w(prep, "version", "boss.authority-request.v2"));
rq("operation", w(prep, "operation", "force_commit"));
rq("revision", w(prep, "expectedBrokerRevision", 1.5));
rq("request-id", without(prep, "requestId"));
rq("extra", w(prep, "brokerRevision", 13));
rq("payload-missing", without(prep, "payload"));
rq("prepare-dimension", pp({ prior: { bossBindingEpoch: 4 } }));
rq("prepare-bind-nonzero", pp({ requestedOperation: "bind_participant", target: { bossRunId: "run-a", participantId: "worker-new" }, prior: { participantBindingEpoch: 1 } }));
rq("prepare-bind", pp({ requestedOperation: "bind_participant", target: { bossRunId: "run-a", participantId: "worker-new" }, prior: { participantBindingEpoch: 0 } }));
rq("prepare-rebind-zero", pp({ requestedOperation: "rebind_participant", target: { bossRunId: "run-a", participantId: "worker-a" }, prior: { participantBindingEpoch: 0 } }));
rq("prepare-target", pp({ target: { bossRunId: "run-a", participantId: "manager-a" } }));
rq("prepare-target-extra", pp({ target: { ...prep.payload.target, controllerPrincipalId: "c" } }));
rq("prepare-operation", pp({ requestedOperation: "prepare" }));
rq("prepare-extra", pp({ proposed: { participantBindingEpoch: 5 } }));
rq("prepare-missing", w(prep, "payload", without(prep.payload, "prior")));
rq("prepare-prior-before-target", pp({ target: {}, prior: { bossBindingEpoch: 4 } }));
rq("prepare-subscriber", pp({ requestedOperation: "rebind_subscriber", target: { subscriberPrincipalId: "owner" }, prior: { subscriberBindingEpoch: 1 } }));
rq("prepare-takeover", pp({ requestedOperation: "controller_takeover", target: { bossRunId: "run-a", controllerPrincipalId: "c" }, prior: { controllerGeneration: 3, bossBindingEpoch: 1 } }));

// Store gates.
const binding = { version: "boss.participant-binding.v1", bossRunId: "run-1", participantId: "p-1", role: "worker", communicationProfile: "worker", bindingEpoch: 1, sessionId: "s-1", brokerGeneration: 1, brokerBootInstance: "boot-1", state: "active", assignedManagerParticipantId: "m-1", authorityTransitionId: "t-1" };
for (const [name, value, record, bad] of [
  ["validateBossParticipantBindingStore", "boss.participant-binding", binding, w(binding, "role", "king")],
  ["validateBossCredentialDigestStore", "boss.credential-digest", rec, w(rec, "state", "consumed")],
  ["validateAuthorityTransitionStore", "boss.authority-transition", tr, w(tr, "brokerRevision", 1)],
  ["validateAuthorityEventStore", "boss.authority-event", ev, w(ev, "bossRunId", "run-b")],
]) {
  const s = (id, v) => add(`store/${name}/${id}`, name, [v]);
  s("valid", record);
  s("corrupt", bad);
  s("newer", w(record, "version", `${value}.v2`));
  s("older", w(record, "version", `${value}.v0`));
  s("foreign", w(record, "version", "orc.lifecycle-notice.v1"));
  s("no-family", w(record, "version", "v1"));
  s("number", w(record, "version", 1));
  s("object-version", w(record, "version", { v: 1 }));
  s("null-version", w(record, "version", null));
  s("missing-version", without(record, "version"));
  s("array", [record]);
  s("null", null);
  s("string", "record");
}
add("store/validateAuthorityEventStore/unknown-key", "validateAuthorityEventStore", [w(ev, "x", 1)]);
add("store/validateAuthorityTransitionStore/committed", "validateAuthorityTransitionStore", [committed]);
add("store/validateBossCredentialDigestStore/big-family", "validateBossCredentialDigestStore", [w(rec, "version", "boss.credential-digest.v10")]);

const out = [];
for (const c of C) {
  // JSON must carry the arguments exactly (no undefined, no -0): C and Rust read this file.
  if (JSON.stringify(JSON.parse(JSON.stringify(c.args))) !== JSON.stringify(c.args) || /undefined/.test(String(c.args.map((a) => JSON.stringify(a))))) {
    throw new Error(`${c.id}: arguments JSON cannot carry`);
  }
  const f = m[c.op];
  if (typeof f !== "function") throw new Error(`${c.id}: ${c.op} is not exported`);
  let expect;
  try {
    const r = f(...c.args);
    expect = r === c.args[0] && typeof r === 'object' ? { kind: "input" } : { kind: "value", value: r };
  } catch (e) {
    expect = { kind: "error", class: e.constructor.name, message: e.message, ...(e.code ? { code: e.code } : {}) };
  }
  out.push({ ...c, expect });
}
const ids = new Set(out.map((c) => c.id));
if (ids.size !== out.length) throw new Error("duplicate case ids");
process.stdout.write(JSON.stringify({ version: 1, source: "outcomes of @ctliz/agent-intercom-core 0.2.0 (dist); regenerate with core/tests/data/gen-boss-authority-cases.mjs", count: out.length, cases: out }, null, 1) + "\n");
