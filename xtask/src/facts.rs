//! `bindings-node/facts.d.ts`: every value the hand-written TypeScript declarations of the npm
//! package would otherwise retype, as literal types (and unions of them) read from the Rust
//! crates. The declarations import them (`import type { ... } from "../facts.js"`). The
//! vendorable module's declarations must stay one self-contained file (adapters copy it), so
//! [`inline`] writes them from their hand-written source with the facts it imports put in place.
//!
//! The constants of the contract subpaths (./boss, ./policy, ./team-manifest, ./vectors) are
//! read the way their JavaScript reads them: from the answer of a contract operation
//! ([`contract_constants`]).

use std::fmt::Display;
use std::path::Path;

use agent_intercom_broker::{self as broker, Health, LogLevel, StopReason, config};
use agent_intercom_core::canonical::{self, Value};
use agent_intercom_core::{ErrorCode, corpus, envelope, protocol, registry};
use agent_intercom_scratchpad as pad;

/// The codes only the package's JavaScript raises, besides the core's;
/// `tests/node/facts.test.js` checks that it raises no other.
const NODE_ERROR_CODES: [&str; 1] = ["NATIVE_ADDON_UNAVAILABLE"];

/// One `export type <name> = <literal>;` of the facts file.
pub struct Fact {
    pub name: String,
    /// What it is, and the Rust it is read from.
    pub doc: String,
    /// A TypeScript literal type, or a union of them.
    pub literal: String,
}

/// A string literal type (a JavaScript string literal).
pub fn string(s: &str) -> String {
    canonical::canonical_json(&Value::String(s.into())).expect("strings always encode")
}

/// A union of string literal types.
fn union<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let items: Vec<String> = items.into_iter().map(|s| string(s.as_ref())).collect();
    items.join(" | ")
}

/// The union of the core's error codes but OK (which is never thrown).
fn codes(all: &[ErrorCode]) -> String {
    union(
        all.iter()
            .filter(|c| **c != ErrorCode::Ok)
            .map(|c| c.as_str()),
    )
}

/// A number or boolean literal type.
fn plain(value: impl Display) -> String {
    value.to_string()
}

/// `facts! { Name = render(rust)[, "what"]; ... }`: each fact `Name`, `render(rust)`,
/// documented by what it is and by `rust` itself.
macro_rules! facts {
    ($($name:ident = $render:ident($value:expr) $(, $what:literal)?;)+) => {
        vec![$(Fact {
            name: stringify!($name).to_string(),
            doc: describe(stringify!($value), None $(.or(Some($what)))?),
            literal: $render($value),
        }),+]
    };
}

fn describe(rust: &str, what: Option<&str>) -> String {
    match what {
        Some(what) => format!("{what} (`{rust}`)."),
        None => format!("`{rust}`"),
    }
}

/// Every fact, in the order of the file.
pub fn facts() -> Vec<Fact> {
    let broker_config = broker::BrokerConfig::for_agent_dir(Path::new("/"));
    let mut all = facts! {
        ProtocolName = string(protocol::PROTOCOL_NAME);
        ProtocolVersion = plain(protocol::PROTOCOL_VERSION);
        ScopeEnv = string(protocol::SCOPE_ENV), "The variable naming the scope";
        ScopeIdPatternSource = string(protocol::SCOPE_ID_PATTERN_SOURCE);
        VectorSchemaVersion = plain(protocol::VECTOR_SCHEMA_VERSION);
        ScopeA = string(protocol::SCOPE_A);
        ScopeB = string(protocol::SCOPE_B);
        VectorsHashDomain = string(protocol::VECTORS_HASH_DOMAIN);
        KnownSemanticsHash = string(protocol::KNOWN_SEMANTICS_HASH);
        VectorCount = plain(corpus::vectors().len()), "The vectors of the corpus";
        ProtocolV4Operations = union(corpus::OPERATIONS), "The operations a vector names";
        ProtocolV4Outcomes = union(corpus::OUTCOMES), "The outcomes a vector expects";
        CanonicalEncodingVersion = plain(canonical::ENCODING_VERSION);
        CanonicalFramePrefix = string(canonical::FRAME_PREFIX);
        CanonicalUnicodeNormalization = string(canonical::UNICODE_NORMALIZATION);
        CanonicalMaxDepth = plain(canonical::MAX_DEPTH);
        CoreErrorCode = codes(ErrorCode::all()), "The core's error codes but OK";
        NodeErrorCode = union(NODE_ERROR_CODES), "The codes only the JavaScript raises";
        LogLevel = union(LogLevel::ALL.map(LogLevel::as_str)), "Quietest first";
        DefaultLogLevel = string(broker_config.log_level.as_str());
        StopReason = union(StopReason::ALL.map(StopReason::as_str));
        AlreadyStopped = string(StopReason::ALREADY_STOPPED);
        BrokerHealth = union(Health::ALL.map(Health::as_str)), "What a health probe finds";
        DeliveryState = union(broker::wire::delivery_state::ALL),
            "What delivery_status reports (an opt-in extension, docs/hub.md)";
        DefaultIdleExitMs = plain(config::DEFAULT_IDLE_EXIT_MS);
        MaxIdleExitMs = plain(config::MAX_IDLE_EXIT_MS);
        DefaultMaxFrameBytes = plain(config::DEFAULT_MAX_FRAME_BYTES);
        AgentDirEnv = string(config::AGENT_DIR_ENV);
        DefaultAgentDir = string(config::DEFAULT_AGENT_DIR), "In the home directory";
        IntercomDirName = string(config::INTERCOM_DIR_NAME);
        SocketFileName = string(config::SOCKET_FILE_NAME);
        ScratchpadOperation = union(pad::api::OPERATIONS), "A store operation";
        ScratchpadCheck = union(pad::api::CHECKS), "A rule check, which needs no store";
        ScratchpadOptionKey = union(pad::api::OPTION_KEYS), "A store option, in snake_case";
        ScratchpadPathEnv = string(pad::paths::PATH_ENV), "The variable naming the store";
        ScratchpadDefaultFileName = string(pad::paths::DEFAULT_FILE_NAME);
        ScratchpadDefaultPerProjectCap = plain(pad::Config::default().per_project_cap);
        ScratchpadDefaultPerRecipientCap = plain(pad::Config::default().per_recipient_cap);
        ScratchpadDefaultMaxContentBytes = plain(pad::Config::default().max_content_bytes);
        ScratchpadDefaultAllowFullExport = plain(pad::Config::default().allow_full_export);
        EnvelopeFormatVersion = plain(envelope::FORMAT_VERSION);
        MaxEnvelopeBytes = plain(envelope::MAX_ENVELOPE_BYTES), "The largest envelope, in bytes";
        MaxEnvelopeLifetimeMs = plain(envelope::MAX_LIFETIME_MS);
        DefaultEnvelopeSkewMs = plain(envelope::DEFAULT_SKEW_MS);
        MaxEnvelopeSkewMs = plain(envelope::MAX_SKEW_MS);
        EnvelopeSigningDomain = string(envelope::SIGNING_DOMAIN);
        EnvelopeHkdfSalt = string(envelope::HKDF_SALT);
        EnvelopeHkdfInfoPrefix = string(envelope::HKDF_INFO_PREFIX);
        EnvelopeContentType = union(envelope::ContentType::ALL.iter().map(|c| c.as_str())),
            "Every content type";
        EnvelopeSignatureKind = union(envelope::SignatureKind::ALL.iter().map(|k| k.as_str())),
            "Every signature kind";
        EnvelopeKindEd25519 = string(envelope::SignatureKind::Ed25519.as_str());
        EnvelopeKindHmacSha256 = string(envelope::SignatureKind::HmacSha256.as_str());
        ContractOp = union(registry::operations()), "What lib/contract.js `call` takes";
    };
    all.extend(contract_constants());
    all
}

/// `constants! { "op": NAME, NAME = member.path, ...; ... }`: for each constant NAME of the
/// package, the fact of its value's literal type, named NAME in PascalCase: the member NAME (or
/// `member.path`) of what the contract operation `op` answers, where the JavaScript reads it.
macro_rules! constants {
    ($($op:literal: $($name:ident $(= $($member:ident).+)?),+;)+) => {{
        let mut facts = Vec::new();
        $(
            let answer = answer_of($op);
            $(facts.push(constant(
                &answer,
                $op,
                stringify!($name),
                &[$($(stringify!($member)),+)?],
            ));)+
        )+
        facts
    }};
}

/// What `op` answers when called without arguments.
fn answer_of(op: &str) -> Value<'static> {
    let text = registry::call_json(op, "[]").unwrap_or_else(|e| panic!("{op}: {e}"));
    let answer = canonical::parse(&text).unwrap_or_else(|e| panic!("{op}: {e}"));
    match answer.get("value") {
        Some(value) if answer.get("ok") == Some(&Value::Bool(true)) => value.owned(),
        _ => panic!("{op} refused: {text}"),
    }
}

/// The fact of the constant `name`: the member at `path` (`name` when empty) of `answer`.
fn constant(answer: &Value<'_>, op: &str, name: &str, path: &[&str]) -> Fact {
    let path = if path.is_empty() {
        vec![name]
    } else {
        path.to_vec()
    };
    let value = path
        .iter()
        .try_fold(answer, |value, key| value.get(key))
        .unwrap_or_else(|| panic!("{op} answers no {}", path.join(".")));
    Fact {
        name: pascal_case(name),
        doc: format!("`{op}` {}", path.join(".")),
        literal: literal_type(value).unwrap_or_else(|| panic!("{name}: not a literal")),
    }
}

/// `BOSS_RUN_FEATURE` as `BossRunFeature`.
fn pascal_case(name: &str) -> String {
    name.split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_string() + &chars.as_str().to_ascii_lowercase()
            })
        })
        .collect()
}

/// The TypeScript type of a string, an integer or an array of them (a readonly tuple).
fn literal_type(value: &Value<'_>) -> Option<String> {
    Some(match value {
        Value::String(s) => string(s),
        Value::Int(n) => plain(n),
        Value::Array(items) => {
            let items: Option<Vec<String>> = items.iter().map(literal_type).collect();
            format!("readonly [{}]", items?.join(", "))
        }
        _ => return None,
    })
}

/// The constants the hand-written declarations of the contract subpaths would otherwise type
/// as literals, by the operation the JavaScript reads them from.
fn contract_constants() -> Vec<Fact> {
    constants! {
        "boss.constants":
            INTERCOM_BASE_PROTOCOL_VERSION, BOSS_RUN_FEATURE, BOSS_RUN_FEATURE_VERSION,
            BOSS_CONTROL_ENVELOPE_VERSION, BOSS_CAPABILITY_FEATURE_CONTRACT_VERSION,
            BOSS_PARTICIPANT_ROLES, BOSS_RUN_AUTHORITY_IDENTITY_VERSION,
            BOSS_PARTICIPANT_BINDING_VERSION, BOSS_BINDING_STATES,
            BOSS_PARTICIPANT_CREDENTIAL_VERSION, BOSS_CREDENTIAL_KINDS,
            BOSS_CREDENTIAL_DIGEST_RECORD_VERSION, BOSS_CREDENTIAL_AUDIT_EVENT_VERSION,
            AUTHORITY_TRANSITION_VERSION, AUTHORITY_EVENT_VERSION, AUTHORITY_REQUEST_VERSION,
            BOSS_CONTROL_TYPES, WORKER_IDENTITY_VERSION,
            AUTHORITY_TRANSITION_OPERATIONS, AUTHORITY_TRANSITION_STATES,
            AUTHORITY_REQUEST_OPERATIONS,
            BOSS_CREDENTIAL_STATES, BOSS_CREDENTIAL_AUDIT_OPERATIONS,
            LIFECYCLE_NOTICE_VERSION, DELIVERY_GROUP_VERSION, DELIVERY_CLAIM_VERSION,
            NOTICE_RECIPIENT_INGRESS_VERSION, TARGET_LEDGER_RESULT_VERSION,
            DELIVERY_GROUP_ASSEMBLY_VERSION, DELIVERY_INTENTS, RECIPIENT_CONTEXTS,
            DELIVERY_CLAIM_STATES, NOTICE_DELIVERY_CLAIM_STATES, DELIVERY_MODES,
            DELIVERY_GROUP_MEMBERSHIP_STATES, DELIVERY_GROUP_STATES,
            NOTICE_RECIPIENT_INGRESS_OPERATIONS, TARGET_LEDGER_STATES,
            PARTICIPANT_STATES, TERMINAL_PARTICIPANT_STATES, LEGACY_WORKER_STATES,
            PARTICIPANT_HEALTH_EVENT_VERSION, WORKER_STATE_MIGRATION_CONTRACT_VERSION,
            LEGACY_WORKER_STORE_SCHEMA_VERSION, CANONICAL_WORKER_STORE_SCHEMA_VERSION,
            PARTICIPANT_STATE_TRANSITION_CONTRACT_VERSION, PARTICIPANT_HEALTH_SEVERITIES,
            STOPPING_RECONCILIATION_OUTCOMES, STOPPING_EVIDENCE_SOURCES, BLOCKED_RESUME_STATES,
            STALLED_RESUME_STATES, PARTICIPANT_STATE_TRANSITION_EVIDENCE_KINDS,
            PARTICIPANT_DISPATCHABLE_STATES, PARTICIPANT_READ_ONLY_STATES,
            PARTICIPANT_STATE_VECTOR_HASH_DOMAIN, PARTICIPANT_STATE_TRANSITION_VECTOR_HASH_DOMAIN,
            BROKER_FEATURE_ATTESTATION_VERSION, BROKER_IDENTITY_RECORD_VERSION,
            BROKER_PROVIDER_ATTESTATION_VERSION, BROKER_PEER_EXPECTATION_VERSION,
            LEGACY_ADMIN_MIGRATION_VERSION, BROKER_JOURNAL_RECOVERY_VERSION,
            BOSS_RESTRICTED_CLIENT_REQUEST_VERSION, BOSS_RESTRICTED_CLIENT_RESULT_VERSION,
            BROKER_FEATURE_SET_HASH_DOMAIN, BROKER_IDENTITY_SIGNATURE_DOMAIN,
            BROKER_PROVIDER_ATTESTATION_SIGNATURE_DOMAIN, BROKER_PROTECTED_PROVIDER_ROOT,
            BOSS_MANAGER_OPERATIONS, BOSS_PARTICIPANT_OPERATIONS, BOSS_REVIEWER_OPERATIONS,
            BOSS_RESTRICTED_AUTHORIZATION_DENIAL_CODES, RESTRICTED_RESULT_STATUSES,
            LIFECYCLE_SUBSCRIPTION_VERSION, ACTIVITY_RECORD_VERSION,
            ACTIVE_OPERATION_LEASE_VERSION, EXTERNAL_WAIT_LEASE_VERSION,
            SUBSCRIBER_REBIND_MIGRATION_VERSION, LIFECYCLE_TRIGGER_SCHEMA_VERSION,
            LIFECYCLE_TRIGGER_VERSION, SUBSCRIPTION_STATES, INACTIVITY_MODES, ACTIVITY_BASES,
            SUPERVISED_ROLES, ACTIVITY_KINDS, ACTIVITY_TYPES, OPERATION_LEASE_STATES,
            WAIT_SOURCE_KINDS, WAIT_LEASE_STATES, REBIND_MIGRATION_STATES,
            SUPERVISOR_PRINCIPAL_KINDS, SUPERVISION_VECTOR_SCHEMA_VERSION,
            FULL_WORKER_STORE_MIGRATION_VERSION, FULL_WORKER_STORE_V2_RECORD_VERSION,
            WORKER_STORE_MANAGER_RECIPIENT_CONTEXTS;
        "boss.policyConstants":
            BOSS_POLICY_SEMANTICS_VERSION = semanticsVersion,
            BOSS_POLICY_PRINCIPAL_VERSION = principalVersion, BOSS_POLICY_ACTIONS = actions,
            BOSS_POLICY_ROLES = roles, BOSS_CONTROL_KINDS = controlKinds;
        "boss.policyVectors": BOSS_POLICY_VECTOR_SCHEMA_VERSION = corpus.version;
        "boss.featureRoutingVectors": FEATURE_ROUTING_VECTOR_SCHEMA_VERSION = corpus.version;
        "boss.participantStateVectors": PARTICIPANT_STATE_VECTOR_SCHEMA_VERSION = corpus.version;
        "boss.participantStateTransitionVectors":
            PARTICIPANT_STATE_TRANSITION_VECTOR_SCHEMA_VERSION = corpus.version;
        "boss.supervisionVectors": SUPERVISION_VECTOR_HASH_DOMAIN = hashDomain;
        "boss.workerStoreMigrationVectors":
            FULL_WORKER_STORE_MIGRATION_VECTOR_VERSION = corpus.version,
            FULL_WORKER_STORE_MIGRATION_VECTOR_HASH_DOMAIN = hashDomain;
        "policy.constants": POLICY_SEMANTICS_VERSION, POLICY_VECTOR_SCHEMA_VERSION;
        "team.constants":
            TMUXDECK_TEAM_MANIFEST_VERSION, TMUXDECK_TEAM_MANIFEST_BACKEND,
            MAX_TEAM_MANIFEST_MEMBERS;
    }
}

fn declare(fact: &Fact, export: &str) -> String {
    format!(
        "/** {} */\n{export}type {} = {};\n",
        fact.doc, fact.name, fact.literal
    )
}

/// bindings-node/facts.d.ts.
pub fn facts_dts() -> String {
    let mut text = String::from(
        "// GENERATED by `cargo xtask gen` (xtask/src/facts.rs) from the Rust crates: the literal\n\
         // types the hand-written .d.ts files import. Do not edit; \
         `cargo xtask gen --check` fails\n\
         // when this file is stale. Each comment names the Rust a type is read from: config::,\n\
         // LogLevel, StopReason and broker_config (BrokerConfig::for_agent_dir) are\n\
         // agent_intercom_broker's, pad:: is agent_intercom_scratchpad, NODE_ERROR_CODES is\n\
         // xtask's, the rest is agent_intercom_core's. A constant of the contract subpaths is\n\
         // read from the answer of the contract operation its comment names (`boss.constants`),\n\
         // at the member named after it.\n",
    );
    for fact in facts() {
        text += "\n";
        text += &declare(&fact, "export ");
    }
    text
}

/// A hand-written declaration file made self-contained: its leading `//` comment replaced by
/// `header`, its `import type { ... } from "../facts.js"` by those facts as module-private types.
pub fn inline(source: &Path, header: &str) -> String {
    let name = source.display();
    let text = std::fs::read_to_string(source).unwrap_or_else(|e| panic!("{name}: {e}"));
    let body: String = text
        .lines()
        .skip_while(|l| l.starts_with("//"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (open, close) = ("import type {", "} from \"../facts.js\";\n");
    let missing = || panic!("{name}: no `import type {{ ... }} from \"../facts.js\"`");
    let end = body.find(close).unwrap_or_else(missing);
    let at = body[..end].rfind(open).unwrap_or_else(missing);
    let all = facts();
    let mut local = String::new();
    for wanted in body[at + open.len()..end]
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        let fact = all
            .iter()
            .find(|f| f.name == wanted)
            .unwrap_or_else(|| panic!("{name}: imports {wanted}, which facts.d.ts lacks"));
        local += &declare(fact, "");
    }
    format!(
        "{header}\n{}// The facts this file uses (from bindings-node/facts.d.ts), private to it.\n\
         {local}export {{}};\n{}",
        &body[..at],
        &body[end + close.len()..]
    )
}
