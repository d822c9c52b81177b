//! The broker client's rules for `lib/broker.js` (`connect()`, `accessControl()`,
//! `brokerHealth()`): each function hands JSON text or bytes to
//! `agent_intercom_broker::client::rules`, the one copy of those rules that the C ABI's client
//! uses too, and hands its answer back. `lib/broker.js` keeps the sockets, timers and events.
//! Requests come as the JSON text `lib/plain.js` wrote for the caller's plain data, frames as
//! the broker sent them; a refusal is thrown with its stable code.

use agent_intercom_broker::client::rules::{self, Access, Answer, FrameBuffer};
use agent_intercom_broker::wire;
use agent_intercom_core::Error;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;

use crate::{Result, js_error};

/// A request's JSON text (written by lib/plain.js, so never invalid).
fn request(json: &str, what: &str) -> Result<Value> {
    rules::parse_json(json, what).map_err(js_error)
}

/// A frame's JSON text as the broker sent it (a frame of [`NativeFrameReader`]).
fn frame(text: String) -> Result<Value> {
    rules::read_frame(text.into_bytes())
        .map(|r| r.value)
        .map_err(js_error)
}

fn access(json: Option<String>) -> Result<Option<Access>> {
    json.map(|json| Access::parse(&request(&json, "access")?, "access").map_err(js_error))
        .transpose()
}

/// A refusal by the broker: the code and message of the error it becomes.
#[napi(object)]
pub struct NativeRefusal {
    pub code: String,
    pub message: String,
}

impl From<Error> for NativeRefusal {
    fn from(error: Error) -> NativeRefusal {
        NativeRefusal {
            code: error.code().as_str().into(),
            message: error.message().into(),
        }
    }
}

/// A checked registration credential (`Access::parse`, `what` naming it), as JSON text.
#[napi]
pub fn client_access(json: String, what: String) -> Result<String> {
    let access = Access::parse(&request(&json, &what)?, &what).map_err(js_error)?;
    Ok(access.to_value().to_string())
}

/// A register request, checked (`RegisterRequest::parse`).
#[napi(object)]
pub struct NativeRegisterRequest {
    /// The register frame, length prefix included.
    pub frame: Buffer,
    /// Its credential as JSON text, for [`client_register_answer`]; absent for a local one.
    pub access_json: Option<String>,
}

/// Checks a register request (`what` naming it) and writes its frame. `connection_access` is the
/// credential of the connection (JSON text of [`client_access`]), sent when the request names
/// none.
#[napi]
pub fn client_register_request(
    json: String,
    what: String,
    connection_access: Option<String>,
) -> Result<NativeRegisterRequest> {
    let mut value = request(&json, &what)?;
    if let (Some(map), Some(default)) = (value.as_object_mut(), connection_access)
        && !map.contains_key("access")
    {
        map.insert("access".into(), request(&default, "access")?);
    }
    let checked = rules::RegisterRequest::parse(&value, &what).map_err(js_error)?;
    Ok(NativeRegisterRequest {
        frame: wire::encode(checked.frame()).into(),
        access_json: checked.access().map(|a| a.to_value().to_string()),
    })
}

/// What the answer to a register request means (`rules::register_answer`): null when it is
/// accepted, the broker's refusal when it refused (the connection stays), and a throw for an
/// answer no client can use (the caller closes the connection then).
#[napi]
pub fn client_register_answer(
    frame_text: String,
    access_json: Option<String>,
) -> Result<Option<NativeRefusal>> {
    let access = access(access_json)?;
    match rules::register_answer(&frame(frame_text)?, access.as_ref()).map_err(js_error)? {
        Answer::Accepted => Ok(None),
        Answer::Refused(error) => Ok(Some(error.into())),
    }
}

/// The refusal an `error` frame stands for (`rules::broker_refusal`).
#[napi]
pub fn client_broker_refusal(frame_text: String) -> Result<NativeRefusal> {
    Ok(rules::broker_refusal(&frame(frame_text)?).into())
}

/// An access_control request, checked (`AccessControlRequest::parse`).
#[napi(object)]
pub struct NativeAccessControlRequest {
    /// The access_control frame, length prefix included.
    pub frame: Buffer,
    /// The request id the answer must carry (the caller's, or a fresh UUID).
    pub request_id: String,
    /// The action the answer must name.
    pub action: String,
}

/// Checks an access_control request (`what` naming it) and writes its frame.
#[napi]
pub fn client_access_control_request(
    json: String,
    what: String,
) -> Result<NativeAccessControlRequest> {
    let checked =
        rules::AccessControlRequest::parse(&request(&json, &what)?, &what).map_err(js_error)?;
    Ok(NativeAccessControlRequest {
        frame: wire::encode(checked.frame()).into(),
        request_id: checked.request_id().into(),
        action: checked.action().into(),
    })
}

/// Checks the answer to an access_control request (`rules::access_control_answer`): returns
/// when it is that request's result, throws the refusal otherwise.
#[napi]
pub fn client_access_control_answer(
    frame_text: String,
    request_id: String,
    action: String,
) -> Result<()> {
    rules::access_control_answer(&frame(frame_text)?, &request_id, &action).map_err(js_error)
}

/// The `health` frame of a probe, length prefix included.
#[napi]
pub fn client_health_request(request_id: String) -> Buffer {
    wire::encode(&rules::health_request(&request_id)).into()
}

/// What the answer to a health probe means (`rules::health_answer`; null: none came, or none
/// that reads as a frame): `compatible`, `incompatible` or `unreachable`.
#[napi]
pub fn client_health(frame_text: Option<String>, request_id: String) -> String {
    let answer = frame_text.and_then(|text| rules::read_frame(text.into_bytes()).ok());
    rules::health_answer(answer.as_ref().map(|r| &r.value), &request_id)
        .as_str()
        .into()
}

/// Splits what a broker sends into frames (`rules::FrameBuffer`, `rules::read_frame`).
#[napi]
#[derive(Default)]
pub struct NativeFrameReader {
    buffer: FrameBuffer,
}

#[napi]
impl NativeFrameReader {
    #[napi(constructor)]
    pub fn new() -> NativeFrameReader {
        NativeFrameReader::default()
    }

    /// Appends bytes as they came from the socket.
    #[napi]
    pub fn push(&mut self, chunk: Buffer) {
        self.buffer.push(&chunk);
    }

    /// The next whole frame's JSON text, or null until more bytes come. A frame over the frame
    /// limit, not UTF-8 or not JSON throws `INVALID_FRAME` (the stream cannot be resynchronised).
    #[napi]
    pub fn next_frame(&mut self) -> Result<Option<String>> {
        match self.buffer.next_body().map_err(js_error)? {
            Some(body) => Ok(Some(rules::read_frame(body).map_err(js_error)?.text)),
            None => Ok(None),
        }
    }
}

/// A send's opt-in extensions (`rules::SendOptions::parse`, `what` naming the object), as the
/// JSON text of the members its frame gets: `{}` when it asks for nothing (protocol v4's send).
#[napi]
pub fn client_send_options(json: String, what: String) -> Result<String> {
    let options = rules::SendOptions::parse(&request(&json, &what)?, &what).map_err(js_error)?;
    Ok(Value::Object(options.members()).to_string())
}

/// The `message_read` frame of a delivery (`rules::message_read_request`), length prefix
/// included.
#[napi]
pub fn client_message_read_request(delivery_id: String, what: String) -> Result<Buffer> {
    let frame = rules::message_read_request(&delivery_id, &what).map_err(js_error)?;
    Ok(wire::encode(&frame).into())
}

/// The `delivery_status` frame (`rules::delivery_status_request`), length prefix included.
#[napi]
pub fn client_delivery_status_request(
    request_id: String,
    message_id: String,
    what: String,
) -> Result<Buffer> {
    let frame =
        rules::delivery_status_request(&request_id, &message_id, &what).map_err(js_error)?;
    Ok(wire::encode(&frame).into())
}

/// The state the answer to a delivery_status request reports (`rules::delivery_status_answer`);
/// throws `INVALID_FRAME` for an answer that is not that request's.
#[napi]
pub fn client_delivery_status_answer(
    frame_text: String,
    request_id: String,
    message_id: String,
) -> Result<String> {
    rules::delivery_status_answer(&frame(frame_text)?, &request_id, &message_id)
        .map(str::to_string)
        .map_err(js_error)
}
