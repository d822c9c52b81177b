//! The TCP transport (the Pi broker's on Windows): a loopback port named in `broker.port.json`
//! with a per-start `stateId` that `health` and `register` must carry.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use agent_intercom_broker::Transport;
use common::{Broker, config};
use serde_json::{Value, json};

fn send(stream: &mut TcpStream, frame: &Value) {
    let body = serde_json::to_vec(frame).unwrap();
    stream
        .write_all(&(body.len() as u32).to_be_bytes())
        .unwrap();
    stream.write_all(&body).unwrap();
}

/// The next frame, or None when the broker closed the connection without one.
fn recv(stream: &mut TcpStream) -> Option<Value> {
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut header = [0u8; 4];
    stream.read_exact(&mut header).ok()?;
    let mut body = vec![0u8; u32::from_be_bytes(header) as usize];
    stream.read_exact(&mut body).unwrap();
    Some(serde_json::from_slice(&body).unwrap())
}

fn register(session_id: &str, state_id: Option<&str>) -> Value {
    let mut frame = json!({
        "type": "register", "protocol": "pi-intercom", "version": 4, "sessionId": session_id,
        "session": { "cwd": "/w", "model": "m", "pid": 1, "startedAt": 1, "lastActivity": 1 },
    });
    if let Some(state_id) = state_id {
        frame["stateId"] = json!(state_id);
    }
    frame
}

#[test]
fn tcp_needs_the_state_id_and_its_sessions_are_not_trusted_local() {
    let broker = Broker::start_with("tcp", |c| c.transport = Transport::Tcp);
    let intercom = broker.dir.0.join("intercom");
    let port_file = intercom.join("broker.port.json");
    let mode = std::fs::metadata(&port_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let endpoint: Value = serde_json::from_str(&std::fs::read_to_string(&port_file).unwrap())
        .expect("the endpoint file is JSON");
    let keys: Vec<&String> = endpoint.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["transport", "host", "port", "stateId"]);
    assert_eq!(endpoint["transport"], "tcp");
    assert_eq!(endpoint["host"], "127.0.0.1");
    let state_id = endpoint["stateId"].as_str().unwrap().to_string();
    let address = format!("127.0.0.1:{}", endpoint["port"]);
    assert!(!intercom.join("remote-gateway.sock").exists());
    assert!(!intercom.join("broker.sock").exists());

    // Without the stateId: dropped, nothing said.
    let mut anonymous = TcpStream::connect(&address).unwrap();
    send(
        &mut anonymous,
        &json!({ "type": "health", "requestId": "h" }),
    );
    assert_eq!(recv(&mut anonymous), None);
    let mut anonymous = TcpStream::connect(&address).unwrap();
    send(&mut anonymous, &register("nobody", Some("wrong")));
    assert_eq!(recv(&mut anonymous), None);

    let mut health = TcpStream::connect(&address).unwrap();
    send(
        &mut health,
        &json!({ "type": "health", "requestId": "h", "stateId": state_id }),
    );
    let ok = recv(&mut health).unwrap();
    assert_eq!(ok["type"], "health_ok");
    assert_eq!(ok["endpoint"], "local");

    let mut a = TcpStream::connect(&address).unwrap();
    send(&mut a, &register("a", Some(&state_id)));
    assert_eq!(
        recv(&mut a).unwrap(),
        json!({ "type": "registered", "sessionId": "a", "protocol": "pi-intercom", "version": 4 })
    );
    let mut b = TcpStream::connect(&address).unwrap();
    send(&mut b, &register("b", Some(&state_id)));
    recv(&mut b).unwrap();
    let joined = recv(&mut a).unwrap();
    assert_eq!(joined["type"], "session_joined");
    assert_eq!(joined["session"]["trustedLocal"], false);
    assert_eq!(joined["session"]["origin"], "local");
    // access_control works as on the local socket (no stateId needed, as in the Pi broker).
    send(
        &mut health,
        &json!({ "type": "access_control", "requestId": "x", "adminToken": "wrong",
                 "action": "inspect_tree", "principalId": "p" }),
    );
    assert_eq!(recv(&mut health).unwrap()["code"], "ACCESS_DENIED");
    drop((a, b, health));
    drop(broker);
    assert!(
        !port_file.exists(),
        "the endpoint file goes with the broker"
    );
}

#[test]
fn the_transport_setting_is_checked() {
    let mut c = config(std::path::Path::new("/nonexistent"));
    c.set("transport", "tcp").unwrap();
    assert_eq!(c.transport, Transport::Tcp);
    c.set("transport", "unix").unwrap();
    assert_eq!(c.transport, Transport::Unix);
    let e = c.set("transport", "udp").unwrap_err();
    assert_eq!(e.code(), agent_intercom_core::ErrorCode::InvalidArgument);
    assert_eq!(c.transport, Transport::Unix);
}
