"""The vector files every language runs, from Python through the installed wheel: each prints
its executed and skipped counts (tests/node/vectors.test.js and the C runners are the twins)."""

from __future__ import annotations

import json
import math
import tempfile
from datetime import datetime
from typing import Any, Dict, List, Optional

import pytest

import agent_intercom as ai
from conftest import filtered, read_vectors, run_cases

WIRE = {"send", "ask", "reply", "cancel_ask", "defer_ask"}


def label(scope: Optional[str]) -> str:
    if scope is None:
        return "U"
    return "A" if scope == ai.SCOPE_A else "B" if scope == ai.SCOPE_B else "?"


def execute(v: Dict[str, Any]) -> bool:
    """One protocol-v4 vector through the public API; False when it needs a broker."""
    op = v["operation"]
    if op == "validate_scope":
        if "scopeInput" in v and v["scopeInput"] is None:
            # JSON null is not absent; Python's None is (the core runner decides this case).
            return True
        try:
            outcome = "valid_unscoped" if ai.parse_scope(v.get("scopeInput")) is None else "valid_scoped"
        except ai.IntercomError as e:
            assert e.code == "INVALID_SCOPE"
            assert str(e).startswith("scopeId must match ")
            outcome = "invalid_scope"
        assert outcome == v["expected"], v["name"]
    elif op == "list":
        got = ai.list_visible(v["candidates"], v["actorId"], v.get("actorScope"))
        assert got == v["expectedTargetIds"], v["name"]
    elif op in ("session_joined", "session_left", "presence_update"):
        ids = ai.audience(op, v["candidates"], v["subjectId"], v.get("subjectScope"))
        assert ids == v["expectedAudienceIds"], v["name"]
        assert ai.narrow(ids, ids[1:] + ["not-a-session"]) == ids[1:]
    elif op == "resolve":
        r = ai.resolve_target(v["candidates"], v.get("actorScope"), v["selector"])
        assert r["kind"] == v["expected"], v["name"]
        assert r["target_ids"] == v.get("expectedTargetIds", []), v["name"]
    elif op == "replace":
        plan = ai.plan_replacement(v["subjectId"], v.get("actorScope"), v.get("subjectScope"))
        assert plan["kind"] == v["expected"], v["name"]
        events = [f"{e['kind']}:{e['session_id']}:{label(e['scope'])}" for e in plan["events"]]
        assert events == v["expectedEvents"], v["name"]
    elif op == "late_frame":
        assert ai.frame_disposition(1, 2) == v["expected"]
        assert ai.frame_disposition(2, 2) == "accept"
    elif op in WIRE:
        return False
    else:
        raise AssertionError(f"unknown operation {op} in {v['name']}")
    return True


@pytest.mark.parametrize("file", ["protocol-v4.json", "protocol-v4-local.json"])
def test_protocol_v4(file: str) -> None:
    doc = read_vectors(file)
    assert len(doc["vectors"]) == doc["count"]

    def run(v: Dict[str, Any]) -> Optional[str]:
        ran = execute(v)
        core = ai.run_vector(v)
        if ran:
            assert core == "pass", f"core runner on {v['name']}: {core}"
            return None
        assert core.startswith("skip: "), core
        return core[len("skip: "):]

    counts = run_cases(file, doc["vectors"], run, key="name")
    if file == "protocol-v4.json" and not filtered():
        assert [counts["executed"], counts["skipped"]] == [43, 5]


def test_published_corpus_hash() -> None:
    doc = read_vectors("protocol-v4.json")
    vectors = ai.protocol_v4_vectors()
    assert vectors == doc["vectors"] and len(vectors) == 48
    payload = {"version": ai.VECTOR_SCHEMA_VERSION, "vectors": vectors}
    h = ai.canonical_hash(ai.VECTORS_HASH_DOMAIN, payload)
    assert h == "ef23cae55b3cca7683fee60e5f2421350cde731dc5424c82286a33a8b9cdf6cb"
    assert ai.SEMANTICS_HASH == h == doc["semanticsHash"]
    with open(__import__("conftest").VECTORS / "protocol-v4.json", encoding="utf-8") as f:
        assert ai.semantics_hash_of_text(f.read()) == h


# The JavaScript-only cases of canonical.json as Python values of the same kind; a case with no
# Python counterpart (undefined, holes, BigInt, accessors ...) is skipped, and says why.
PY_VALUES: Dict[str, Any] = {
    "js-negative-zero": {"a": -0.0},
    "js-nan": [math.nan],
    "js-infinity": [math.inf],
    "js-float": {"a": 0.1},
    "js-unsafe": [2**53],
    "js-date": {"a": datetime(1970, 1, 1)},
    "js-function": {"a": lambda: None},
    "js-symbol-value": [object()],
    "js-symbol-key": {1: 1},
    "js-lone-surrogate": ["\ud800"],
    "js-lone-surrogate-key": {"\udc00": 1},
    "js-map": [{1, 2}],
}
# Where Python's nearest value is refused with another code than JavaScript's.
PY_CODES = {"js-symbol-key": "UNSUPPORTED_VALUE", "js-negative-zero": "UNSUPPORTED_NUMBER"}


def test_canonical_known_answers() -> None:
    doc = read_vectors("canonical.json")
    assert len(doc["cases"]) == doc["count"]

    def run(c: Dict[str, Any]) -> Optional[str]:
        domain = c.get("domain", "agent-intercom-test")
        if "json" in c:
            if c.get("error"):
                with pytest.raises(ai.IntercomError) as e:
                    ai.canonical_hash_from_text(domain, c["json"])
                assert e.value.code == c["error"], c["id"]
                # Python's json reads -0 as the integer 0: only the text path sees it.
                if not c.get("textOnly") and c["id"] != "reject-negative-zero":
                    with pytest.raises(ai.IntercomError) as e:
                        ai.canonical_hash(domain, json.loads(c["json"]))
                    assert e.value.code == c["error"], c["id"]
            else:
                assert ai.canonical_json_from_text(c["json"]) == c["canonical"], c["id"]
                assert ai.canonical_hash_from_text(domain, c["json"]) == c["hash"], c["id"]
                value = json.loads(c["json"])
                assert ai.canonical_json(value) == c["canonical"], c["id"]
                assert ai.canonical_hash(domain, value) == c["hash"], c["id"]
                assert isinstance(ai.canonical_frame(domain, value), bytes)
            return None
        if c["id"] not in PY_VALUES:
            return "no Python value of this kind"
        value = PY_VALUES[c["id"]]
        with pytest.raises(ai.IntercomError) as e:
            ai.canonical_hash("agent-intercom-test", value)
        assert e.value.code == PY_CODES.get(c["id"], c["error"]), f"{c['id']}: {e.value}"
        assert str(e.value).startswith("$"), str(e.value)
        return None

    counts = run_cases("canonical.json", doc["cases"], run)
    if not filtered():
        assert counts["skipped"] == len([c for c in doc["cases"] if "js" in c and c["id"] not in PY_VALUES])


def test_asks() -> None:
    doc = read_vectors("asks-v1.json")
    assert len(doc["cases"]) == doc["count"]

    def run(c: Dict[str, Any]) -> Optional[str]:
        assert c["kind"] == "check"
        answer = ai.check_ask({"edges": c["edges"], "send": c["send"], "maxOpenAsks": c["maxOpenAsks"]})
        assert answer == c["expected"], c["id"]
        return None

    counts = run_cases("asks-v1.json", doc["cases"], run)
    assert counts["skipped"] == 0


def test_transport_envelopes() -> None:
    doc = read_vectors("transport-envelope-v1.json")

    def run(c: Dict[str, Any]) -> Optional[str]:
        size = c.get("pad_to_bytes")
        envelopes = [e if size is None else e + " " * (size - len(e.encode())) for e in c["envelopes"]]
        now = c.get("now_ms", doc["now_ms"])
        outcomes = ai.contract_call("envelope.verifySequence", envelopes, doc["keyring"], now, doc["skew_ms"])
        assert [("OK" if o["ok"] else o["code"]) for o in outcomes] == c["expected"], c["id"]
        if "sign" in c:
            signer = doc["signers"][c["sign"]["signer"]]
            assert ai.contract_call("envelope.sign", c["sign"]["fields"], signer) == envelopes[0]
        if "signing_input_sha256" in c:
            assert ai.contract_call("envelope.signingInput", envelopes[0])["sha256"] == c["signing_input_sha256"]
        if c["expected"] == ["OK"]:
            ai.verify_envelope(envelopes[0], doc["keyring"], now, doc["skew_ms"])
        return None

    counts = run_cases("transport-envelope-v1.json", doc["cases"], run)
    assert counts["skipped"] == 0


def pad_check(c: Dict[str, Any]) -> Optional[tuple[str, Dict[str, Any], Any]]:
    k = c["kind"]
    if k == "visibility":
        m, r = c["message"], c["reader"]
        args = {
            "message": {"from": m["from"], "to": m["to"], "privacy": m["privacy"], "sender_team": m["senderTeam"],
                        "project_root": m["projectRoot"], "expires_at": m["expiresAt"]},
            "reader": {"agent": r["agent"], "team": r["team"], "project_root": r["projectRoot"]},
            "now": c["now"],
        }
        return ("check.visible", args, lambda res, err: res is not None and res["visible"] == c["visible"])
    if k == "ttl":
        hours = json.loads(c["ttlJson"]) if "ttlJson" in c else c.get("ttlHours")
        exp = c["expected"]
        return ("check.ttl", {"ttl_hours": hours},
                lambda res, err: res["hours"] == exp if isinstance(exp, int) and res else err is not None and err.code == exp)
    if k == "transition":
        return ("check.transition", {"from": c["from"], "to": c["to"]},
                lambda res, err: bool(res) if c["allowed"] else err is not None and err.code == "INVALID_TRANSITION")
    if k == "addressing":
        return ("check.addressing", {"privacy": c["privacy"], "to": c["to"]},
                lambda res, err: bool(res) if c["expected"] == "ok" else err is not None and err.code == c["expected"])
    if k == "task_read":
        return ("check.task_read", {"task": {"creator": c["task"]["creator"], "assignee": c["task"]["assignee"]}, "agent": c["agent"]},
                lambda res, err: bool(res) if c["expected"] == "ok" else err is not None and err.code == c["expected"])
    if k == "redaction":
        return ("check.redact", {"text": c["text"], "project_root": c.get("projectRoot")},
                lambda res, err: res is not None and res["text"] == c["expected"])
    if k == "rate":
        def judge(res: Any, err: Any) -> bool:
            got = [{"allowed": True} if x["allowed"] else {"allowed": False, "retryAfterMs": x["retry_after_ms"]} for x in res]
            return bool(got == c["expected"])
        return ("check.rate", {"per_minute": c["perMinute"], "takes": c["takes"]}, judge)
    return None


def run_scenario(c: Dict[str, Any], path: str) -> None:
    with ai.open_scratchpad(path, **c["options"]) as s:
        names: Dict[str, str] = {}

        def lab(v: Any) -> str:
            return names.get(v if isinstance(v, str) else v["id"], "?")

        for i, step in enumerate(c["steps"]):
            where = f"{c['id']} step {i}: {step['op']}"
            expect = step.get("expect") or {}
            if expect.get("error"):
                with pytest.raises(ai.IntercomError) as e:
                    s.request(step["op"], step.get("args"))
                assert e.value.code == expect["error"], where
                continue
            res = s.request(step["op"], step.get("args"))
            if step.get("label"):
                names[res["id"]] = step["label"]
            if "ids" in expect:
                got = res if isinstance(res, list) else res["messages"]
                assert [lab(x) for x in got] == expect["ids"], where
            if "evicted" in expect:
                assert [lab(x) for x in res["evicted"]] == expect["evicted"], where


def test_scratchpad_vectors() -> None:
    doc = read_vectors("scratchpad-v1.json")
    assert doc["count"] == len(doc["cases"])

    def run(c: Dict[str, Any]) -> Optional[str]:
        if c["kind"] == "scenario":
            with tempfile.TemporaryDirectory() as d:
                run_scenario(c, f"{d}/pad.sqlite")
            return None
        check = pad_check(c)
        assert check is not None, f"{c['id']}: unknown kind {c['kind']}"
        op, args, judge = check
        res, err = None, None
        try:
            res = ai.check_rule(op, args)
        except ai.IntercomError as e:
            err = e
        assert judge(res, err), f"{c['id']}: {err.code + ' ' + str(err) if err else res}"
        return None

    counts = run_cases("scratchpad-v1.json", doc["cases"], run)
    assert counts["skipped"] == 0


def test_policy() -> None:
    doc = read_vectors("policy-v2.json")
    assert doc["version"] == 2

    def run(v: Dict[str, Any]) -> Optional[str]:
        state = ai.contract_call("policy.stateForVector", v)
        args = [v[k] for k in ("actorId", "action", "targetId", "context") if k in v]
        decision = ai.contract_call("policy.authorize", state, *args)
        label = decision["reason"] if decision["allowed"] else decision["code"]
        assert (decision["allowed"], label, len(decision)) == (v["expectedAllowed"], v["expectedReasonOrCode"], 2), v["name"]
        return None

    counts = run_cases("policy-v2.json", doc["vectors"], run, key="name")
    if not filtered():
        assert [counts["executed"], counts["skipped"]] == [12, 0]
    constants = ai.contract_call("policy.constants")
    assert constants["POLICY_SEMANTICS_HASH"] == "f3b00e503631bc91123aedfbcf1df72cc9913e1893c09728b2c598f3dcdfdfe0"
    assert constants["corpus"] == doc


def test_supervision() -> None:
    doc = read_vectors("orc-supervision-v1.json")

    def at(pointer: str) -> Any:
        value: Any = doc
        for token in pointer.split("/")[1:]:
            value = value[int(token)] if isinstance(value, list) else value[token]
        return value

    def run(c: Dict[str, Any]) -> Optional[str]:
        args = [at(p) for p in c["args"]]
        outcome = c["outcome"]
        if "throws" in outcome:
            with pytest.raises(ai.ContractError) as e:
                ai.contract_call(c["op"], *args)
            assert (e.value.cls, str(e.value)) == (outcome["throws"]["class"], outcome["throws"]["message"]), c["id"]
            return None
        result = ai.contract_call(c["op"], *args)
        if "equalsArg" in outcome:
            assert result == args[outcome["equalsArg"]], c["id"]
        elif "validStoreRecordOf" in outcome:
            assert result == {"ok": True, "status": "valid", "value": args[outcome["validStoreRecordOf"]]}, c["id"]
        else:
            assert result == outcome["value"], c["id"]
        return None

    counts = run_cases("orc-supervision-v1.json", doc["cases"], run)
    if not filtered():
        assert counts["executed"] == 64
    assert ai.canonical_hash(doc["corpus"], doc["semantics"]) == doc["semanticsHash"]


def test_boss_policy_and_feature_routing() -> None:
    policy = read_vectors("boss-policy-v1.json")

    def decide(v: Dict[str, Any]) -> Optional[str]:
        state = ai.contract_call("boss.bossPolicyStateForVector", v)
        # Absent actor, action and target are null; an absent context is left off (undefined).
        args = [v.get(k) for k in ("actorId", "action", "targetId")] + ([v["context"]] if "context" in v else [])
        decision = ai.contract_call("boss.authorizeBossPolicy", state, *args)
        label = decision["reason"] if decision["allowed"] else decision["code"]
        assert (decision["allowed"], label) == (v["expectedAllowed"], v["expectedReasonOrCode"]), v["name"]
        return None

    counts = run_cases("boss-policy-v1.json", policy["vectors"], decide, key="name")
    if not filtered():
        assert counts["executed"] == 523
    routing = read_vectors("feature-routing-v1.json")

    def route(v: Dict[str, Any]) -> Optional[str]:
        scenario = ai.contract_call("boss.featureRoutingCaseForVector", v)
        expected = scenario["expected"]
        op = "boss." + scenario["entryPoint"]
        if expected.get("throws"):
            with pytest.raises(ai.ContractError) as e:
                ai.contract_call(op, *scenario["args"])
            assert e.value.cls == expected["throws"], v["name"]
            return None
        decision = ai.contract_call(op, *scenario["args"])
        assert decision["allowed"] == expected["allowed"], v["name"]
        key = "reason" if decision["allowed"] else "code"
        if expected.get(key):
            assert decision[key] == expected[key], v["name"]
        return None

    counts = run_cases("feature-routing-v1.json", routing["vectors"], route, key="name")
    if not filtered():
        assert counts["executed"] == 45


def test_http_signatures() -> None:
    import hashlib

    doc = read_vectors("http-signatures-v1.json")
    keys = doc["keys"]
    call = ai.contract_call

    def with_headers(message: Dict[str, Any], lines: List[List[str]]) -> Dict[str, Any]:
        return {**message, "headers": [*message["headers"], *lines]}

    def ring(names: Dict[str, str]) -> Dict[str, str]:
        return {i: keys[name]["publicKey"] for i, name in names.items()}

    def matches(answer: Dict[str, Any], expected: Dict[str, Any], what: str) -> None:
        for key, want in expected.items():
            assert answer.get(key) == want, f"{what}: {key} of {answer}"

    def signed(answer: Dict[str, Any]) -> List[List[str]]:
        return [["Content-Digest", answer["contentDigest"]], ["Signature-Input", answer["signatureInput"]],
                ["Signature", answer["signature"]]]

    def run(c: Dict[str, Any]) -> Optional[str]:
        k = c["kind"]
        if k == "rfc-signature":
            with_input = with_headers(c["message"], [["Signature-Input", c["signatureInput"]]])
            answer = call("httpsig.signatureBase", with_input, c["label"])
            assert answer["ok"] is True and answer["base"] == c["expected"]["base"]
            assert len(answer["base"].encode()) == c["expected"]["baseLength"]
            assert hashlib.sha256(answer["base"].encode()).hexdigest() == c["expected"]["baseSha256"]
            key = keys[c["key"]]
            made = call("httpsig.sign", c["message"], c["signatureInput"], c["label"], key["privateKey"])
            matches(made, {"ok": True, "signatureInput": c["signatureInput"], "signature": c["signature"]}, "sign")
            both = with_headers(with_input, [["Signature", c["signature"]]])
            matches(call("httpsig.verify", both, c["label"], key["publicKey"]), {"ok": True}, "verify")
        elif k == "content-digest":
            value = call("httpsig.contentDigest", c["algorithm"], c["body"])
            assert value == c["expected"]
            matches(call("httpsig.checkContentDigest", value, c["body"]), {"ok": True}, "check")
        elif k == "check-content-digest":
            matches(call("httpsig.checkContentDigest", c["field"], c["body"]), c["expected"], "check")
        elif k == "signature-base":
            message = with_headers(c["message"], [["Signature-Input", c["signatureInput"]]])
            matches(call("httpsig.signatureBase", message, c["label"]), c["expected"], "base")
        elif k == "sign-request":
            answer = call("httpsig.signRequest", c["profile"], c["request"], c["body"], keys[c["signer"]["key"]]["privateKey"], c["signer"])
            matches(answer, c["expected"], "sign")
            request = with_headers(c["request"], signed(answer))
            v = c["verify"]
            matches(call("httpsig.verifyRequest", c["profile"], request, c["body"], v["nowMs"], ring(v["keyring"])), v["expected"], "verify")
        elif k == "verify-request":
            answer = call("httpsig.verifyRequest", c["profile"], c["request"], c["body"], c["nowMs"], ring(c["keyring"]))
            matches(answer, c["expected"], "verify")
        elif k == "sign-response":
            answer = call("httpsig.signResponse", c["profile"], c["response"], c["request"], c["body"],
                          keys[c["signer"]["key"]]["privateKey"], c["signer"])
            matches(answer, c["expected"], "sign")
            response = with_headers(c["response"], signed(answer))
            v = c["verify"]
            matches(call("httpsig.verifyResponse", c["profile"], response, c["request"], c["body"], v["nowMs"], ring(v["keyring"])),
                    v["expected"], "verify")
        elif k == "verify-response":
            answer = call("httpsig.verifyResponse", c["profile"], c["response"], c["request"], c["body"], c["nowMs"], ring(c["keyring"]))
            matches(answer, c["expected"], "verify")
        else:
            raise AssertionError(f"unknown kind {k}")
        return None

    counts = run_cases("http-signatures-v1.json", doc["cases"], run)
    if not filtered():
        assert counts["executed"] == doc["count"]


def test_participant_state() -> None:
    call = ai.contract_call
    state = read_vectors("boss-participant-state-v1.json")
    cases = ([{"id": f"migration: {v['name']}", "kind": "migration", "v": v} for v in state["migrationVectors"]]
             + [{"id": f"stopping: {v['name']}", "kind": "stopping", "v": v} for v in state["stoppingReconciliationVectors"]]
             + [{"id": "health event", "kind": "health", "v": state["healthEvent"]}])

    def run(c: Dict[str, Any]) -> Optional[str]:
        v = c["v"]
        if c["kind"] == "migration":
            assert call("boss.migrateLegacyWorkerRecordV1", v["input"]) == v["expected"]
            assert call("boss.parseMigratedWorkerRecordV2", v["expected"]) == v["expected"]
            assert call("boss.canDispatchMigratedWorker", v["expected"]) is False
        elif c["kind"] == "stopping":
            settled = call("boss.reconcileLegacyStoppingWorker", v["pending"], v["evidence"])
            assert (settled["state"], settled["reason"]) == (v["expectedState"], v["expectedReason"])
            assert settled["stoppingReconciliation"] == v["evidence"]
            assert [settled["migrationStatus"], settled["readOnly"], settled["dispatchAllowed"]] == ["complete", False, False]
            assert call("boss.parseMigratedWorkerRecordV2", settled) == settled
        else:
            assert call("boss.parseParticipantHealthEventV1", v) == v
        return None

    counts = run_cases("boss-participant-state-v1.json", cases, run)
    if not filtered():
        assert counts["executed"] == state["count"] == 14
    transitions = read_vectors("boss-participant-state-transition-v1.json")

    def transition(v: Dict[str, Any]) -> Optional[str]:
        assert call("boss.validateParticipantStateTransition", v["input"]) is None
        assert call("boss.parseParticipantStateTransitionContextV1", v["input"]) == v["input"]
        return None

    counts = run_cases("boss-participant-state-transition-v1.json", transitions["transitionVectors"], transition, key="name")
    if not filtered():
        assert counts["executed"] == transitions["count"] == 12


def test_worker_store_migration() -> None:
    call = ai.contract_call
    doc = read_vectors("worker-store-migration-v2.json")
    cases = ([{"name": v["name"], "kind": "migration", "v": v} for v in doc["vectors"]]
             + [{"name": v["name"], "kind": "rejection", "v": v, "error": e}
                for v, e in zip(doc["strictRejectionVectors"], doc["strictRejectionErrors"])])

    def same_ordered(actual: Any, expected: Any) -> None:
        assert actual == expected and json.dumps(actual) == json.dumps(expected)

    def run(c: Dict[str, Any]) -> Optional[str]:
        v = c["v"]
        if c["kind"] == "rejection":
            want = c["error"]
            assert want["name"] == v["name"]
            with pytest.raises(ai.ContractError) as e:
                call("boss.parseWorkerStoreRecordV2", v["value"])
            assert (e.value.cls, e.value.path, str(e.value)) == (want["class"], want["path"], want["message"])
            return None
        same_ordered(call("boss.parseFullWorkerStoreMigrationInputV1", v["input"]), v["input"])
        migrated = call("boss.migrateFullWorkerStoreV1", v["input"])
        same_ordered(migrated, v["expected"])
        assert "bossRunId" not in migrated["worker"]
        same_ordered(call("boss.parseWorkerStoreRecordV2", v["expected"]), v["expected"])
        return None

    counts = run_cases("worker-store-migration-v2.json", cases, run, key="name")
    if not filtered():
        assert counts["executed"] == 26


# wire-v4.json runs in test_wire.py (a broker per case), broker-client-v1.json in
# test_client_answers.py (a fake broker); every other file here.
ELSEWHERE = ["wire-v4.json", "broker-client-v1.json"]


def test_every_vector_file_is_accounted_for() -> None:
    import conftest

    ran = {"protocol-v4.json", "protocol-v4-local.json", "canonical.json", "asks-v1.json",
           "transport-envelope-v1.json", "scratchpad-v1.json", "policy-v2.json", "orc-supervision-v1.json",
           "boss-policy-v1.json", "feature-routing-v1.json", "http-signatures-v1.json",
           "boss-participant-state-v1.json", "boss-participant-state-transition-v1.json",
           "worker-store-migration-v2.json"}
    files = {p.name for p in conftest.VECTORS.glob("*.json")}
    assert files == ran | set(ELSEWHERE), files ^ (ran | set(ELSEWHERE))
