//! The Agent Card (three routes, 1.0 shape with the 0.3 connection fields, no path or secret),
//! the bearer token, the signing extension and what the service refuses to start with.

use std::path::PathBuf;

use agent_intercom_a2a::StartError;
use agent_intercom_core::httpsig::EXTENSION_URI as SIGNING_EXTENSION_URI;
use serde_json::json;

use crate::client::{Tmp, config, get, message, post_rpc, start};

const TOKEN: &str = "s3cret-token-0123456789abcdef";

fn token_file(tmp: &Tmp, mode: u32) -> PathBuf {
    let path = tmp.0.join("token");
    std::fs::write(&path, format!("{TOKEN}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    path
}

#[test]
fn the_card_is_served_at_every_route_in_the_1_0_shape_without_paths() {
    let tmp = Tmp::new("card");
    let service = start(config(&tmp));
    let addr = service.addr();
    let reply = get(addr, "/.well-known/agent-card.json");
    assert_eq!(reply.status, 200);
    assert!(
        reply
            .header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    let card = reply.json();
    for route in ["/.well-known/agent.json", "/v1/a2a/agent-card"] {
        assert_eq!(get(addr, route).json(), card, "{route}");
    }
    let url = format!("http://{addr}/a2a");
    assert_eq!(card["name"], "agent-intercom");
    assert!(!card["description"].as_str().unwrap().is_empty());
    assert_eq!(
        card["supportedInterfaces"],
        json!([
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
        ])
    );
    assert_eq!(card["url"], url.as_str());
    assert_eq!(card["preferredTransport"], "JSONRPC");
    assert_eq!(card["protocolVersion"], "0.3.0");
    assert_eq!(card["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(card["capabilities"]["streaming"], true);
    assert_eq!(card["capabilities"]["pushNotifications"], false);
    assert_eq!(card["capabilities"]["extensions"], json!([]));
    assert!(
        card["defaultInputModes"]
            .as_array()
            .unwrap()
            .contains(&json!("text/plain"))
    );
    assert!(!card["defaultOutputModes"].as_array().unwrap().is_empty());
    let skill = &card["skills"][0];
    for key in ["id", "name", "description"] {
        assert!(!skill[key].as_str().unwrap().is_empty(), "{key}");
    }
    assert!(!skill["tags"].as_array().unwrap().is_empty());
    assert!(card["provider"]["organization"].is_string() && card["provider"]["url"].is_string());
    assert!(
        card["documentationUrl"]
            .as_str()
            .unwrap()
            .starts_with("https://")
    );
    assert!(card.get("securitySchemes").is_none());
    // Nothing local: no store path, directory, home or user name.
    let text = card.to_string();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/nonexistent-home".into());
    for local in [
        tmp.db().display().to_string(),
        tmp.0.display().to_string(),
        std::env::temp_dir().display().to_string(),
        home,
        "file:".to_string(),
        "sqlite".to_string(),
    ] {
        assert!(!text.contains(&local), "the card holds {local}: {text}");
    }
}

#[test]
fn the_public_url_and_the_required_signing_extension_appear_in_the_card() {
    let tmp = Tmp::new("card-ext");
    let mut cfg = config(&tmp);
    cfg.public_url = Some("https://agents.example.com/team/".into());
    cfg.require_signatures = true;
    let service = start(cfg);
    let addr = service.addr();
    let card = get(addr, "/.well-known/agent-card.json").json();
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        "https://agents.example.com/team/a2a"
    );
    let ext = &card["capabilities"]["extensions"][0];
    assert_eq!(ext["uri"], SIGNING_EXTENSION_URI);
    assert_eq!(ext["required"], true);
    // An unsigned request is refused before JSON-RPC: 401 with the stable code.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}});
    let listed = SIGNING_EXTENSION_URI.to_string();
    for extra in [vec![], vec![("A2A-Extensions", listed.as_str())]] {
        let reply = post_rpc(addr, "1.0", &extra, &body);
        assert_eq!(reply.status, 401);
        assert_eq!(reply.json()["error"]["code"], "SIGNATURE_MISSING");
    }
    // The card and the other routes stay readable.
    assert_eq!(get(addr, "/v1/a2a/agent-card").status, 200);
}

#[test]
fn a_token_guards_every_post_and_is_never_shown() {
    let tmp = Tmp::new("card-token");
    let mut cfg = config(&tmp);
    cfg.token_file = Some(token_file(&tmp, 0o600));
    let service = start(cfg);
    let addr = service.addr();
    let card = get(addr, "/.well-known/agent-card.json");
    assert_eq!(card.status, 200);
    assert!(!String::from_utf8_lossy(&card.body).contains(TOKEN));
    assert_eq!(
        card.json()["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                      "params": {"message": message("t", "x"),
                                 "configuration": {"returnImmediately": true}}});
    let wrong = format!("Bearer {TOKEN}x");
    for headers in [vec![], vec![("Authorization", wrong.as_str())]] {
        let reply = post_rpc(addr, "1.0", &headers, &body);
        assert_eq!(reply.status, 401);
        assert_eq!(reply.header("www-authenticate"), Some("Bearer"));
        let v = reply.json();
        assert_eq!(v["error"]["code"], "ACCESS_DENIED");
        assert!(!v.to_string().contains(TOKEN));
    }
    // Refused before its body is read, on a keep-alive connection: the answer says
    // `Connection: close`, so a pooling client never reuses a connection the server drops.
    let head = keep_alive_head(addr, &body.to_string());
    assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("\r\nconnection: close\r\n"),
        "{head}"
    );
    let right = format!("Bearer {TOKEN}");
    let reply = post_rpc(addr, "1.0", &[("Authorization", &right)], &body);
    assert_eq!(reply.status, 200);
    let id = reply.json()["result"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Token holders are one identity: the bearer one.
    let mut store = crate::client::local_store(&tmp);
    assert_eq!(store.task(&id, "a2a").unwrap().creator, "a2a:bearer");
}

#[test]
fn the_service_refuses_to_start_beyond_loopback_without_the_flag_and_a_token() {
    let tmp = Tmp::new("card-refuse");
    let expect_config =
        |cfg: agent_intercom_a2a::ServeConfig, needle: &str| match agent_intercom_a2a::spawn(cfg) {
            Err(StartError::Config(m)) => assert!(m.contains(needle), "{m}"),
            Err(other) => panic!("expected a usage refusal, got {other}"),
            Ok(_) => panic!("started, expected a refusal mentioning {needle}"),
        };
    let mut cfg = config(&tmp);
    cfg.listen = "0.0.0.0:0".parse().unwrap();
    expect_config(cfg.clone(), "--allow-non-loopback");
    cfg.allow_non_loopback = true;
    expect_config(cfg.clone(), "--token-file");
    cfg.token_file = Some(token_file(&tmp, 0o644));
    cfg.public_url = Some("http://example.com".into());
    expect_config(cfg.clone(), "0600");
    cfg.token_file = Some(token_file(&tmp, 0o600));
    cfg.public_url = None;
    expect_config(cfg.clone(), "--public-url");
    let mut cfg = config(&tmp);
    cfg.public_url = Some("ftp://example.com".into());
    expect_config(cfg.clone(), "http://");
    cfg.public_url = Some("https://user:pw@example.com".into());
    expect_config(cfg.clone(), "credentials");
    let mut cfg = config(&tmp);
    cfg.blocking_timeout = std::time::Duration::from_secs(40);
    expect_config(cfg, "request timeout");
    // Nothing was created for refused starts.
    assert!(!tmp.db().exists());
}

/// The response head to a keep-alive POST of `body` (the client does not ask to close).
fn keep_alive_head(addr: std::net::SocketAddr, body: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "POST /a2a HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         A2A-Version: 1.0\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).unwrap();
        assert!(n > 0, "closed before a response head");
        got.extend_from_slice(&chunk[..n]);
    }
    let end = got.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    String::from_utf8_lossy(&got[..end + 4]).into_owned()
}
