//! Property-based fuzzing (proptest) of the frame decoder, through a live broker's socket, and of
//! the client-frame parser (registration included). `PROPTEST_CASES` raises the case count for a
//! longer run; the default keeps CI short.

mod common;

use std::time::Duration;

use agent_intercom_broker::wire::{
    ClientFrame, check_client_frame, parse_client_frame, parse_client_frame_owned,
};
use common::*;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| json!(f)),
        ".{0,40}".prop_map(Value::String),
        prop::sample::select(vec![
            "register",
            "send",
            "list",
            "health",
            "presence",
            "pi-intercom",
            "Scope_AAAAAAAAAA"
        ])
        .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop::sample::select(vec![
                        "type",
                        "protocol",
                        "version",
                        "session",
                        "sessionId",
                        "scopeId",
                        "cwd",
                        "model",
                        "pid",
                        "startedAt",
                        "lastActivity",
                        "name",
                        "to",
                        "message",
                        "id",
                        "content",
                        "text",
                        "requestId",
                        "x"
                    ]),
                    inner
                ),
                0..8
            )
            .prop_map(|pairs| Value::Object(
                pairs
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect::<Map<_, _>>()
            )),
        ]
    })
}

fn valid_register() -> Value {
    json!({
        "type": "register",
        "protocol": "pi-intercom",
        "version": 4,
        "scopeId": "Scope_AAAAAAAAAA",
        "session": {
            "cwd": "/w",
            "model": "m",
            "pid": 1,
            "startedAt": 1,
            "lastActivity": 1,
            "name": "n",
        },
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any JSON value: the parser answers (never panics), and anything it accepts is well-formed.
    #[test]
    fn client_frame_parser_never_panics(value in arb_json()) {
        let config = config(std::path::Path::new("/unused"));
        let _ = parse_client_frame(&value, &config);
    }

    /// The broker's own path, which moves a send's message into the frame instead of copying
    /// it, reads every frame as the general parser does: any value, a send around any message,
    /// and a valid send (which must read as a send, message and all).
    #[test]
    fn an_owned_frame_reads_as_a_borrowed_one(
        value in arb_json(),
        message in arb_json(),
        queue in arb_json(),
    ) {
        let config = config(std::path::Path::new("/unused"));
        let valid = json!({
            "type": "send", "to": "b",
            "message": {
                "id": "m1", "timestamp": 1, "content": { "text": "hi" }, "expectsReply": true,
            },
        });
        let frames = [
            value,
            json!({ "type": "send", "to": "b", "message": message }),
            json!({
                "type": "send", "to": "b", "queue": queue, "message": valid["message"].clone(),
            }),
            valid.clone(),
        ];
        for frame in frames {
            let mut owned = frame.clone();
            let general = parse_client_frame(&frame, &config);
            prop_assert_eq!(parse_client_frame_owned(&mut owned, &config), general.clone());
            // The checking-only reading gives the same verdict, without the message.
            let checked = check_client_frame(&frame, &config);
            prop_assert_eq!(checked.is_ok(), general.is_ok(), "{:?}", checked);
            if let (Ok(ClientFrame::Send(checked)), Ok(ClientFrame::Send(mut general))) =
                (checked.clone(), general)
            {
                prop_assert!(checked.message.is_null());
                general.message = Value::Null;
                prop_assert_eq!(checked, general);
            } else if let Err(refusal) = &checked {
                prop_assert_eq!(Err(refusal.clone()), parse_client_frame(&frame, &config));
            }
        }
        let mut owned = valid.clone();
        match parse_client_frame_owned(&mut owned, &config) {
            Ok(ClientFrame::Send(send)) => prop_assert_eq!(&send.message, &valid["message"]),
            other => prop_assert!(false, "not a send: {:?}", other),
        }
    }

    /// Mutations of a valid registration: removing, retyping or adding a field is refused; the
    /// original is accepted.
    #[test]
    fn registration_mutations(
        path in prop::sample::select(vec![
            "protocol", "version", "session", "scopeId",
            "session.cwd", "session.model", "session.pid", "session.name",
        ]),
        replacement in arb_json(),
        remove in any::<bool>(),
    ) {
        let config = config(std::path::Path::new("/unused"));
        prop_assert!(matches!(
            parse_client_frame(&valid_register(), &config),
            Ok(ClientFrame::Register(_))
        ));
        let mut frame = valid_register();
        let original = match path.split_once('.') {
            Some((outer, inner)) => frame[outer][inner].clone(),
            None => frame[path].clone(),
        };
        let target = match path.split_once('.') {
            Some((outer, inner)) => frame[outer]
                .as_object_mut()
                .unwrap()
                .entry(inner.to_string())
                .or_insert(Value::Null),
            None => frame.as_object_mut().unwrap().entry(path.to_string()).or_insert(Value::Null),
        };
        if remove {
            *target = Value::Null;
            match path.split_once('.') {
                Some((outer, inner)) => { frame[outer].as_object_mut().unwrap().remove(inner); }
                None => { frame.as_object_mut().unwrap().remove(path); }
            }
        } else {
            *target = replacement.clone();
        }
        let result = parse_client_frame(&frame, &config);
        let still_valid_value = !remove
            && (replacement == original
                || (path == "session.name"
                    && replacement
                        .as_str()
                        .is_some_and(|s| s.encode_utf16().count() <= 256))
                || (path == "session.pid" && replacement.is_number())
                || (path == "scopeId"
                    && replacement.as_str().is_some_and(|s| {
                        s.is_empty() || agent_intercom_core::scope::is_valid_scope_id(s)
                    }))
                || (path == "session.cwd"
                    && replacement
                        .as_str()
                        .is_some_and(|s| (1..=4096).contains(&s.encode_utf16().count())))
                || (path == "session.model"
                    && replacement
                        .as_str()
                        .is_some_and(|s| (1..=512).contains(&s.encode_utf16().count()))));
        let optional = path == "scopeId" || path == "session.name";
        if still_valid_value || (remove && optional) {
            prop_assert!(matches!(result, Ok(ClientFrame::Register(_))), "{frame} -> {result:?}");
        } else {
            prop_assert!(result.is_err(), "{frame} was accepted");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Arbitrary bytes, arbitrary declared lengths, truncated frames: the broker answers or closes,
    /// and keeps serving everyone else.
    #[test]
    fn frame_decoder_survives_arbitrary_bytes(
        declared in prop_oneof![Just(None), any::<u32>().prop_map(Some), (0u32..64).prop_map(Some)],
        body in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let broker =
            Broker::start_with("fuzz", |c| c.registration_timeout = Duration::from_millis(200));
        let mut victim = broker.connect();
        let mut bytes = Vec::new();
        if let Some(len) = declared {
            bytes.extend_from_slice(&len.to_be_bytes());
        }
        bytes.extend_from_slice(&body);
        victim.send_raw(&bytes);
        // Whatever happened to the victim, a fresh connection is served.
        let mut other = broker.connect();
        other.send(json!({ "type": "health", "requestId": "still" }));
        prop_assert_eq!(&other.recv()["type"], "health_ok");
        // The victim ends with an error frame or a close within the registration timeout.
        let mut answered = false;
        while let Some(frame) = victim.recv_opt(Duration::from_secs(2)) {
            if frame["type"] == "error" { answered = true; }
        }
        prop_assert!(answered || victim.closed());
    }
}
