//! A blocking client of the broker (`agent_intercom_broker::client`): frames as JSON text,
//! registration (local, or remote with an `access` credential) and `access_control`.

use std::ffi::c_char;
use std::path::Path;
use std::time::Duration;

use agent_intercom_broker::client::{self, Client};
use agent_intercom_core::ErrorCode;

use crate::args::{fail, out, owned_string, text};

/// A connection to a broker. Create with aic_client_connect, release with aic_client_free.
/// Thread-safe: one thread may wait in aic_client_recv_frame while others send or register;
/// calls of one kind are serialised.
pub struct aic_client {
    client: Client,
}

/// The client behind a handle, or NULL_POINTER.
///
/// # Safety
/// `client` must be NULL or a live client from aic_client_connect.
unsafe fn handle<'a>(client: *const aic_client) -> Result<&'a Client, agent_intercom_core::Error> {
    // SAFETY: by contract.
    unsafe { client.as_ref() }
        .map(|c| &c.client)
        .ok_or_else(|| fail(ErrorCode::NullPointer, "client is NULL"))
}

/// A non-empty socket path.
///
/// # Safety
/// As args::text.
unsafe fn socket_arg<'a>(
    ptr: *const c_char,
    len: usize,
) -> Result<&'a Path, agent_intercom_core::Error> {
    // SAFETY: forwarded contract.
    let path = unsafe { text(ptr, len, "socket_path")? };
    if path.is_empty() {
        return Err(fail(ErrorCode::InvalidArgument, "socket_path is empty"));
    }
    Ok(Path::new(path))
}

ffi_fn! {
    /// Connects to a broker's socket: the local one (`<agentDir>/intercom/broker.sock`, see
    /// aic_broker_socket_path) or the remote gateway (`<agentDir>/intercom/remote-gateway.sock`).
    /// Fails with AIC_STATUS_NOT_CONNECTED when nothing listens there, AIC_STATUS_INVALID_ARGUMENT
    /// for an empty or too long path. On success `*out_client` owns the connection. Register
    /// soon: a broker drops a connection that has not registered within its
    /// registration_timeout_ms (1 s by default).
    ///
    /// # Safety
    /// Text inputs follow the (pointer, length) contract; `out_client` valid for writes.
    fn aic_client_connect(
        socket_path: *const c_char,
        socket_path_len: usize,
        out_client: *mut *mut aic_client,
    ) {
        // SAFETY: forwarded contract.
        let path = unsafe { socket_arg(socket_path, socket_path_len)? };
        let slot = out(out_client, "out_client")?;
        let client = Client::connect(path)?;
        *slot = Box::into_raw(Box::new(aic_client { client }));
        Ok(())
    }
}

ffi_fn! {
    /// Registers this connection. `request_json` is a JSON object {session, sessionId?,
    /// scopeId?, access?}: `session` the SessionRegistration ({cwd, model, pid, startedAt,
    /// lastActivity, name?, status?, runtimeInstanceId?}), `access` a remote credential on the
    /// gateway: {enrollmentToken} or {sessionCredential, sessionId, generation} (never with
    /// `sessionId`: the broker assigns a remote session's id). On success `*out_json` is the
    /// broker's `registered` frame as it sent it (release with aic_string_free); a remote one
    /// carries `remoteAccess` and `access` (with `sessionCredential` after an enrollment: keep
    /// it for reconnecting). Waits up to 10 s for the answer.
    ///
    /// Failures: the broker's refusal as its code and text (AIC_STATUS_ACCESS_DENIED,
    /// AIC_STATUS_INVALID_REQUEST, AIC_STATUS_SESSION_ID_IN_USE, AIC_STATUS_PROTOCOL_MISMATCH,
    /// AIC_STATUS_TOO_MANY_SESSIONS, ...; the broker then ends the connection), while an error
    /// frame with a code protocol v4 does not define (named in the message), without a string
    /// code or without a string text is AIC_STATUS_INVALID_FRAME;
    /// AIC_STATUS_REMOTE_ACCESS_INCOMPATIBLE when `access` was given and the answer lacks the
    /// remote-access-v1 contract of this library or the broker-owned provenance, or names
    /// another principal or generation than the credential (the connection is closed);
    /// AIC_STATUS_INVALID_FRAME for an answer no client can use (a frame over the frame limit,
    /// not UTF-8 or not JSON, or neither `registered` nor `error`: the connection is closed);
    /// AIC_STATUS_NOT_CONNECTED; AIC_STATUS_INVALID_JSON, AIC_STATUS_INVALID_ARGUMENT or
    /// AIC_STATUS_UNKNOWN_KEY for a request refused before anything is sent. Node's connect()
    /// answers alike: both follow agent_intercom_broker::client::rules
    /// (vectors/broker-client-v1.json).
    ///
    /// # Safety
    /// `client` must be NULL or a live client; text inputs follow the (pointer, length)
    /// contract; `out_json` and `out_len` valid for writes (`out_len` may be NULL).
    fn aic_client_register(
        client: *const aic_client,
        request_json: *const c_char,
        request_json_len: usize,
        out_json: *mut *mut c_char,
        out_len: *mut usize,
    ) {
        // SAFETY: forwarded contract.
        let (client, request) = unsafe {
            (handle(client)?, text(request_json, request_json_len, "request_json")?)
        };
        out(out_json, "out_json")?;
        let request = client::parse_json(request, "request_json")?;
        let registered = client.register(&request)?;
        owned_string(registered.text, out_json, out_len)
    }
}

ffi_fn! {
    /// Sends one frame as it is: `frame_json` a JSON object with a string `type` (any client
    /// frame: list, send, message_received, presence, unregister, ...). Fails with
    /// AIC_STATUS_INVALID_JSON or AIC_STATUS_INVALID_ARGUMENT (not a frame, or larger than any
    /// broker accepts) before anything is sent, AIC_STATUS_NOT_CONNECTED when the connection is
    /// closed (never SIGPIPE) or the broker did not take the frame within 10 s.
    ///
    /// # Safety
    /// `client` must be NULL or a live client; text inputs follow the (pointer, length) contract.
    fn aic_client_send_frame(
        client: *const aic_client,
        frame_json: *const c_char,
        frame_json_len: usize,
    ) {
        // SAFETY: forwarded contract.
        let (client, frame) =
            unsafe { (handle(client)?, text(frame_json, frame_json_len, "frame_json")?) };
        client.send_text(frame)
    }
}

ffi_fn! {
    /// Waits up to `timeout_ms` (0: does not wait) for the broker's next frame. On success
    /// `*out_json` is the frame's JSON text as the broker sent it (release with
    /// aic_string_free), or NULL (and `*out_len` 0) when none arrived in time. A frame that
    /// arrived in part stays buffered for the next call. Fails with AIC_STATUS_NOT_CONNECTED
    /// when the broker closed the connection, AIC_STATUS_INVALID_FRAME for a frame over the
    /// frame limit or not JSON (the connection is closed then: it cannot be resynchronised).
    ///
    /// # Safety
    /// `client` must be NULL or a live client; `out_json` and `out_len` valid for writes
    /// (`out_len` may be NULL).
    fn aic_client_recv_frame(
        client: *const aic_client,
        timeout_ms: u32,
        out_json: *mut *mut c_char,
        out_len: *mut usize,
    ) {
        // SAFETY: forwarded contract.
        let client = unsafe { handle(client)? };
        let slot = out(out_json, "out_json")?;
        match client.recv(Duration::from_millis(u64::from(timeout_ms)))? {
            Some(frame) => owned_string(frame.text, out_json, out_len),
            None => {
                *slot = std::ptr::null_mut();
                if !out_len.is_null() {
                    // SAFETY: non-NULL out-pointer.
                    unsafe { *out_len = 0 };
                }
                Ok(())
            }
        }
    }
}

ffi_fn! {
    /// Closes the connection (the broker sees the session leave). A call waiting in
    /// aic_client_recv_frame on another thread returns AIC_STATUS_NOT_CONNECTED, as does every
    /// later call; the handle stays valid until aic_client_free. Closing twice is harmless.
    ///
    /// # Safety
    /// `client` must be NULL or a live client.
    fn aic_client_close(client: *const aic_client) {
        // SAFETY: forwarded contract.
        unsafe { handle(client)? }.close();
        Ok(())
    }
}

ffi_fn! {
    /// Sends one `access_control` frame on a connection of its own and returns the answer.
    /// `request_json` is the frame without its `type`: {action, adminToken, ...} for the local
    /// socket (issue_enrollment {enrollment: {name, parentSessionId, rootSessionId, remoteHostId,
    /// ttlMs?, expiresAt?, canDelegate?, maxDepth?, maxChildren?}}, revoke_subtree {principalId},
    /// inspect_tree {principalId}, adopt_subtree {principalId, newParentSessionId}; the admin
    /// token is in `<agentDir>/intercom/broker-admin.json`), or {action, access:
    /// {sessionCredential, sessionId, generation}, ...} for the remote gateway
    /// (issue_child_enrollment {enrollment: {name, ttlMs?, ...}}, inspect_tree {principalId?}).
    /// `requestId` is a fresh UUID unless given. On success `*out_json` is the
    /// `access_control_result` frame (its requestId and action those of the request; release
    /// with aic_string_free). Waits up to 10 s for the answer.
    ///
    /// Failures: the broker's refusal as its code and text (AIC_STATUS_ACCESS_DENIED,
    /// AIC_STATUS_INVALID_REQUEST); AIC_STATUS_NOT_CONNECTED, AIC_STATUS_INVALID_FRAME;
    /// AIC_STATUS_INVALID_JSON, AIC_STATUS_INVALID_ARGUMENT or AIC_STATUS_UNKNOWN_KEY for a
    /// request refused before anything is sent.
    ///
    /// # Safety
    /// Text inputs follow the (pointer, length) contract; `out_json` and `out_len` valid for
    /// writes (`out_len` may be NULL).
    fn aic_client_access_control(
        socket_path: *const c_char,
        socket_path_len: usize,
        request_json: *const c_char,
        request_json_len: usize,
        out_json: *mut *mut c_char,
        out_len: *mut usize,
    ) {
        // SAFETY: forwarded contract.
        let (path, request) = unsafe {
            (
                socket_arg(socket_path, socket_path_len)?,
                text(request_json, request_json_len, "request_json")?,
            )
        };
        out(out_json, "out_json")?;
        let request = client::parse_json(request, "request_json")?;
        let result = client::access_control(path, &request, client::ANSWER_TIMEOUT)?;
        owned_string(result.text, out_json, out_len)
    }
}

ffi_fn! {
    /// Closes the connection and releases the client. NULL is a no-op.
    ///
    /// # Safety
    /// `client` must be NULL or a client from aic_client_connect, released at most once, with
    /// no call on it in flight.
    release fn aic_client_free(client: *mut aic_client) {
        // SAFETY: created by Box::into_raw in aic_client_connect.
        drop(unsafe { Box::from_raw(client) });
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;
    use std::ptr;

    use super::*;
    use crate::status::{
        aic_error, aic_error_code, aic_error_free, aic_error_message, aic_string_free,
    };

    /// Runs `call` with an error slot; returns its status and the error's message.
    fn call(mut call: impl FnMut(*mut *mut aic_error) -> ErrorCode) -> (ErrorCode, String) {
        let mut err: *mut aic_error = ptr::null_mut();
        let status = call(&mut err);
        // SAFETY: err is NULL or an error of this library.
        let message = unsafe {
            if err.is_null() {
                String::new()
            } else {
                assert_eq!(aic_error_code(err), status);
                let m = CStr::from_ptr(aic_error_message(err))
                    .to_string_lossy()
                    .into_owned();
                aic_error_free(err);
                m
            }
        };
        (status, message)
    }

    struct Dir(std::path::PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn broker(name: &str) -> (agent_intercom_broker::BrokerHandle, Dir, String) {
        let dir = std::env::temp_dir().join(format!("aicf-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let settings = [("idle_exit_ms", "0"), ("log_level", "off")];
        let config = agent_intercom_broker::embed::config(Some(&dir), None, settings).unwrap();
        let socket = config.socket_path.display().to_string();
        (
            agent_intercom_broker::embed::start(config).unwrap(),
            Dir(dir),
            socket,
        )
    }

    fn connect(socket: &str) -> *mut aic_client {
        let mut c = ptr::null_mut();
        // SAFETY: valid pointers.
        let status = unsafe {
            aic_client_connect(
                socket.as_ptr().cast(),
                socket.len(),
                &mut c,
                ptr::null_mut(),
            )
        };
        assert_eq!(status, ErrorCode::Ok);
        c
    }

    fn owned(s: *mut c_char) -> String {
        assert!(!s.is_null());
        // SAFETY: a string of this library, released once here.
        unsafe {
            let text = CStr::from_ptr(s).to_string_lossy().into_owned();
            aic_string_free(s);
            text
        }
    }

    const SESSION: &str = r#"{"cwd":"/w","model":"m","pid":1,"startedAt":1,"lastActivity":1}"#;

    #[test]
    fn null_and_malformed_arguments_are_refused_before_any_io() {
        let mut c = ptr::null_mut();
        let mut json: *mut c_char = ptr::null_mut();
        let mut len = 0usize;
        let bad_utf8 = [0xffu8, 0xfe];
        // SAFETY: every pointer is NULL or valid for its length; the refusals read nothing else.
        unsafe {
            assert_eq!(
                call(|e| aic_client_connect(ptr::null(), 0, &mut c, e)).0,
                ErrorCode::InvalidArgument
            );
            assert_eq!(
                call(|e| aic_client_connect(ptr::null(), 3, &mut c, e)).0,
                ErrorCode::NullPointer
            );
            assert_eq!(
                call(|e| aic_client_connect(bad_utf8.as_ptr().cast(), 2, &mut c, e)).0,
                ErrorCode::InvalidUtf8
            );
            assert_eq!(
                call(|e| aic_client_connect("/x".as_ptr().cast(), usize::MAX, &mut c, e)).0,
                ErrorCode::InvalidArgument
            );
            let (status, message) = call(|e| {
                aic_client_connect(
                    "/nonexistent/aic.sock".as_ptr().cast(),
                    21,
                    ptr::null_mut(),
                    e,
                )
            });
            assert_eq!(
                (status, message.as_str()),
                (ErrorCode::NullPointer, "out_client is NULL")
            );
            let (status, message) = call(|e| {
                aic_client_connect("/nonexistent/aic.sock".as_ptr().cast(), 21, &mut c, e)
            });
            assert_eq!(status, ErrorCode::NotConnected);
            assert!(message.contains("/nonexistent/aic.sock"), "{message}");
            let long = format!("/tmp/{}", "x".repeat(200));
            assert_eq!(
                call(|e| aic_client_connect(long.as_ptr().cast(), long.len(), &mut c, e)).0,
                ErrorCode::InvalidArgument
            );
            assert!(c.is_null(), "out-parameters are written only on success");

            let req = r#"{"session":{}}"#;
            assert_eq!(
                call(|e| aic_client_register(
                    ptr::null(),
                    req.as_ptr().cast(),
                    req.len(),
                    &mut json,
                    &mut len,
                    e
                ))
                .0,
                ErrorCode::NullPointer
            );
            assert_eq!(
                call(|e| aic_client_send_frame(ptr::null(), req.as_ptr().cast(), req.len(), e)).0,
                ErrorCode::NullPointer
            );
            assert_eq!(
                call(|e| aic_client_recv_frame(ptr::null(), 0, &mut json, &mut len, e)).0,
                ErrorCode::NullPointer
            );
            assert_eq!(
                call(|e| aic_client_close(ptr::null(), e)).0,
                ErrorCode::NullPointer
            );
            aic_client_free(ptr::null_mut());

            let admin = r#"{"adminToken":"t","action":"inspect_tree","principalId":"p"}"#;
            let path = "/nonexistent/aic.sock";
            let ac = |p: &str, r: &[u8], out: *mut *mut c_char, e| {
                aic_client_access_control(
                    p.as_ptr().cast(),
                    p.len(),
                    r.as_ptr().cast(),
                    r.len(),
                    out,
                    ptr::null_mut(),
                    e,
                )
            };
            assert_eq!(
                call(|e| ac("", admin.as_bytes(), &mut json, e)).0,
                ErrorCode::InvalidArgument
            );
            assert_eq!(
                call(|e| ac(path, admin.as_bytes(), ptr::null_mut(), e)).0,
                ErrorCode::NullPointer
            );
            assert_eq!(
                call(|e| ac(path, b"{", &mut json, e)).0,
                ErrorCode::InvalidJson
            );
            assert_eq!(
                call(|e| ac(path, b"", &mut json, e)).0,
                ErrorCode::InvalidJson
            );
            assert_eq!(
                call(|e| ac(path, &bad_utf8, &mut json, e)).0,
                ErrorCode::InvalidUtf8
            );
            assert_eq!(
                call(|e| ac(path, br#"{"action":"x"}"#, &mut json, e)).0,
                ErrorCode::InvalidArgument
            );
            assert_eq!(
                call(|e| ac(
                    path,
                    br#"{"adminToken":"t","action":"x","typo":1}"#,
                    &mut json,
                    e
                ))
                .0,
                ErrorCode::UnknownKey
            );
            assert_eq!(
                call(|e| ac(path, admin.as_bytes(), &mut json, e)).0,
                ErrorCode::NotConnected
            );
            assert!(json.is_null());
        }
    }

    #[test]
    fn register_send_receive_and_close_against_the_broker() {
        let (handle, _dir, socket) = broker("reg");
        let c = connect(&socket);
        let mut json: *mut c_char = ptr::null_mut();
        let mut len = 0usize;
        // SAFETY: `c` is live until freed at the end; every other pointer is valid.
        unsafe {
            let reg = |r: &str, out: *mut *mut c_char, l: *mut usize, e| {
                aic_client_register(c, r.as_ptr().cast(), r.len(), out, l, e)
            };
            // Refused before anything is sent: the connection stays usable.
            assert_eq!(
                call(|e| reg("[", &mut json, &mut len, e)).0,
                ErrorCode::InvalidJson
            );
            assert_eq!(
                call(|e| reg("[]", &mut json, &mut len, e)).0,
                ErrorCode::InvalidArgument
            );
            assert_eq!(
                call(|e| reg(r#"{"session":{},"sessionid":"x"}"#, &mut json, &mut len, e)).0,
                ErrorCode::UnknownKey
            );
            let with_both = format!(
                r#"{{"session":{SESSION},"sessionId":"x","access":{{"enrollmentToken":"t"}}}}"#
            );
            assert_eq!(
                call(|e| reg(&with_both, &mut json, &mut len, e)).0,
                ErrorCode::InvalidArgument
            );
            assert_eq!(
                call(|e| reg(r#"{"session":{}}"#, ptr::null_mut(), &mut len, e)).0,
                ErrorCode::NullPointer
            );
            assert!(json.is_null());

            let request = format!(r#"{{"session":{SESSION},"sessionId":"ffi-a"}}"#);
            assert_eq!(
                call(|e| reg(&request, &mut json, &mut len, e)),
                (ErrorCode::Ok, String::new())
            );
            let registered = owned(json);
            assert_eq!(registered.len(), len);
            assert!(
                registered.contains(r#""registered""#) && registered.contains(r#""ffi-a""#),
                "{registered}"
            );

            // Nothing is due: a zero wait gives no frame.
            json = ptr::dangling_mut();
            len = 7;
            assert_eq!(
                call(|e| aic_client_recv_frame(c, 0, &mut json, &mut len, e)).0,
                ErrorCode::Ok
            );
            assert!(json.is_null() && len == 0);

            let send = |f: &str, e| aic_client_send_frame(c, f.as_ptr().cast(), f.len(), e);
            assert_eq!(call(|e| send("{", e)).0, ErrorCode::InvalidJson);
            assert_eq!(call(|e| send("[]", e)).0, ErrorCode::InvalidArgument);
            assert_eq!(
                call(|e| send(r#"{"type":"list","requestId":"l1"}"#, e)).0,
                ErrorCode::Ok
            );
            assert_eq!(
                call(|e| aic_client_recv_frame(c, 5000, &mut json, ptr::null_mut(), e)).0,
                ErrorCode::Ok
            );
            let sessions = owned(json);
            assert!(
                sessions.contains(r#""sessions""#) && sessions.contains(r#""l1""#),
                "{sessions}"
            );

            // A second register: the broker's refusal as its code and text, then it hangs up.
            let (status, message) = call(|e| reg(&request, &mut json, &mut len, e));
            assert_eq!(
                (status, message.as_str()),
                (
                    ErrorCode::InvalidRequest,
                    "Received duplicate register message"
                )
            );
            let (status, message) =
                call(|e| aic_client_recv_frame(c, 5000, &mut json, &mut len, e));
            assert_eq!(
                (status, message.as_str()),
                (ErrorCode::NotConnected, "the broker closed the connection")
            );
            assert_eq!(
                call(|e| send(r#"{"type":"list","requestId":"l2"}"#, e)).0,
                ErrorCode::NotConnected
            );
            assert_eq!(call(|e| aic_client_close(c, e)).0, ErrorCode::Ok);
            assert_eq!(call(|e| aic_client_close(c, e)).0, ErrorCode::Ok);
            aic_client_free(c);
        }

        // Closing unblocks a reader on another thread.
        let c = connect(&socket);
        let handle_addr = c as usize;
        let reader = std::thread::spawn(move || {
            let mut json: *mut c_char = ptr::null_mut();
            // SAFETY: the client outlives the thread (joined before it is freed).
            call(|e| unsafe {
                aic_client_recv_frame(
                    handle_addr as *const aic_client,
                    60_000,
                    &mut json,
                    ptr::null_mut(),
                    e,
                )
            })
            .0
        });
        std::thread::sleep(Duration::from_millis(100));
        // SAFETY: live client.
        assert_eq!(call(|e| unsafe { aic_client_close(c, e) }).0, ErrorCode::Ok);
        assert_eq!(reader.join().unwrap(), ErrorCode::NotConnected);
        // SAFETY: released once, nothing in flight.
        unsafe { aic_client_free(c) };

        // The current broker refuses access_control with ACCESS_DENIED, as it refuses a wrong
        // token.
        let admin = r#"{"adminToken":"wrong","action":"inspect_tree","principalId":"p"}"#;
        let mut json: *mut c_char = ptr::null_mut();
        // SAFETY: valid pointers.
        let (status, _) = call(|e| unsafe {
            aic_client_access_control(
                socket.as_ptr().cast(),
                socket.len(),
                admin.as_ptr().cast(),
                admin.len(),
                &mut json,
                ptr::null_mut(),
                e,
            )
        });
        assert_eq!(status, ErrorCode::AccessDenied);
        assert!(json.is_null());
        handle.close();
    }
}
