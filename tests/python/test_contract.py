"""Bad input through every kind of function: wrong types, unknown keys, invalid scopes (never
echoed), values that are not plain data. Each raises IntercomError with the core's code; none
crashes the interpreter."""

from __future__ import annotations

from typing import Any, Callable

import pytest

import agent_intercom as ai

SECRET = "sk.not a scope!4242"


def code_of(fn: Callable[[], Any]) -> str:
    with pytest.raises(ai.IntercomError) as e:
        fn()
    assert isinstance(e.value.code, str) and e.value.code in ai.ERROR_CODES, e.value.code
    assert e.value.message == str(e.value) and e.value.accepted is None and e.value.message_id is None
    return e.value.code


def test_scopes() -> None:
    assert ai.parse_scope(ai.SCOPE_A) == ai.SCOPE_A
    assert ai.parse_scope(None) is None and ai.parse_scope("") is None
    assert ai.same_scope(ai.SCOPE_A, ai.SCOPE_A) and not ai.same_scope(ai.SCOPE_A, ai.SCOPE_B)
    assert ai.same_scope(None, "")
    for bad in [SECRET, " " + ai.SCOPE_A, 5, b"Scope_AAAAAAAAAA", ["x"], "\ud800" * 20]:
        with pytest.raises(ai.IntercomError) as e:
            ai.parse_scope(bad, "scopeId")
        assert e.value.code == "INVALID_SCOPE"
        assert SECRET not in str(e.value) and "Scope_" not in str(e.value)
        assert str(e.value).startswith("scopeId must match ")
    with pytest.raises(ai.IntercomError) as e:
        ai.connect("/tmp", scope=SECRET)
    assert e.value.code == "INVALID_SCOPE" and SECRET not in str(e.value)


def test_wrong_types() -> None:
    assert code_of(lambda: ai.resolve_target("not a list", None, "x")) == "INVALID_ARGUMENT"
    assert code_of(lambda: ai.resolve_target([{"id": 1}], None, "x")) == "INVALID_ARGUMENT"
    assert code_of(lambda: ai.resolve_target([], None, 5)) == "INVALID_ARGUMENT"
    assert code_of(lambda: ai.audience("nope", [], "a")) == "INVALID_ARGUMENT"
    assert code_of(lambda: ai.frame_disposition(-1)) == "INVALID_ARGUMENT"
    assert code_of(lambda: ai.frame_disposition("1")) == "INVALID_ARGUMENT"
    assert code_of(lambda: ai.frame_disposition(True)) == "INVALID_ARGUMENT"
    assert code_of(lambda: ai.narrow(["a"], "a")) == "INVALID_ARGUMENT"
    assert code_of(lambda: ai.canonical_hash(1, {})) == "INVALID_ARGUMENT"
    assert code_of(lambda: ai.canonical_hash_from_text("d", "{")) == "INVALID_JSON"
    assert code_of(lambda: ai.canonical_hash("dómain", {})) == "INVALID_DOMAIN"
    assert code_of(lambda: ai.canonical_json({"a": object()})) == "UNSUPPORTED_VALUE"
    assert code_of(lambda: ai.canonical_json({"a": [2**70]})) == "UNSUPPORTED_NUMBER"
    assert code_of(lambda: ai.canonical_json({"a": "\udc00"})) == "UNPAIRED_SURROGATE"
    deep: Any = 1
    for _ in range(ai.CONTRACT_MAX_DEPTH + 5):
        deep = [deep]
    assert code_of(lambda: ai.canonical_json(deep)) == "NESTING_TOO_DEEP"
    assert code_of(lambda: ai.run_vector({"name": "x"})) in ("INVALID_ARGUMENT", "UNKNOWN_KEY")
    assert code_of(lambda: ai.check_ask({"edges": [], "send": {"from": "a", "to": "b"}, "maxOpenAsks": 1, "id": "x"})) == "UNKNOWN_KEY"
    assert code_of(lambda: ai.contract_call(5)) == "INVALID_ARGUMENT"
    assert code_of(lambda: ai.contract_call("no.such")) == "INVALID_ARGUMENT"


def test_contract_refusals_are_contract_errors() -> None:
    assert ai.contract_call("canonical.readString", "x", "$.a") == "x"
    with pytest.raises(ai.ContractError) as e:
        ai.contract_call("canonical.readString", 1, "p")
    assert (e.value.cls, e.value.path, e.value.detail) == ("ContractValidationError", "p", "must be a non-empty string")
    assert "envelope.verify" in ai.contract_operations()


def test_broker_and_pad_arguments(agent_dir: str) -> None:
    assert code_of(lambda: ai.start_broker(agent_dir, settings={"no_such_limit": 1})) == "UNKNOWN_KEY"
    assert code_of(lambda: ai.start_broker(agent_dir, settings={"max_sessions": "many"})) == "INVALID_ARGUMENT"
    assert code_of(lambda: ai.start_broker(agent_dir, idle_exit_ms=-1)) == "INVALID_ARGUMENT"
    assert code_of(lambda: ai.start_broker(5)) == "INVALID_ARGUMENT"
    assert code_of(lambda: ai.connect(agent_dir, socket_path="")) == "INVALID_ARGUMENT"
    assert code_of(lambda: ai.connect(agent_dir, nope=1)) == "UNKNOWN_KEY"
    assert code_of(lambda: ai.connect(agent_dir)) == "NOT_CONNECTED"
    assert ai.broker_health(agent_dir + "/none.sock") == "unreachable"
    assert code_of(lambda: ai.open_scratchpad(agent_dir + "/p.sqlite", no_such_option=1)) == "UNKNOWN_KEY"
    assert code_of(lambda: ai.open_scratchpad(agent_dir + "/p.sqlite", per_project_cap=0)) == "INVALID_ARGUMENT"
    assert code_of(lambda: ai.check_rule("post", {})) == "INVALID_ARGUMENT"
    assert code_of(lambda: ai.check_rule("check.ttl", "x")) == "INVALID_ARGUMENT"


def test_cycles_and_odd_values_never_crash() -> None:
    cyclic: Any = []
    cyclic.append(cyclic)
    assert code_of(lambda: ai.canonical_json(cyclic)) == "NESTING_TOO_DEEP"
    looped: Any = {}
    looped["self"] = looped
    assert code_of(lambda: ai.canonical_hash("d", looped)) == "NESTING_TOO_DEEP"
    assert code_of(lambda: ai.contract_call("canonical.readString", cyclic)) == "NESTING_TOO_DEEP"
    assert code_of(lambda: ai.canonical_json(b"bytes")) == "UNSUPPORTED_VALUE"
    assert code_of(lambda: ai.canonical_json({(1, 2): 1})) == "UNSUPPORTED_VALUE"
    assert ai.canonical_json(("a", True, None)) == '["a",true,null]'
