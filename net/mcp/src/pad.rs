//! The scratchpad operations as tools, on the store the CLI uses: each call goes through the
//! scratchpad's own request table and checks (`agent_intercom_scratchpad::api`), so the tools
//! refuse what `agent-intercom pad` refuses, with the same codes.

use std::path::PathBuf;
use std::sync::Arc;

use agent_intercom_core::Error;
use agent_intercom_scratchpad::{Config, Store, SystemClock, api};
use serde_json::{Map, Value};

use crate::tools::{PAD_OPERATIONS, pad_tool};

/// The store, opened at the first call.
pub struct Pad {
    path: PathBuf,
    store: Arc<tokio::sync::Mutex<Option<Store>>>,
}

/// The keys an operation takes that name the acting agent; absent, they are this session's name.
fn identity_keys(op: &str) -> &'static [&'static str] {
    if op == "post" {
        &["from"]
    } else {
        &["agent", "by", "creator"]
    }
}

impl Pad {
    /// The scratchpad at `path` (not opened yet).
    pub fn new(path: PathBuf) -> Pad {
        Pad {
            path,
            store: Arc::new(tokio::sync::Mutex::new(None)),
        }
    }

    /// Runs the scratchpad tool `tool` with `args`, the acting agent defaulting to `name`.
    pub async fn call(
        &self,
        tool: &str,
        args: Option<&Map<String, Value>>,
        name: &str,
    ) -> Result<Value, (String, String)> {
        let refused = |e: Error| (e.code().as_str().to_string(), e.message().to_string());
        let Some(op) = PAD_OPERATIONS.iter().find(|op| pad_tool(op) == tool) else {
            return Err(("NOT_FOUND".into(), format!("no tool {tool}")));
        };
        let mut args = args.cloned().unwrap_or_default();
        let takes = api::request_of(op).map(|r| r.args).unwrap_or_default();
        for key in identity_keys(op) {
            if takes.iter().any(|a| a.key == *key) && !args.contains_key(*key) {
                args.insert((*key).to_string(), name.into());
            }
        }
        let path = self.path.clone();
        let mut guard = self.store.clone().lock_owned().await;
        tokio::task::spawn_blocking(move || {
            if guard.is_none() {
                *guard = Some(Store::open(
                    &path,
                    Config::default(),
                    Arc::new(SystemClock),
                )?);
            }
            let store = guard.as_mut().expect("opened above");
            api::handle(store, op, &Value::Object(args), &api::process_env)
        })
        .await
        .map_err(|e| {
            (
                "INTERNAL".to_string(),
                format!("the scratchpad call failed: {e}"),
            )
        })?
        .map_err(refused)
    }
}
