//! The protocol-v4 contract: constants, scopes, routing, replacement, canonical JSON, ask
//! threading.

use std::ffi::c_char;
use std::ptr;

use agent_intercom_core::ErrorCode;
use agent_intercom_core::asks;
use agent_intercom_core::canonical;
use agent_intercom_core::corpus;
use agent_intercom_core::protocol;
use agent_intercom_core::routing::{
    self, AudienceEvent, FrameDisposition, LifecycleKind, ReplacementKind, ResolveKind,
};
use agent_intercom_core::scope;

use crate::AIC_HASH_HEX_LEN;
pub use crate::args::aic_candidate;
use crate::args::{fail, out, owned_string, scope_arg, sessions, text, write_indices};

/// Whether a parsed scope input is the unscoped group or a scope id.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum aic_scope_kind {
    /// Absent or empty: the unscoped group.
    Unscoped = 0,
    /// A valid scope id.
    Scoped = 1,
}

/// One lifecycle event of a replacement plan.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct aic_lifecycle_step {
    /// `left` or `joined`.
    pub kind: LifecycleKind,
    /// true when the event goes to the new scope's audience, false for the old scope's.
    pub in_new_scope: bool,
}

/// The ordered events of a session-id replacement.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct aic_replacement_plan {
    /// Cross-scope or same-scope.
    pub kind: ReplacementKind,
    /// The events, to be emitted in this order.
    pub steps: [aic_lifecycle_step; 2],
}

ffi_fn! {
    /// "pi-intercom". Static.
    fn aic_protocol_name() -> *const c_char {
        static_cstr!(protocol::PROTOCOL_NAME)
    }
}

ffi_fn! {
    /// 4.
    fn aic_protocol_version() -> u32 {
        protocol::PROTOCOL_VERSION
    }
}

ffi_fn! {
    /// "AGENT_INTERCOM_SCOPE_ID". Static.
    fn aic_scope_env() -> *const c_char {
        static_cstr!(protocol::SCOPE_ENV)
    }
}

ffi_fn! {
    /// "^[A-Za-z0-9_-]{16,128}$". Static.
    fn aic_scope_id_pattern_source() -> *const c_char {
        static_cstr!(protocol::SCOPE_ID_PATTERN_SOURCE)
    }
}

ffi_fn! {
    /// The acceptance-vector schema version (2).
    fn aic_vector_schema_version() -> u32 {
        protocol::VECTOR_SCHEMA_VERSION
    }
}

ffi_fn! {
    /// The semantics hash of the embedded protocol-v4 corpus, computed from its vectors (64
    /// lowercase hex characters). Static.
    fn aic_protocol_v4_semantics_hash() -> *const c_char {
        static_cstr!(corpus::semantics_hash())
    }
}

ffi_fn! {
    /// The embedded corpus document (vectors/protocol-v4.json) as UTF-8 JSON. Static. Its length
    /// in bytes is written to `out_len` when that is non-NULL.
    ///
    /// # Safety
    /// `out_len` must be NULL or valid for writes.
    unsafe fn aic_protocol_v4_corpus_json(out_len: *mut usize) -> *const c_char {
        if !out_len.is_null() {
            // SAFETY: by contract.
            unsafe { *out_len = corpus::CORPUS_JSON.len() };
        }
        static_cstr!(corpus::CORPUS_JSON)
    }
}

ffi_fn! {
    /// Parses a scope input. NULL/empty is unscoped; anything else must match
    /// ^[A-Za-z0-9_-]{16,128}$ byte for byte (AIC_STATUS_INVALID_SCOPE otherwise).
    ///
    /// # Safety
    /// `value` must be NULL or readable for `len` bytes; `out_kind` valid for writes; `err` NULL or
    /// valid for writes.
    fn aic_scope_parse(value: *const c_char, len: usize, out_kind: *mut aic_scope_kind) {
        // SAFETY: forwarded contract.
        let parsed = unsafe { scope_arg(value, len, "scopeId")? };
        *out(out_kind, "out_kind")? = if parsed.is_some() {
            aic_scope_kind::Scoped
        } else {
            aic_scope_kind::Unscoped
        };
        Ok(())
    }
}

ffi_fn! {
    /// Strict scope equality after parsing both inputs: unscoped equals only unscoped.
    ///
    /// # Safety
    /// Inputs follow the (pointer, length) contract; `out_same` valid for writes.
    fn aic_same_scope(
        left: *const c_char,
        left_len: usize,
        right: *const c_char,
        right_len: usize,
        out_same: *mut bool,
    ) {
        // SAFETY: forwarded contract.
        let (a, b) = unsafe {
            (
                scope_arg(left, left_len, "left")?,
                scope_arg(right, right_len, "right")?,
            )
        };
        *out(out_same, "out_same")? = scope::same_scope(a, b);
        Ok(())
    }
}

ffi_fn! {
    /// Resolves a `send.to` selector (global exact id, then exact case-sensitive name in the
    /// actor's scope, then unique id prefix in the actor's scope). Writes the kind, the number of
    /// matching candidates to `out_count`, and up to `capacity` of their indices (ascending) to
    /// `out_indices` (which may be NULL only when `capacity` is 0; a capacity of more than
    /// PTRDIFF_MAX bytes is refused like an input length). AMBIGUOUS_TARGET and SESSION_NOT_FOUND
    /// are outcomes, not failures: the status is AIC_STATUS_OK.
    ///
    /// # Safety
    /// `candidates` readable for `count` elements (or NULL with 0); text inputs follow the
    /// (pointer, length) contract; `out_indices` writable for `capacity` elements.
    fn aic_resolve_target(
        candidates: *const aic_candidate,
        count: usize,
        actor_scope: *const c_char,
        actor_scope_len: usize,
        selector: *const c_char,
        selector_len: usize,
        out_kind: *mut ResolveKind,
        out_indices: *mut usize,
        capacity: usize,
        out_count: *mut usize,
    ) {
        // SAFETY: forwarded contract.
        let (list, actor_scope, selector) = unsafe {
            (
                sessions(candidates, count)?,
                scope_arg(actor_scope, actor_scope_len, "actorScope")?,
                text(selector, selector_len, "selector")?,
            )
        };
        let kind = out(out_kind, "out_kind")?;
        let resolution = routing::resolve_target(actor_scope, selector, &list);
        write_indices(&resolution.matches, out_indices, capacity, out_count)?;
        *kind = resolution.kind;
        Ok(())
    }
}

ffi_fn! {
    /// Like aic_resolve_target, with the candidates given as a JSON array of
    /// `{"id": string, "name"?: string|null, "scope"?: string|null}`. Writes an owned JSON object
    /// `{"kind": "...", "targetIds": [...]}` to `out_json` (release with aic_string_free) and its
    /// length to `out_len` when non-NULL.
    ///
    /// # Safety
    /// Text inputs follow the (pointer, length) contract; `out_json` valid for writes.
    fn aic_resolve_target_json(
        candidates_json: *const c_char,
        candidates_json_len: usize,
        actor_scope: *const c_char,
        actor_scope_len: usize,
        selector: *const c_char,
        selector_len: usize,
        out_json: *mut *mut c_char,
        out_len: *mut usize,
    ) {
        // SAFETY: forwarded contract.
        let (doc_text, actor_scope, selector) = unsafe {
            (
                text(candidates_json, candidates_json_len, "candidates")?,
                scope_arg(actor_scope, actor_scope_len, "actorScope")?,
                text(selector, selector_len, "selector")?,
            )
        };
        let doc = canonical::parse(doc_text)?;
        let list =
            corpus::to_sessions(&corpus::parse_candidates(&doc, "candidates")?, "candidates")?;
        let resolution = routing::resolve_target(actor_scope, selector, &list);
        let ids = resolution
            .matches
            .iter()
            .map(|&i| canonical::Value::String(list[i].id.into()))
            .collect();
        let answer = canonical::Value::Object(vec![
            (
                "kind".into(),
                canonical::Value::String(resolution.kind.as_str().into()),
            ),
            ("targetIds".into(), canonical::Value::Array(ids)),
        ]);
        owned_string(canonical::canonical_json(&answer)?, out_json, out_len)
    }
}

ffi_fn! {
    /// The sessions a `list` from `actor_id` in `actor_scope` returns (itself plus its scope), as
    /// candidate indices; see aic_resolve_target for the output convention.
    ///
    /// # Safety
    /// As aic_resolve_target.
    fn aic_list_visible(
        candidates: *const aic_candidate,
        count: usize,
        actor_id: *const c_char,
        actor_id_len: usize,
        actor_scope: *const c_char,
        actor_scope_len: usize,
        out_indices: *mut usize,
        capacity: usize,
        out_count: *mut usize,
    ) {
        // SAFETY: forwarded contract.
        let (list, actor_id, actor_scope) = unsafe {
            (
                sessions(candidates, count)?,
                text(actor_id, actor_id_len, "actorId")?,
                scope_arg(actor_scope, actor_scope_len, "actorScope")?,
            )
        };
        write_indices(
            &routing::list_visible(actor_id, actor_scope, &list),
            out_indices,
            capacity,
            out_count,
        )
    }
}

ffi_fn! {
    /// Who hears `event` (an aic_audience_event value) about the subject: every session in the
    /// subject's scope except the subject. AIC_STATUS_INVALID_ARGUMENT for an unknown event.
    ///
    /// # Safety
    /// As aic_resolve_target.
    fn aic_audience(
        event: u32,
        candidates: *const aic_candidate,
        count: usize,
        subject_id: *const c_char,
        subject_id_len: usize,
        subject_scope: *const c_char,
        subject_scope_len: usize,
        out_indices: *mut usize,
        capacity: usize,
        out_count: *mut usize,
    ) {
        let event = AudienceEvent::all()
            .into_iter()
            .find(|e| *e as u32 == event)
        .ok_or_else(|| {
            fail(
                ErrorCode::InvalidArgument,
                format!("event {event} is not an aic_audience_event"),
            )
        })?;
        // SAFETY: forwarded contract.
        let (list, subject_id, subject_scope) = unsafe {
            (
                sessions(candidates, count)?,
                text(subject_id, subject_id_len, "subjectId")?,
                scope_arg(subject_scope, subject_scope_len, "subjectScope")?,
            )
        };
        write_indices(
            &routing::audience(event, subject_id, subject_scope, &list),
            out_indices,
            capacity,
            out_count,
        )
    }
}

ffi_fn! {
    /// Plans the replacement of a session id bound in `old_scope` by a binding in `new_scope`:
    /// `left` to the old scope's audience strictly before `joined` to the new scope's.
    ///
    /// # Safety
    /// Text inputs follow the (pointer, length) contract; `out_plan` valid for writes.
    fn aic_plan_replacement(
        old_scope: *const c_char,
        old_scope_len: usize,
        new_scope: *const c_char,
        new_scope_len: usize,
        out_plan: *mut aic_replacement_plan,
    ) {
        // SAFETY: forwarded contract.
        let (old, new) = unsafe {
            (
                scope_arg(old_scope, old_scope_len, "oldScope")?,
                scope_arg(new_scope, new_scope_len, "newScope")?,
            )
        };
        let plan = routing::plan_replacement("", old, new);
        let step = |i: usize| aic_lifecycle_step {
            kind: plan.events[i].kind,
            in_new_scope: plan.events[i].kind == LifecycleKind::Joined,
        };
        *out(out_plan, "out_plan")? = aic_replacement_plan {
            kind: plan.kind,
            steps: [step(0), step(1)],
        };
        Ok(())
    }
}

ffi_fn! {
    /// Accept or discard a frame that arrived on a connection with binding generation
    /// `connection_generation`, given the session's current generation (`has_current` false when
    /// the session is no longer bound).
    fn aic_frame_disposition_of(
        connection_generation: u64,
        current_generation: u64,
        has_current: bool,
    ) -> FrameDisposition {
        routing::frame_disposition(
            connection_generation,
            has_current.then_some(current_generation),
        )
    }
}

ffi_fn! {
    /// Runs a contract operation of the TypeScript contract by name (`policy.authorize`,
    /// `canonical.readTimestamp`, `boss.parseBossControlEnvelope`, ...) over `args_json`, a JSON
    /// array of its arguments. Writes an owned JSON object to `out_json` (release with
    /// aic_string_free): `{"ok":true,"value":V}` (no `value` when the function returns nothing)
    /// or `{"ok":false,"error":{"class","message","detail","path"?,"code"?}}` for a refusal,
    /// which is an answer, not a call failure. An unknown operation is AIC_INVALID_ARGUMENT,
    /// arguments that are not a JSON array AIC_INVALID_JSON or AIC_INVALID_ARGUMENT.
    ///
    /// # Safety
    /// Text inputs follow the (pointer, length) contract; `out_json` valid for writes.
    fn aic_contract_call(
        op: *const c_char,
        op_len: usize,
        args_json: *const c_char,
        args_len: usize,
        out_json: *mut *mut c_char,
        out_len: *mut usize,
    ) {
        // SAFETY: forwarded contract.
        let (op, args) = unsafe {
            (
                text(op, op_len, "op")?,
                text(args_json, args_len, "args_json")?,
            )
        };
        owned_string(agent_intercom_core::registry::call_json(op, args)?, out_json, out_len)
    }
}

ffi_fn! {
    /// Canonical JSON of a JSON document. Writes an owned NUL-terminated string to `out_json`
    /// (release with aic_string_free) and its length to `out_len` when non-NULL.
    ///
    /// # Safety
    /// `json` follows the (pointer, length) contract; `out_json` valid for writes.
    fn aic_canonical_json(
        json: *const c_char,
        json_len: usize,
        out_json: *mut *mut c_char,
        out_len: *mut usize,
    ) {
        // SAFETY: forwarded contract.
        let input = unsafe { text(json, json_len, "json")? };
        owned_string(canonical::canonical_json_of_text(input)?, out_json, out_len)
    }
}

ffi_fn! {
    /// canonicalHash(domain, document): lowercase hex SHA-256 of the canonical frame, written with
    /// a terminating NUL to `out_hex`, which must hold AIC_HASH_HEX_LEN + 1 bytes.
    ///
    /// # Safety
    /// Text inputs follow the (pointer, length) contract; `out_hex` writable for 65 bytes.
    fn aic_canonical_hash(
        domain: *const c_char,
        domain_len: usize,
        json: *const c_char,
        json_len: usize,
        out_hex: *mut c_char,
    ) {
        // SAFETY: forwarded contract.
        let (domain, input) = unsafe {
            (
                text(domain, domain_len, "domain")?,
                text(json, json_len, "json")?,
            )
        };
        let hex = canonical::canonical_hash_of_text(domain, input)?;
        let dest = out(out_hex, "out_hex")?;
        // SAFETY: the caller promises AIC_HASH_HEX_LEN + 1 writable bytes.
        unsafe {
            ptr::copy_nonoverlapping(hex.as_ptr().cast::<c_char>(), dest, AIC_HASH_HEX_LEN);
            *(dest as *mut c_char).add(AIC_HASH_HEX_LEN) = 0;
        }
        Ok(())
    }
}

ffi_fn! {
    /// The ask-threading rules on one send (agent_intercom_core::asks::check_ask_json): `json` is
    /// `{"edges": [{"asker", "messageId", "asked", "state": "blocking"|"deferred"}], "send":
    /// {"from", "to", "replyTo"?: string|null, "expectsReply"?: bool}, "maxOpenAsks": n}`, a case
    /// of vectors/asks-v1.json without its id, kind and expectation. Writes an owned canonical
    /// JSON answer to `out_json` (release with aic_string_free) and its length to `out_len` when
    /// non-NULL: `{"refused":"CODE"}` (the delivery_failed code) or
    /// `{"opens":bool,"resolves":{"asker":..,"messageId":..}|null}`. A refusal is an answer: the
    /// status is AIC_STATUS_OK. AIC_STATUS_UNKNOWN_KEY for a key the input does not have,
    /// AIC_STATUS_INVALID_ARGUMENT for a missing or mistyped value or for two edges with one
    /// (asker, messageId) or one (asker, asked) pair, the canonical JSON statuses (such as
    /// AIC_STATUS_INVALID_JSON) for text that is not JSON.
    ///
    /// # Safety
    /// `json` follows the (pointer, length) contract; `out_json` valid for writes.
    fn aic_check_ask_json(
        json: *const c_char,
        json_len: usize,
        out_json: *mut *mut c_char,
        out_len: *mut usize,
    ) {
        // SAFETY: forwarded contract.
        let input = unsafe { text(json, json_len, "json")? };
        owned_string(asks::check_ask_json(input)?, out_json, out_len)
    }
}
