//! N-API addon: converts JavaScript arguments, calls `agent_intercom_core`, converts back.
//! No rule lives here. The public JavaScript API is the package's `protocol-v4/`, `canonical/`
//! and root modules, which call these functions; a failure is thrown as an `Error` whose `code`
//! is the core's stable [`ErrorCode`] name and whose `message` is the core's message
//! (`lib/native.js` turns it into an `IntercomError`).

use agent_intercom_broker::BrokerConfig;
use agent_intercom_core::canonical;
use agent_intercom_core::corpus;
use agent_intercom_core::protocol;
use agent_intercom_core::routing::{self, AudienceEvent, Session};
use agent_intercom_core::scope::{self, Scope};
use agent_intercom_core::{Error, ErrorCode};
use agent_intercom_vendored as vendored;
use napi::bindgen_prelude::*;
use napi_derive::napi;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod client;
pub mod contract;

/// The status of an addon failure: napi makes its name the thrown `Error`'s `code`.
pub struct CodeStatus(pub ErrorCode);

impl AsRef<str> for CodeStatus {
    fn as_ref(&self) -> &str {
        self.0.as_str()
    }
}

/// What every fallible export returns.
type Result<T> = std::result::Result<T, napi::Error<CodeStatus>>;

pub(crate) fn js_error(error: Error) -> napi::Error<CodeStatus> {
    napi::Error::new(CodeStatus(error.code()), error.message())
}

/// A failure of napi itself (not of the input): `INTERNAL`, as for any bug at a boundary.
pub(crate) fn napi_failure(error: napi::Error) -> napi::Error<CodeStatus> {
    js_error(Error::new(ErrorCode::Internal, error.reason))
}

fn scope_arg<'a>(value: &'a Option<String>, path: &str) -> Result<Scope<'a>> {
    scope::parse_scope(value.as_deref(), path).map_err(js_error)
}

/// Every constant the JavaScript layer needs, read once at load.
#[napi(object)]
pub struct NativeConstants {
    pub version: String,
    pub protocol_name: String,
    pub protocol_version: u32,
    pub scope_env: String,
    pub scope_id_pattern_source: String,
    pub vector_schema_version: u32,
    pub scope_a: String,
    pub scope_b: String,
    pub vectors_hash_domain: String,
    pub known_semantics_hash: String,
    pub semantics_hash: String,
    pub corpus_json: String,
    pub error_codes: Vec<String>,
    pub max_depth: u32,
    /// The deepest nesting a contract call's arguments may have (the value itself is depth 1).
    pub contract_max_depth: u32,
    pub frame_prefix: String,
    pub encoding_version: u32,
    pub unicode_normalization: String,
    pub invalid_scope_message_suffix: String,
    pub vendored_files: Vec<NativeVendoredFile>,
    pub max_frame_bytes: u32,
    pub broker: NativeBrokerFacts,
    pub scratchpad: NativeScratchpadFacts,
}

/// What `lib/broker.js` needs to know about the broker, from `agent_intercom_broker`.
#[napi(object)]
pub struct NativeBrokerFacts {
    /// The variable naming the agent directory.
    pub agent_dir_env: String,
    /// The agent directory under the home directory when the variable is unset or blank.
    pub default_agent_dir: String,
    pub intercom_dir_name: String,
    pub socket_file_name: String,
    pub gateway_file_name: String,
    pub pid_file_name: String,
    pub owner_file_name: String,
    pub spawn_lock_file_name: String,
    pub store_file_name: String,
    /// The settings `idleExitMs` and `logLevel` become.
    pub idle_exit_ms_key: String,
    pub log_level_key: String,
    /// `logLevel` values, quietest first.
    pub log_levels: Vec<String>,
    pub default_idle_exit_ms: f64,
    pub max_idle_exit_ms: f64,
    /// What `Broker.close()` returns: why the broker stopped ...
    pub stop_reasons: Vec<String>,
    /// ... or, on a second call, this.
    pub already_stopped: String,
    /// The `endpoint` of a compatible `health_ok`.
    pub health_endpoint: String,
    /// The `remoteAccess` object of a compatible `health_ok`, as JSON text.
    pub health_remote_access_json: String,
    /// How long a client waits for the broker's answer to a request by default (`accessControl`).
    pub answer_timeout_ms: f64,
    /// What `deliveryStatus` resolves to (`wire::delivery_state::ALL`).
    pub delivery_states: Vec<String>,
}

/// What `lib/scratchpad.js` needs to know about the store's default location.
#[napi(object)]
pub struct NativeScratchpadFacts {
    /// The variable naming the store.
    pub path_env: String,
    /// The store's file name in the agent directory.
    pub default_file_name: String,
}

#[napi(object)]
pub struct NativeVendoredFile {
    pub format: String,
    pub file: String,
    pub sha256: String,
}

#[napi]
pub fn constants() -> NativeConstants {
    NativeConstants {
        version: agent_intercom_core::VERSION.into(),
        protocol_name: protocol::PROTOCOL_NAME.into(),
        protocol_version: protocol::PROTOCOL_VERSION,
        scope_env: protocol::SCOPE_ENV.into(),
        scope_id_pattern_source: protocol::SCOPE_ID_PATTERN_SOURCE.into(),
        vector_schema_version: protocol::VECTOR_SCHEMA_VERSION,
        scope_a: protocol::SCOPE_A.into(),
        scope_b: protocol::SCOPE_B.into(),
        vectors_hash_domain: protocol::VECTORS_HASH_DOMAIN.into(),
        known_semantics_hash: protocol::KNOWN_SEMANTICS_HASH.into(),
        semantics_hash: corpus::semantics_hash().into(),
        corpus_json: corpus::CORPUS_JSON.into(),
        error_codes: ErrorCode::all()
            .iter()
            .map(|c| c.as_str().to_string())
            .collect(),
        max_depth: canonical::MAX_DEPTH as u32,
        contract_max_depth: agent_intercom_core::contract::value::MAX_PARSE_DEPTH as u32,
        frame_prefix: canonical::FRAME_PREFIX.into(),
        encoding_version: canonical::ENCODING_VERSION,
        unicode_normalization: canonical::UNICODE_NORMALIZATION.into(),
        invalid_scope_message_suffix: scope::INVALID_SCOPE_MESSAGE_SUFFIX.into(),
        vendored_files: vendored::shipped()
            .iter()
            .map(|(file, content)| NativeVendoredFile {
                format: if file.ends_with(".cjs") { "cjs" } else { "esm" }.into(),
                file: (*file).into(),
                sha256: vendored::sha256_hex(content.as_bytes()),
            })
            .collect(),
        max_frame_bytes: agent_intercom_broker::config::DEFAULT_MAX_FRAME_BYTES as u32,
        broker: broker_facts(),
        scratchpad: NativeScratchpadFacts {
            path_env: agent_intercom_scratchpad::paths::PATH_ENV.into(),
            default_file_name: agent_intercom_scratchpad::paths::DEFAULT_FILE_NAME.into(),
        },
    }
}

fn broker_facts() -> NativeBrokerFacts {
    use agent_intercom_broker::config::{self, LogLevel};
    use agent_intercom_broker::{StopReason, wire};
    NativeBrokerFacts {
        agent_dir_env: config::AGENT_DIR_ENV.into(),
        default_agent_dir: config::DEFAULT_AGENT_DIR.into(),
        intercom_dir_name: config::INTERCOM_DIR_NAME.into(),
        socket_file_name: config::SOCKET_FILE_NAME.into(),
        gateway_file_name: config::GATEWAY_FILE_NAME.into(),
        pid_file_name: config::PID_FILE_NAME.into(),
        owner_file_name: config::OWNER_FILE_NAME.into(),
        spawn_lock_file_name: config::SPAWN_LOCK_FILE_NAME.into(),
        store_file_name: config::STORE_FILE_NAME.into(),
        idle_exit_ms_key: config::IDLE_EXIT_MS_KEY.into(),
        log_level_key: config::LOG_LEVEL_KEY.into(),
        log_levels: LogLevel::ALL.map(|l| l.as_str().to_string()).into(),
        default_idle_exit_ms: config::DEFAULT_IDLE_EXIT_MS as f64,
        max_idle_exit_ms: config::MAX_IDLE_EXIT_MS as f64,
        stop_reasons: StopReason::ALL.map(|r| r.as_str().to_string()).into(),
        already_stopped: StopReason::ALREADY_STOPPED.into(),
        health_endpoint: wire::LOCAL_ENDPOINT.into(),
        health_remote_access_json: wire::remote_access_contract().to_string(),
        answer_timeout_ms: agent_intercom_broker::client::ANSWER_TIMEOUT.as_millis() as f64,
        delivery_states: wire::delivery_state::ALL.map(str::to_string).into(),
    }
}

/// The scratchpad's default store (`agent_intercom_scratchpad::default_path`) for the value of
/// its variable (`None`: unset) and the agent directory.
#[napi]
pub fn default_pad_path(configured: Option<String>, agent_dir: String) -> String {
    let env = |key: &str| {
        (key == agent_intercom_scratchpad::paths::PATH_ENV)
            .then(|| configured.clone())
            .flatten()
    };
    agent_intercom_scratchpad::default_path(&env, || agent_dir.into())
        .display()
        .to_string()
}

/// Parses a scope input of any JavaScript type (`undefined`/`""` unscoped, a non-string invalid).
/// Returns whether it is scoped.
#[napi]
pub fn parse_scope(value: Unknown<'_>, path: String) -> Result<bool> {
    let text = match value.get_type().map_err(napi_failure)? {
        ValueType::Undefined => None,
        ValueType::String => Some(String::from_unknown(value).map_err(napi_failure)?),
        _ => {
            return Err(js_error(
                scope::parse_scope_input(scope::ScopeInput::NotText, &path).unwrap_err(),
            ));
        }
    };
    let input = text
        .as_deref()
        .map_or(scope::ScopeInput::Absent, scope::ScopeInput::Text);
    Ok(scope::parse_scope_input(input, &path)
        .map_err(js_error)?
        .is_some())
}

/// Strict equality of two parsed scopes.
#[napi]
pub fn same_scope(left: Option<String>, right: Option<String>) -> Result<bool> {
    Ok(scope::same_scope(
        scope_arg(&left, "left")?,
        scope_arg(&right, "right")?,
    ))
}

/// Routing candidates: their JSON text (checked by `lib/plain.js`), or, for a deep-frozen list,
/// the list read once ([`keep_candidates`]).
pub type Candidates<'a> = Either<String, &'a External<KeptCandidates>>;

fn with_sessions<T>(
    candidates: Candidates<'_>,
    f: impl FnOnce(&[Session<'_>]) -> Result<T>,
) -> Result<T> {
    match candidates {
        Either::A(text) => {
            let doc = canonical::parse(&text).map_err(js_error)?;
            let parsed = corpus::parse_candidates(&doc, "candidates").map_err(js_error)?;
            let sessions = corpus::to_sessions(&parsed, "candidates").map_err(js_error)?;
            f(&sessions)
        }
        Either::B(kept) => {
            let sessions: Vec<Session<'_>> = kept
                .0
                .iter()
                .map(|c| Session {
                    id: &c.id,
                    name: c.name.as_deref(),
                    scope: c.scope.as_deref().and_then(scope::ScopeId::parse),
                })
                .collect();
            f(&sessions)
        }
    }
}

/// One candidate of a kept list: its scope was checked when it was read.
pub struct KeptCandidate {
    id: String,
    name: Option<String>,
    scope: Option<String>,
}

/// A deep-frozen candidate list, read and checked once (it cannot change): the routing
/// functions take it in place of the list's text.
pub struct KeptCandidates(Vec<KeptCandidate>);

/// Reads and checks a candidate list given as JSON text, to be passed again in its place.
#[napi]
pub fn keep_candidates(candidates_json: String) -> Result<External<KeptCandidates>> {
    let doc = canonical::parse(&candidates_json).map_err(js_error)?;
    let parsed = corpus::parse_candidates(&doc, "candidates").map_err(js_error)?;
    let sessions = corpus::to_sessions(&parsed, "candidates").map_err(js_error)?;
    Ok(External::new(KeptCandidates(
        sessions
            .iter()
            .map(|s| KeptCandidate {
                id: s.id.to_string(),
                name: s.name.map(str::to_string),
                scope: s.scope.map(|scope| scope.as_str().to_string()),
            })
            .collect(),
    )))
}

fn ids(sessions: &[Session<'_>], indices: &[usize]) -> Vec<String> {
    indices
        .iter()
        .map(|&i| sessions[i].id.to_string())
        .collect()
}

#[napi(object)]
pub struct NativeResolution {
    pub kind: String,
    pub target_ids: Vec<String>,
}

#[napi]
pub fn resolve_target(
    candidates: Candidates<'_>,
    actor_scope: Option<String>,
    selector: String,
) -> Result<NativeResolution> {
    let actor_scope = scope_arg(&actor_scope, "actorScope")?;
    with_sessions(candidates, |sessions| {
        let r = routing::resolve_target(actor_scope, &selector, sessions);
        Ok(NativeResolution {
            kind: r.kind.as_str().into(),
            target_ids: ids(sessions, &r.matches),
        })
    })
}

#[napi]
pub fn list_visible(
    candidates: Candidates<'_>,
    actor_id: String,
    actor_scope: Option<String>,
) -> Result<Vec<String>> {
    let actor_scope = scope_arg(&actor_scope, "actorScope")?;
    with_sessions(candidates, |sessions| {
        Ok(ids(
            sessions,
            &routing::list_visible(&actor_id, actor_scope, sessions),
        ))
    })
}

#[napi]
pub fn audience(
    event: String,
    candidates: Candidates<'_>,
    subject_id: String,
    subject_scope: Option<String>,
) -> Result<Vec<String>> {
    let event = AudienceEvent::from_name(&event).ok_or_else(|| {
        let names = AudienceEvent::all().map(AudienceEvent::as_str);
        js_error(Error::new(
            ErrorCode::InvalidArgument,
            format!("event must be one of: {}", names.join(", ")),
        ))
    })?;
    let subject_scope = scope_arg(&subject_scope, "subjectScope")?;
    with_sessions(candidates, |sessions| {
        Ok(ids(
            sessions,
            &routing::audience(event, &subject_id, subject_scope, sessions),
        ))
    })
}

/// Members of `base` that `kept` also holds, in `base` order.
#[napi]
pub fn narrow(base: Vec<String>, kept: Vec<String>) -> Vec<String> {
    routing::narrow(&base, &kept).into_iter().cloned().collect()
}

#[napi(object)]
pub struct NativeLifecycleEvent {
    pub kind: String,
    pub session_id: String,
    pub scope: Option<String>,
}

#[napi(object)]
pub struct NativeReplacementPlan {
    pub kind: String,
    pub events: Vec<NativeLifecycleEvent>,
}

#[napi]
pub fn plan_replacement(
    session_id: String,
    old_scope: Option<String>,
    new_scope: Option<String>,
) -> Result<NativeReplacementPlan> {
    let (old, new) = (
        scope_arg(&old_scope, "oldScope")?,
        scope_arg(&new_scope, "newScope")?,
    );
    let plan = routing::plan_replacement(&session_id, old, new);
    Ok(NativeReplacementPlan {
        kind: plan.kind.as_str().into(),
        events: plan
            .events
            .iter()
            .map(|e| NativeLifecycleEvent {
                kind: e.kind.as_str().into(),
                session_id: e.session_id.into(),
                scope: e.scope.map(|s| s.as_str().to_string()),
            })
            .collect(),
    })
}

/// Generations are JavaScript safe integers (the JS layer refuses negative ones).
#[napi]
pub fn frame_disposition(
    connection_generation: i64,
    current_generation: Option<i64>,
) -> Result<String> {
    let current = current_generation
        .map(|g| non_negative(g, "currentGeneration"))
        .transpose()?;
    let connection = non_negative(connection_generation, "connectionGeneration")?;
    Ok(routing::frame_disposition(connection, current)
        .as_str()
        .into())
}

#[napi]
pub fn canonical_json_text(text: String) -> Result<String> {
    canonical::canonical_json_of_text(&text).map_err(js_error)
}

#[napi]
pub fn canonical_hash_text(domain: String, text: String) -> Result<String> {
    canonical::canonical_hash_of_text(&domain, &text).map_err(js_error)
}

#[napi]
pub fn canonical_frame_text(domain: String, text: String) -> Result<Buffer> {
    let payload = canonical::canonical_json_of_text(&text).map_err(js_error)?;
    canonical::frame_of_payload(&domain, &payload)
        .map(Buffer::from)
        .map_err(js_error)
}

/// Recomputes the semantics hash of a corpus document given as JSON text.
#[napi]
pub fn semantics_hash_of_text(text: String) -> Result<String> {
    let doc = canonical::parse(&text).map_err(js_error)?;
    corpus::semantics_hash_of(&doc).map_err(js_error)
}

/// Runs one vector (JSON text) through the core runner: `"pass"`, `"skip: <reason>"`, or
/// `"fail: <observed>"`.
#[napi]
pub fn run_vector_text(text: String) -> Result<String> {
    let wrapped = format!("{{\"vectors\":[{text}]}}");
    let doc = canonical::parse(&wrapped).map_err(js_error)?;
    let vectors = corpus::parse_vectors(&doc).map_err(js_error)?;
    Ok(match corpus::run_vector(&vectors[0]) {
        corpus::Outcome::Executed(Ok(())) => "pass".into(),
        corpus::Outcome::Executed(Err(why)) => format!("fail: {why}"),
        corpus::Outcome::Skipped(reason) => format!("skip: {reason}"),
    })
}

#[napi(object)]
pub struct NativeVendoredReport {
    pub ok: bool,
    pub byte_identical: bool,
    pub matched_file: Option<String>,
    pub sha256: String,
    pub schema_version: Option<i64>,
    pub semantics_hash: Option<String>,
    pub computed_semantics_hash: Option<String>,
    pub problems: Vec<String>,
}

/// Checks the bytes of a vendored copy of the one-file module.
#[napi]
pub fn check_vendored(bytes: Buffer) -> NativeVendoredReport {
    let r = vendored::check_vendored(&bytes);
    NativeVendoredReport {
        ok: r.ok(),
        byte_identical: r.byte_identical(),
        matched_file: r.matched_file.map(str::to_string),
        sha256: r.sha256,
        schema_version: r.schema_version,
        semantics_hash: r.semantics_hash,
        computed_semantics_hash: r.computed_semantics_hash,
        problems: r.problems,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn direct_calls() {
        assert!(
            super::same_scope(
                Some("Scope_AAAAAAAAAA".into()),
                Some("Scope_AAAAAAAAAA".into())
            )
            .unwrap()
        );
        let err = super::same_scope(Some("nope".into()), None).unwrap_err();
        assert_eq!(err.status.as_ref(), "INVALID_SCOPE");
        assert!(err.reason.starts_with("left must match"), "{}", err.reason);
        assert_eq!(super::frame_disposition(1, Some(2)).unwrap(), "discard");
        assert_eq!(super::frame_disposition(2, Some(2)).unwrap(), "accept");
        let err = super::frame_disposition(-1, None).unwrap_err();
        assert_eq!(err.status.as_ref(), "INVALID_ARGUMENT");
        let r = super::resolve_target(
            super::Either::A(r#"[{"id":"a1","name":"x"}]"#.into()),
            None,
            "x".into(),
        )
        .unwrap();
        assert_eq!(
            (r.kind.as_str(), r.target_ids),
            ("same_scope_name", vec!["a1".to_string()])
        );
    }
}

/// A broker running inside this Node process (on its own thread).
#[napi]
pub struct NativeBroker {
    handle: Option<agent_intercom_broker::BrokerHandle>,
    socket_path: String,
    gateway_path: String,
    intercom_dir: String,
}

#[napi]
impl NativeBroker {
    /// Stops the broker and waits until its files are removed. Returns why it stopped
    /// (`StopReason::as_str`), or `StopReason::ALREADY_STOPPED` when it was closed before.
    #[napi]
    pub fn close(&mut self) -> String {
        match self.handle.take() {
            Some(handle) => handle.close().as_str().into(),
            None => agent_intercom_broker::StopReason::ALREADY_STOPPED.into(),
        }
    }

    /// The socket clients connect to.
    #[napi(getter)]
    pub fn socket_path(&self) -> String {
        self.socket_path.clone()
    }

    /// The remote-access gateway socket (remote principals register there).
    #[napi(getter)]
    pub fn gateway_path(&self) -> String {
        self.gateway_path.clone()
    }

    /// The intercom directory.
    #[napi(getter)]
    pub fn intercom_dir(&self) -> String {
        self.intercom_dir.clone()
    }

    /// True until the broker stops (close, idle exit).
    #[napi(getter)]
    pub fn running(&self) -> bool {
        self.handle.as_ref().is_some_and(|h| !h.is_finished())
    }
}

impl NativeBroker {
    fn new(handle: agent_intercom_broker::BrokerHandle, config: &BrokerConfig) -> NativeBroker {
        NativeBroker {
            handle: Some(handle),
            socket_path: config.socket_path.display().to_string(),
            gateway_path: config.gateway_path.display().to_string(),
            intercom_dir: config.intercom_dir.display().to_string(),
        }
    }
}

/// The configuration of `agent_dir` (`None`: from the environment) with `socket_path` and the
/// `key=value` settings (`BrokerConfig::set`) applied.
fn broker_config(
    agent_dir: Option<String>,
    socket_path: Option<String>,
    settings: Vec<String>,
) -> Result<BrokerConfig> {
    let settings = settings
        .iter()
        .map(|pair| agent_intercom_broker::embed::split_setting(pair))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(js_error)?;
    agent_intercom_broker::embed::config(
        agent_dir.as_deref().map(std::path::Path::new),
        socket_path.as_deref().map(std::path::Path::new),
        settings,
    )
    .map_err(js_error)
}

/// A JavaScript number the JavaScript layer checked to be a non-negative safe integer.
fn non_negative(value: i64, what: &str) -> Result<u64> {
    u64::try_from(value).map_err(|_| {
        js_error(Error::new(
            ErrorCode::InvalidArgument,
            format!("{what} must be a non-negative integer"),
        ))
    })
}

/// Starts a broker in this process. `settings` are `key=value` pairs (BrokerConfig::set).
#[napi]
pub fn start_broker(
    agent_dir: Option<String>,
    socket_path: Option<String>,
    settings: Vec<String>,
) -> Result<NativeBroker> {
    let config = broker_config(agent_dir, socket_path, settings)?;
    let handle = agent_intercom_broker::embed::start(config.clone()).map_err(js_error)?;
    Ok(NativeBroker::new(handle, &config))
}

/// What `ensure_broker` resolves to: `broker` when this call started it.
#[napi(object, object_from_js = false)]
pub struct NativeEnsured {
    pub started: bool,
    pub broker: Option<NativeBroker>,
}

/// `agent_intercom_broker::ensure` on a libuv worker thread (it blocks while it waits).
pub struct EnsureTask {
    config: BrokerConfig,
    wait: std::time::Duration,
}

impl Task for EnsureTask {
    type Output = std::result::Result<agent_intercom_broker::Ensured, Error>;
    type JsValue = NativeEnsured;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(
            agent_intercom_broker::ensure(self.config.clone(), self.wait)
                .map_err(|e| agent_intercom_broker::embed::start_error(&e)),
        )
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<NativeEnsured> {
        match output {
            Ok(agent_intercom_broker::Ensured::Started(handle)) => Ok(NativeEnsured {
                started: true,
                broker: Some(NativeBroker::new(handle, &self.config)),
            }),
            Ok(agent_intercom_broker::Ensured::Running(_)) => Ok(NativeEnsured {
                started: false,
                broker: None,
            }),
            // A task rejects with a napi::Error; one holding a JavaScript error object rejects
            // with that object, which carries the code.
            Err(error) => Err(napi::Error::from(
                JsError::from(js_error(error)).into_unknown(env),
            )),
        }
    }
}

/// Uses the running broker of this configuration or starts one here
/// (`agent_intercom_broker::ensure`), waiting up to `wait_ms` (default `DEFAULT_ENSURE_WAIT_MS`)
/// for another starter. A bad setting throws at once; a start failure rejects.
#[napi]
pub fn ensure_broker(
    agent_dir: Option<String>,
    socket_path: Option<String>,
    settings: Vec<String>,
    wait_ms: Option<i64>,
) -> Result<AsyncTask<EnsureTask>> {
    let config = broker_config(agent_dir, socket_path, settings)?;
    let wait_ms = match wait_ms {
        Some(ms) => non_negative(ms, "waitMs")?,
        None => agent_intercom_broker::config::DEFAULT_ENSURE_WAIT_MS,
    };
    Ok(AsyncTask::new(EnsureTask {
        config,
        wait: std::time::Duration::from_millis(wait_ms),
    }))
}

/// A scratchpad store opened by this process (see lib/scratchpad.js).
#[napi]
pub struct NativePad {
    store: Option<agent_intercom_scratchpad::Store>,
}

fn json_arg(text: Option<String>, what: &str) -> Result<serde_json::Value> {
    agent_intercom_scratchpad::api::parse(text.as_deref(), what).map_err(js_error)
}

#[napi]
impl NativePad {
    /// One operation; arguments and result are JSON text.
    #[napi]
    pub fn request(&mut self, op: String, args_json: Option<String>) -> Result<String> {
        let args = json_arg(args_json, "the arguments")?;
        agent_intercom_scratchpad::api::request(
            self.store.as_mut(),
            &op,
            &args,
            &agent_intercom_scratchpad::api::process_env,
            || Error::new(ErrorCode::InvalidArgument, "the scratchpad is closed"),
        )
        .map(|v| v.to_string())
        .map_err(js_error)
    }

    /// Closes the store; later requests fail. Closing twice is harmless.
    #[napi]
    pub fn close(&mut self) {
        self.store = None;
    }

    /// True after close().
    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.store.is_none()
    }
}

/// Opens (creating if needed) the store at `path`; `options_json` as for api::config.
#[napi]
pub fn open_pad(path: String, options_json: Option<String>) -> Result<NativePad> {
    let config = agent_intercom_scratchpad::api::config(&json_arg(options_json, "the options")?)
        .map_err(js_error)?;
    let store = agent_intercom_scratchpad::Store::open(
        std::path::Path::new(&path),
        config,
        std::sync::Arc::new(agent_intercom_scratchpad::SystemClock),
    )
    .map_err(js_error)?;
    Ok(NativePad { store: Some(store) })
}

/// A rule check (check.*), which needs no store.
#[napi]
pub fn pad_check(op: String, args_json: Option<String>) -> Result<String> {
    agent_intercom_scratchpad::api::check(&op, &json_arg(args_json, "the arguments")?)
        .map(|v| v.to_string())
        .map_err(js_error)
}

/// The keys of the store options (snake_case; the JavaScript layer offers them in camelCase).
#[napi]
pub fn pad_option_keys() -> Vec<String> {
    agent_intercom_scratchpad::api::OPTION_KEYS
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// The store operations, then the rule checks.
#[napi]
pub fn pad_operations() -> Vec<String> {
    agent_intercom_scratchpad::api::OPERATIONS
        .iter()
        .chain(agent_intercom_scratchpad::api::CHECKS)
        .map(|s| s.to_string())
        .collect()
}

/// The ask-threading rules on one send, JSON text in and out (`asks::check_ask_json`). Internal:
/// the vector runner (tests/node/asks.test.js) runs vectors/asks-v1.json through it; no public
/// JavaScript API wraps it.
#[napi]
pub fn check_ask_json(text: String) -> Result<String> {
    agent_intercom_core::asks::check_ask_json(&text).map_err(js_error)
}
