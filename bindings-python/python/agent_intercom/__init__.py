"""agent-intercom for Python: the pi-intercom protocol v4 contract, the broker client and the
scratchpad. Every rule is the Rust crates' (the extension ``agent_intercom._native``); this
package only arranges them. Every failure is an :class:`IntercomError` with a stable ``code``."""

from __future__ import annotations

import atexit
import json
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional

from . import _native
from ._native import (
    ANSWER_TIMEOUT_MS as ANSWER_TIMEOUT_MS,
    CANONICAL_MAX_DEPTH as CANONICAL_MAX_DEPTH,
    CONTRACT_MAX_DEPTH as CONTRACT_MAX_DEPTH,
    CORPUS_JSON as CORPUS_JSON,
    ENCODING_VERSION as ENCODING_VERSION,
    ERROR_CODES as ERROR_CODES,
    FRAME_PREFIX as FRAME_PREFIX,
    PAD_CHECKS as PAD_CHECKS,
    PAD_OPERATIONS as PAD_OPERATIONS,
    PAD_OPTION_KEYS as PAD_OPTION_KEYS,
    PROTOCOL_NAME as PROTOCOL_NAME,
    PROTOCOL_VERSION as PROTOCOL_VERSION,
    SCOPE_A as SCOPE_A,
    SCOPE_B as SCOPE_B,
    SCOPE_ENV as SCOPE_ENV,
    SCOPE_ID_PATTERN as SCOPE_ID_PATTERN,
    SEMANTICS_HASH as SEMANTICS_HASH,
    VECTOR_SCHEMA_VERSION as VECTOR_SCHEMA_VERSION,
    VECTORS_HASH_DOMAIN as VECTORS_HASH_DOMAIN,
    VERSION as VERSION,
    Broker as Broker,
    Client as Client,
    ContractError as ContractError,
    IntercomError as IntercomError,
    Message as Message,
    MessageIter as MessageIter,
    access_control as access_control,
    audience as audience,
    broker_health as broker_health,
    broker_socket_path as broker_socket_path,
    canonical_frame as canonical_frame,
    canonical_hash as canonical_hash,
    canonical_hash_from_text as canonical_hash_from_text,
    canonical_json as canonical_json,
    canonical_json_from_text as canonical_json_from_text,
    check_ask as check_ask,
    check_rule as check_rule,
    connect as connect,
    contract_call as contract_call,
    contract_operations as contract_operations,
    default_scratchpad_path as default_scratchpad_path,
    ensure_broker as ensure_broker,
    frame_disposition as frame_disposition,
    list_visible as list_visible,
    narrow as narrow,
    parse_scope as parse_scope,
    plan_replacement as plan_replacement,
    resolve_target as resolve_target,
    run_vector as run_vector,
    same_scope as same_scope,
    semantics_hash_of_text as semantics_hash_of_text,
    start_broker as start_broker,
)

if TYPE_CHECKING:  # the shapes of the dicts the extension returns (stubs only)
    from ._native import (
        AskControl as AskControl,
        Ensured as Ensured,
        LifecycleEvent as LifecycleEvent,
        Registered as Registered,
        ReplacementPlan as ReplacementPlan,
        Resolution as Resolution,
        Sent as Sent,
    )

__version__ = VERSION

# A broker this process started stops with the interpreter, removing its files.
atexit.register(_native._close_brokers)


def protocol_v4_vectors() -> List[Dict[str, Any]]:
    """The published protocol-v4 vectors (the corpus whose semantics hash is SEMANTICS_HASH)."""
    vectors: List[Dict[str, Any]] = json.loads(CORPUS_JSON)["vectors"]
    return vectors


def verify_envelope(
    text: str, keyring: Mapping[str, Any], now_ms: int, skew_ms: Optional[int] = None
) -> Any:
    """Verifies a transport envelope (the core's ``envelope.verify``); a refusal raises
    :class:`ContractError` with its code (``SIGNATURE_INVALID``, ``REPLAYED``, ...)."""
    args: List[Any] = [text, dict(keyring), now_ms]
    if skew_ms is not None:
        args.append(skew_ms)
    return contract_call("envelope.verify", *args)


# Operation name -> method name: "task.create" is Scratchpad.task_create.
_PAD_METHODS = {op.replace(".", "_"): op for op in PAD_OPERATIONS}


class Scratchpad:
    """A scratchpad store (SQLite, shared safely by many processes). Every operation of
    ``PAD_OPERATIONS`` is a method (``task.create`` is ``task_create``) taking the arguments as
    a dict (and/or keywords); unknown keys are refused with ``UNKNOWN_KEY``."""

    def __init__(self, native: _native.Pad, path: str) -> None:
        self._native = native
        self.path = path

    def request(self, op: str, args: Optional[Mapping[str, Any]] = None) -> Any:
        """Runs one operation (or rule check) by name; returns its result."""
        return self._native.request(op, args)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        op = _PAD_METHODS.get(name)
        if op is None:
            raise AttributeError(name)

        def call(args: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> Any:
            if kwargs:
                if args is not None and not isinstance(args, dict):
                    return self.request(op, args)  # refused there: args must be a dict
                args = {**(args or {}), **kwargs}
            return self.request(op, args)

        return call

    @property
    def closed(self) -> bool:
        return self._native.closed

    def close(self) -> None:
        """Closes the store; later calls raise. Closing twice is harmless."""
        self._native.close()

    def __enter__(self) -> "Scratchpad":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_scratchpad(path: Any = None, **options: Any) -> Scratchpad:
    """Opens (creating if needed) the store at ``path`` (default: ``default_scratchpad_path()``).
    ``options`` are the store's (``PAD_OPTION_KEYS``); another is ``UNKNOWN_KEY``."""
    import os

    chosen = default_scratchpad_path() if path is None else path
    if isinstance(chosen, (str, os.PathLike)) and os.fspath(chosen) != "":
        chosen = os.path.abspath(os.fspath(chosen))
    return Scratchpad(_native.open_pad(chosen, options), str(chosen))
