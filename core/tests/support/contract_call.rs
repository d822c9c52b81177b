//! A contract operation called by name through `registry::call_json` (what the C export calls),
//! so a Rust vector runner hands a case over as the C and Node runners do. Included by the
//! runners with `#[path = "support/contract_call.rs"] mod contract_call;`.
#![allow(dead_code)] // each runner uses part of it

use agent_intercom_core::contract::Js;
use agent_intercom_core::registry::call_json;

/// A refusal: the error's class and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// `ContractValidationError`, `TypeError`, ...
    pub class: String,
    /// `<path>: <detail>`.
    pub message: String,
}

/// `{"ok":true,"value":V}` → V (undefined when absent); a failure → its [`Refusal`]. Trailing
/// `undefined` arguments (which JSON cannot hold) are left off, as JavaScript sees a missing
/// argument.
pub fn call(op: &str, args: &[&Js]) -> Result<Js, Refusal> {
    let given = args
        .iter()
        .rposition(|a| !matches!(a, Js::Undefined))
        .map_or(0, |last| last + 1);
    let texts: Vec<String> = args[..given]
        .iter()
        .map(|a| a.to_json().expect("plain JSON arguments"))
        .collect();
    let answer = call_json(op, &format!("[{}]", texts.join(","))).expect("a known operation");
    let answer = Js::parse_json(&answer).expect("the answer is JSON");
    match answer.get("ok") {
        Some(Js::Bool(true)) => Ok(answer.get("value").cloned().unwrap_or(Js::Undefined)),
        _ => {
            let error = answer.get("error").expect("a failure");
            let text = |k: &str| error.get(k).map(Js::js_string).unwrap_or_default();
            Err(Refusal {
                class: text("class"),
                message: text("message"),
            })
        }
    }
}
