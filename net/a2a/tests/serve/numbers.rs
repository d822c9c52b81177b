//! Valid JSON holding a value that cannot be read (a number out of range: `1e400`, 400 digits;
//! an unpaired surrogate escape) is an invalid request or invalid params, never a parse error;
//! the id is echoed unless it is itself unusable. Text that is not JSON stays a parse error.

use serde_json::Value;

use crate::client::{Tmp, config, local_store, request, start};

/// A raw JSON-RPC body to `/a2a` under `version` (none when empty): the response object.
fn post(addr: std::net::SocketAddr, version: &str, body: &str) -> Value {
    let mut headers = vec![("Content-Type", "application/json")];
    if !version.is_empty() {
        headers.push(("A2A-Version", version));
    }
    let reply = request(addr, "POST", "/a2a", &headers, body.as_bytes());
    assert_eq!(reply.status, 200, "{body}");
    let v = reply.json();
    assert_eq!(v["jsonrpc"], "2.0", "{body}: {v}");
    assert!(v.get("result").is_none(), "{body}: {v}");
    v
}

/// The member named at fault by an `-32602` error, in the version's shape.
fn field(version: &str, error: &Value) -> Value {
    if version == "1.0" {
        error["data"][1]["fieldViolations"][0]["field"].clone()
    } else {
        error["data"]["field"].clone()
    }
}

/// The stable reason, in the version's shape.
fn reason(version: &str, error: &Value) -> Value {
    if version == "1.0" {
        error["data"][0]["reason"].clone()
    } else {
        error["data"]["reason"].clone()
    }
}

#[test]
fn a_number_out_of_range_is_an_invalid_request_or_params_not_a_parse_error() {
    let tmp = Tmp::new("numbers");
    let service = start(config(&tmp));
    let addr = service.addr();
    let digits = "9".repeat(400);
    for (version, get, send) in [
        ("1.0", "GetTask", "SendMessage"),
        ("", "tasks/get", "message/send"),
    ] {
        // The id itself: -32600, and the id is null since it cannot be echoed.
        for id in ["1e400", "-1e400", &digits, "1E+999"] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{get}","params":{{}}}}"#);
            let v = post(addr, version, &body);
            assert_eq!(v["error"]["code"], -32600, "{body}: {v}");
            assert_eq!(v["id"], Value::Null, "{body}: {v}");
            assert_eq!(reason(version, &v["error"]), "INVALID_REQUEST");
            let text = v["error"]["message"].as_str().unwrap();
            assert!(text.contains("id is a number out of range"), "{text}");
        }
        // In the parameters: -32602 naming the member, with the request's id.
        for (params, at) in [
            (
                r#"{"id":"t","historyLength":1e400}"#.to_string(),
                "historyLength",
            ),
            (
                format!(r#"{{"id":"t","historyLength":{digits}}}"#),
                "historyLength",
            ),
            (
                r#"{"id":"t","metadata":{"n":[0,-2e999]}}"#.into(),
                "metadata.n[1]",
            ),
            (r#"{"id":"\udc00"}"#.into(), "id"),
        ] {
            let body =
                format!(r#"{{"jsonrpc":"2.0","id":"q","method":"{get}","params":{params}}}"#);
            let v = post(addr, version, &body);
            assert_eq!(v["error"]["code"], -32602, "{body}: {v}");
            assert_eq!(v["id"], "q", "{body}: {v}");
            assert_eq!(field(version, &v["error"]), at, "{body}: {v}");
            assert_eq!(reason(version, &v["error"]), "INVALID_PARAMS");
        }
        let body = format!(r#"{{"jsonrpc":"2.0","id":3,"method":"{send}","params":1e400}}"#);
        let v = post(addr, version, &body);
        assert_eq!(
            (&v["error"]["code"], &v["id"]),
            (&(-32602).into(), &3.into()),
            "{v}"
        );
        assert_eq!(field(version, &v["error"]), "params");
        // A message with such a number is refused before it is looked at (its shape, of either
        // version, does not matter), and nothing is stored.
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":4,"method":"{send}","params":{{"message":{{"messageId":"n",
            "role":"user","parts":[{{"kind":"data","data":{{"x":1e400}}}}]}}}}}}"#
        );
        let v = post(addr, version, &body);
        assert_eq!(v["error"]["code"], -32602, "{v}");
        assert_eq!(field(version, &v["error"]), "message.parts[0].data.x");
        // Elsewhere in the request: -32600 with the id.
        for (member, value) in [
            ("extra", "1e400"),
            ("method", "1e400"),
            ("jsonrpc", "-1e999"),
        ] {
            let mut members = vec![
                r#""jsonrpc":"2.0""#.to_string(),
                r#""id":"e""#.to_string(),
                format!(r#""method":"{get}""#),
            ];
            members.retain(|m| !m.starts_with(&format!("\"{member}\"")));
            members.push(format!(r#""{member}":{value}"#));
            let body = format!("{{{}}}", members.join(","));
            let v = post(addr, version, &body);
            assert_eq!(v["error"]["code"], -32600, "{body}: {v}");
            assert_eq!(v["id"], "e", "{body}: {v}");
            let text = v["error"]["message"].as_str().unwrap();
            assert!(
                text.contains(&format!("{member} is a number out of range")),
                "{text}"
            );
        }
        // The method is looked at before the parameters.
        let body = r#"{"jsonrpc":"2.0","id":5,"method":"Nope","params":{"x":1e400}}"#;
        assert_eq!(post(addr, version, body)["error"]["code"], -32601);
        // The whole request a number, or a batch holding one: -32600, id null.
        for body in ["1e400", "[1e400]", r#"[{"jsonrpc":"2.0","id":1e400}]"#] {
            let v = post(addr, version, body);
            assert_eq!(
                (&v["error"]["code"], &v["id"]),
                (&(-32600).into(), &Value::Null)
            );
        }
        // Text that is not JSON is still a parse error, out-of-range numbers or not.
        for body in [
            r#"{"jsonrpc":"2.0","id":1e400,"method":"#,
            r#"{"jsonrpc":"2.0","id":1e,"method":"GetTask"}"#,
            r#"{"jsonrpc":"2.0","id":1e400,"method":"GetTask",}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"x":1e400}} trailing"#,
        ] {
            let v = post(addr, version, body);
            assert_eq!(v["error"]["code"], -32700, "{body}: {v}");
            assert_eq!(v["id"], Value::Null);
        }
    }
    let delivered = local_store(&tmp).read_unread("a2a", None).unwrap();
    assert!(delivered.is_empty(), "{delivered:?}");
}
