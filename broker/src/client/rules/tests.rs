//! The rules without a socket.
use super::*;
use serde_json::json;

#[test]
fn the_buffer_splits_frames_however_the_bytes_arrive() {
    let mut stream = wire::encode(&json!({ "type": "a" }));
    stream.extend(wire::encode(&json!({ "type": "b" })));
    let mut buffer = FrameBuffer::default();
    let mut bodies = Vec::new();
    for byte in &stream {
        buffer.push(std::slice::from_ref(byte));
        while let Some(body) = buffer.next_body().unwrap() {
            bodies.push(read_frame(body).unwrap().value["type"].clone());
        }
    }
    assert_eq!(bodies, [json!("a"), json!("b")]);
    assert!(buffer.is_empty());
    // Part of a header, then part of a body: nothing yet, and not empty.
    buffer.push(&[0, 0]);
    assert!(buffer.next_body().unwrap().is_none() && !buffer.is_empty());
    buffer.push(&[0, 2, b'{']);
    assert!(buffer.next_body().unwrap().is_none());
    buffer.push(b"}");
    assert_eq!(buffer.next_body().unwrap().as_deref(), Some(&b"{}"[..]));
    // A lone surrogate escape is read as JSON.parse reads it; the text stays as it came.
    let held = read_frame(br#"{"type":"a\ud800"}"#.to_vec()).unwrap();
    assert_eq!(held.text, r#"{"type":"a\ud800"}"#);
}

#[test]
fn an_error_frame_is_a_refusal_that_keeps_the_connection() {
    let refused = json!({ "type": "error", "code": "ACCESS_DENIED", "error": "no" });
    let Ok(Answer::Refused(e)) = register_answer(&refused, None) else {
        panic!("a refusal");
    };
    assert_eq!((e.code(), e.message()), (ErrorCode::AccessDenied, "no"));
    let bogus = json!({ "type": "error", "code": "BOGUS", "error": "no" });
    let Ok(Answer::Refused(e)) = register_answer(&bogus, None) else {
        panic!("a refusal");
    };
    assert_eq!(e.code(), ErrorCode::InvalidFrame);
    // Anything else that is not an accepted registration is unusable.
    let local = json!({ "type": "registered", "sessionId": "s", "protocol": "pi-intercom",
        "version": 4 });
    assert!(matches!(
        register_answer(&local, None),
        Ok(Answer::Accepted)
    ));
    let token = Access::Enrollment { token: "t".into() };
    let e = register_answer(&local, Some(&token)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::RemoteAccessIncompatible);
    let e = register_answer(&json!(null), None).unwrap_err();
    assert_eq!(
        e.message(),
        "the broker answered register with a frame without a type"
    );
}

#[test]
fn an_access_control_answer_is_that_request_s_result() {
    let result = json!({ "type": "access_control_result", "requestId": "r", "action": "a" });
    assert!(access_control_answer(&result, "r", "a").is_ok());
    for (id, action) in [("other", "a"), ("r", "other")] {
        let e = access_control_answer(&result, id, action).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidFrame);
    }
    let refused = json!({ "type": "error", "code": "INVALID_REQUEST", "error": "why" });
    let e = access_control_answer(&refused, "r", "a").unwrap_err();
    assert_eq!((e.code(), e.message()), (ErrorCode::InvalidRequest, "why"));
    let e = access_control_answer(&json!({ "type": "error" }), "r", "a").unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidFrame);
}

#[test]
fn a_health_answer_is_compatible_only_as_this_library_requires() {
    let ok = json!({
        "type": "health_ok", "requestId": "r", "protocol": protocol::PROTOCOL_NAME,
        "version": protocol::PROTOCOL_VERSION, "endpoint": wire::LOCAL_ENDPOINT,
        "remoteAccess": wire::remote_access_contract(),
    });
    assert_eq!(health_answer(Some(&ok), "r"), Health::Compatible);
    assert_eq!(health_answer(Some(&ok), "other"), Health::Unreachable);
    assert_eq!(health_answer(None, "r"), Health::Unreachable);
    for (key, value) in [
        ("version", json!(4.5)),
        ("endpoint", json!("elsewhere")),
        ("remoteAccess", json!(null)),
    ] {
        let mut changed = ok.clone();
        changed[key] = value;
        assert_eq!(
            health_answer(Some(&changed), "r"),
            Health::Incompatible,
            "{key}"
        );
    }
    let names = Health::ALL.map(Health::as_str);
    assert_eq!(names, ["compatible", "incompatible", "unreachable"]);
    assert_eq!(
        health_request("r"),
        json!({ "type": "health", "requestId": "r" })
    );
}

#[test]
fn requests_name_their_fields_by_the_caller_s_path() {
    let request = json!({ "session": {}, "sessionId": "x", "access": { "enrollmentToken": "t" } });
    let e = RegisterRequest::parse(&request, "options").unwrap_err();
    assert!(
        e.message()
            .starts_with("options.sessionId cannot go with options.access")
    );
    let e = RegisterRequest::parse(&json!({ "session": {}, "access": {} }), "options").unwrap_err();
    assert!(
        e.message()
            .starts_with("options.access must be exactly one of"),
        "{e}"
    );
    let e =
        AccessControlRequest::parse(&json!({ "adminToken": "t" }), "options.request").unwrap_err();
    assert_eq!(e.message(), "options.request.action is required");
    let admin = json!({ "adminToken": "t", "action": "inspect_tree" });
    let r = AccessControlRequest::parse(&admin, "request").unwrap();
    assert_eq!((r.action(), r.request_id().len()), ("inspect_tree", 36));
    assert_eq!(r.frame()["requestId"], r.request_id());
}

#[test]
fn send_options_are_booleans_and_only_what_is_on_goes_out() {
    let plain = SendOptions::parse(&json!({}), "options").unwrap();
    assert_eq!(plain, SendOptions::default());
    assert!(
        plain.members().is_empty(),
        "nothing asked: protocol v4's send"
    );
    let both = SendOptions::parse(&json!({ "queue": true, "receipts": true }), "o").unwrap();
    assert_eq!(
        Value::Object(both.members()).to_string(),
        r#"{"queue":true,"receipts":true}"#
    );
    let off = SendOptions::parse(&json!({ "queue": false }), "o").unwrap();
    assert!(off.members().is_empty());
    let e = SendOptions::parse(&json!({ "queue": 1 }), "options").unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert_eq!(e.message(), "options.queue must be a boolean");
    let e = SendOptions::parse(&json!({ "queued": true }), "options").unwrap_err();
    assert_eq!(e.code(), ErrorCode::UnknownKey);
    let e = SendOptions::parse(&json!([]), "options").unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
}

#[test]
fn extension_requests_and_the_status_answer() {
    assert_eq!(
        message_read_request("d1", "deliveryId").unwrap(),
        json!({ "type": "message_read", "deliveryId": "d1" })
    );
    let e = message_read_request("", "deliveryId").unwrap_err();
    assert_eq!(e.message(), "deliveryId must be a non-empty string");
    assert_eq!(
        delivery_status_request("r", "m", "messageId").unwrap(),
        json!({ "type": "delivery_status", "requestId": "r", "messageId": "m" })
    );
    assert!(delivery_status_request("r", "a\0b", "messageId").is_err());
    let answer = |kind: &str, request: &str, message: &str, state: &str| {
        let mut frame = json!({ "type": kind, "requestId": request, "messageId": message });
        frame["state"] = json!(state);
        frame
    };
    for state in wire::delivery_state::ALL {
        let frame = answer("delivery_status", "r", "m", state);
        assert_eq!(delivery_status_answer(&frame, "r", "m").unwrap(), state);
    }
    for bad in [
        answer("delivery_status", "r", "m", "lost"),
        answer("delivery_status", "x", "m", "read"),
        answer("delivery_status", "r", "x", "read"),
        answer("sessions", "r", "m", "read"),
    ] {
        let e = delivery_status_answer(&bad, "r", "m").unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidFrame, "{bad}");
    }
}
