//! `cargo xtask gen [--check]`: the one generator. It writes every generated file from the Rust
//! crates, so no constant, error code, limit or vector is retyped by hand: the C header (cbindgen
//! over the macro-expanded ffi crate), the facts the hand-written TypeScript declarations import
//! (`facts.rs`), the ESM entry points of the npm package (`esm.rs`), the vendorable one-file
//! protocol-v4 module with its declarations and digests, the core's embedded corpus copy and the
//! limits table of docs/broker.md. With `--check` it writes nothing and fails when any file is
//! stale (CI runs it so).

mod envelope;
mod esm;
mod facts;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agent_intercom_core::canonical;
use agent_intercom_core::{ErrorCode, corpus, protocol};
use agent_intercom_vendored::{VENDORED_CJS_FILE_NAME, VENDORED_FILE_NAME, sha256_hex};
use facts::string as js_string;

fn vendor_module() -> String {
    let vectors = corpus::document()
        .get("vectors")
        .expect("corpus has vectors");
    let vectors_json = canonical::canonical_json(vectors).expect("corpus is canonical");
    format!(
        // The module's own lines are longer than ours: its first line is split here only.
        concat!(
            r#"// @ctliz/agent-intercom-core: the protocol-v4 contract as ONE "#,
            r#"self-contained file, for adapters
// that vendor it instead of depending on the package (ES module; a CommonJS twin ships beside it).
// GENERATED from agent-intercom-core {version} by `cargo run -p xtask -- gen`. Do not edit: a
// changed byte fails the drift check.
// Check a vendored copy:  npx agent-intercom-core check-vendored <path>
//                    or:  agent-intercom vendored check <path>
export const INTERCOM_PROTOCOL_NAME = {name};
export const INTERCOM_PROTOCOL_VERSION = {pversion};
export const INTERCOM_SCOPE_ENV = {env};
export const INTERCOM_SCOPE_ID_PATTERN_SOURCE = {pattern};
export const INTERCOM_SCOPE_ID_PATTERN = new RegExp(INTERCOM_SCOPE_ID_PATTERN_SOURCE);
export const INTERCOM_PROTOCOL_V4_VECTOR_SCHEMA_VERSION = {schema};
export const PROTOCOL_V4_SCOPE_A = {a};
export const PROTOCOL_V4_SCOPE_B = {b};
export const INTERCOM_PROTOCOL_V4_SEMANTICS_HASH = {hash};
const VECTORS = {vectors_json};
function deepFreeze(value) {{
  if (value !== null && typeof value === "object") {{
    for (const key of Object.keys(value)) deepFreeze(value[key]);
    Object.freeze(value);
  }}
  return value;
}}
export const INTERCOM_PROTOCOL_V4_VECTORS = deepFreeze(VECTORS);
const SCOPE_ID_PATTERN = new RegExp(INTERCOM_SCOPE_ID_PATTERN_SOURCE);
export function parseIntercomScopeId(value, path = "scopeId") {{
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string" || !SCOPE_ID_PATTERN.test(value)) {{
    const error = new Error(`${{path}}` + {suffix});
    error.code = "{invalid_scope}";
    throw error;
  }}
  return value;
}}
export function intercomScopeIdFromEnv(env = globalThis.process?.env ?? {{}}) {{
  return parseIntercomScopeId(env[INTERCOM_SCOPE_ENV], INTERCOM_SCOPE_ENV);
}}
export function sameIntercomScope(left, right) {{
  return left === right;
}}
"#
        ),
        version = agent_intercom_core::VERSION,
        vectors_json = vectors_json,
        name = js_string(protocol::PROTOCOL_NAME),
        pversion = protocol::PROTOCOL_VERSION,
        env = js_string(protocol::SCOPE_ENV),
        pattern = js_string(protocol::SCOPE_ID_PATTERN_SOURCE),
        schema = protocol::VECTOR_SCHEMA_VERSION,
        a = js_string(protocol::SCOPE_A),
        b = js_string(protocol::SCOPE_B),
        hash = js_string(corpus::semantics_hash()),
        invalid_scope = ErrorCode::InvalidScope.as_str(),
        suffix = js_string(agent_intercom_core::scope::INVALID_SCOPE_MESSAGE_SUFFIX),
    )
}

/// The CommonJS twin of [`vendor_module`]: the same declarations without `export`, then one
/// `module.exports`.
fn vendor_module_cjs(esm: &str) -> String {
    let mut names = Vec::new();
    let mut body = String::from("'use strict';\n");
    for line in esm.lines() {
        let line = line.replace(
            "(ES module; a CommonJS twin ships beside it)",
            "(CommonJS; an ES module twin ships beside it)",
        );
        match line.strip_prefix("export ") {
            Some(rest) => {
                let name = rest
                    .trim_start_matches("const ")
                    .trim_start_matches("function ")
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .next()
                    .expect("a declaration has a name");
                names.push(name.to_string());
                body.push_str(rest);
            }
            None => body.push_str(&line),
        }
        body.push('\n');
    }
    body.push_str(&format!("module.exports = {{ {} }};\n", names.join(", ")));
    body
}

/// The vendorable module's declarations: the hand-written bindings-node/protocol-v4/vendorable.d.ts
/// with its facts inlined, so that it is one self-contained file as the module is.
fn vendor_dts() -> String {
    facts::inline(
        &root().join("bindings-node/protocol-v4/vendorable.d.ts"),
        "// GENERATED by `cargo xtask gen` from bindings-node/protocol-v4/vendorable.d.ts and the\n\
         // Rust core. Do not edit.\n",
    )
}

/// `sha256sum -c` compatible digests of the vendorable modules.
fn vendored_sums(files: &[(&str, &str)]) -> String {
    files
        .iter()
        .map(|(name, content)| format!("{}  {name}\n", sha256_hex(content.as_bytes())))
        .collect()
}

fn outputs() -> Vec<(String, String)> {
    let module = vendor_module();
    let cjs = vendor_module_cjs(&module);
    let sums = vendored_sums(&[
        (VENDORED_FILE_NAME, &module),
        (VENDORED_CJS_FILE_NAME, &cjs),
    ]);
    let mut files: Vec<(String, String)> = vec![
        ("bindings-node/facts.d.ts", facts::facts_dts()),
        ("vendor/agent-intercom-protocol-v4.d.mts", vendor_dts()),
        ("vendor/agent-intercom-protocol-v4.d.cts", vendor_dts()),
        ("vendor/SHA256SUMS", sums),
        ("vendor/agent-intercom-protocol-v4.cjs", cjs),
        ("vendor/agent-intercom-protocol-v4.mjs", module),
        ("docs/broker.md", broker_doc()),
        ("include/agent_intercom.h", c_header()),
        // The core embeds its corpus from inside its crate (so it can be packaged); the one
        // source is vectors/protocol-v4.json.
        (
            "core/data/protocol-v4.json",
            std::fs::read_to_string(root().join("vectors/protocol-v4.json"))
                .expect("vectors/protocol-v4.json"),
        ),
        (
            "core/data/policy-v2.json",
            std::fs::read_to_string(root().join("vectors/policy-v2.json"))
                .expect("vectors/policy-v2.json"),
        ),
    ]
    .into_iter()
    .map(|(path, content): (&str, String)| (path.to_string(), content))
    .collect();
    // The Boss corpora, embedded the same way.
    for name in [
        "boss-policy-v1.json",
        "feature-routing-v1.json",
        "worker-store-migration-v2.json",
        "boss-participant-state-v1.json",
        "boss-participant-state-transition-v1.json",
        "orc-supervision-v1.json",
    ] {
        let source = root().join("vectors").join(name);
        let text = std::fs::read_to_string(&source).expect("a vectors/ corpus");
        files.push((format!("core/data/{name}"), text));
    }
    files.push((
        "vectors/transport-envelope-v1.json".to_string(),
        envelope::document(),
    ));
    files.extend(esm::outputs(&root()));
    files
}

/// include/agent_intercom.h, by cbindgen over the ffi and core crates with their macros expanded
/// (every export is written with `ffi_fn!`, and `ErrorCode` with `error_codes!`, which cbindgen
/// cannot see through). Expanding takes
/// `rustc -Zunpretty=expanded`, as hyper's header script does; `RUSTC_BOOTSTRAP=1` allows it on
/// a stable toolchain for that one command, in its own target folder (`target/expand`) so the
/// main build is not invalidated.
fn c_header() -> String {
    let ffi = root().join("ffi");
    let mut config =
        cbindgen::Config::from_file(ffi.join("cbindgen.toml")).expect("ffi/cbindgen.toml");
    config.parse.expand.crates = vec![
        "agent-intercom-ffi".to_string(),
        "agent-intercom-core".to_string(),
    ];
    let mut header = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&ffi)
        .with_config(config)
        .generate()
        .expect("cbindgen failed to generate the header")
        .write(&mut header);
    String::from_utf8(header).expect("the header is UTF-8")
}

/// docs/broker.md with its limits table written from `agent_intercom_broker::config::LIMITS`
/// (between the `limits:begin` and `limits:end` markers).
fn broker_doc() -> String {
    use agent_intercom_broker::config::{self, LIMITS, LogLevel};
    let path = root().join("docs/broker.md");
    let doc = std::fs::read_to_string(&path).expect("docs/broker.md");
    let (begin, end) = ("<!-- limits:begin -->\n", "<!-- limits:end -->");
    let head = &doc[..doc.find(begin).expect("limits:begin marker") + begin.len()];
    let tail = &doc[doc.find(end).expect("limits:end marker")..];
    let mut table =
        String::from("| key | default | accepted | what |\n| --- | ---: | --- | --- |\n");
    for l in LIMITS {
        table += &format!(
            "| `{}` | {} | {} to {} ({}) | {} |\n",
            l.key,
            l.default,
            l.min,
            l.max,
            l.unit,
            l.doc.trim()
        );
    }
    table += &format!(
        "| `{}` / `{}` | {} ms | 0 (never) to {} s / {} ms | \
         Exit this long after the last session leaves. |\n",
        config::IDLE_EXIT_SECS_KEY,
        config::IDLE_EXIT_MS_KEY,
        config::DEFAULT_IDLE_EXIT_MS,
        config::MAX_IDLE_EXIT_MS / 1000,
        config::MAX_IDLE_EXIT_MS
    );
    let levels = LogLevel::ALL.map(|l| format!("`{}`", l.as_str()));
    let default = agent_intercom_broker::BrokerConfig::for_agent_dir(Path::new("/")).log_level;
    table += &format!(
        "| `{}` | `{}` | {} | What goes to stderr. |\n",
        config::LOG_LEVEL_KEY,
        default.as_str(),
        levels.join(", ")
    );
    table += &format!(
        "| `{}` | `unix` | `unix`, `tcp` | What it listens on: Unix sockets (`broker.sock` and the \
         remote gateway), or TCP on 127.0.0.1 with `broker.port.json`, as the Pi broker on \
         Windows. |\n",
        config::TRANSPORT_KEY
    );
    format!("{head}{table}{tail}")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

fn main() -> ExitCode {
    // SAFETY: set before any thread starts; read by the cargo that cbindgen runs (c_header).
    // The expansion's own target folder keeps RUSTC_BOOTSTRAP out of the main build's
    // fingerprints. A caller that builds nothing afterwards (CI, whose last build this is) may
    // name the main folder instead, so the dependencies' check builds (and SQLite's C) are reused.
    unsafe {
        std::env::set_var("RUSTC_BOOTSTRAP", "1");
        if std::env::var_os("CARGO_EXPAND_TARGET_DIR").is_none() {
            std::env::set_var("CARGO_EXPAND_TARGET_DIR", root().join("target/expand"));
        }
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["gen"] => false,
        ["gen", "--check"] => true,
        _ => {
            eprintln!("usage: cargo run -p xtask -- gen [--check]");
            return ExitCode::from(2);
        }
    };
    let root = root();
    let mut stale = Vec::new();
    for (path, content) in outputs() {
        let full = root.join(&path);
        let current = std::fs::read_to_string(&full).ok();
        if current.as_deref() == Some(content.as_str()) {
            continue;
        }
        if check {
            stale.push(path);
        } else {
            if let Some(dir) = full.parent() {
                std::fs::create_dir_all(dir).expect("create output folder");
            }
            std::fs::write(&full, content).unwrap_or_else(|e| panic!("write {path}: {e}"));
            println!("wrote {path}");
        }
    }
    if stale.is_empty() {
        if check {
            println!("generated files are up to date");
        }
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "stale generated files (run `cargo run -p xtask -- gen` and commit): {}",
            stale.join(", ")
        );
        ExitCode::FAILURE
    }
}
