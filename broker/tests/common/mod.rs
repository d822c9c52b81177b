//! A raw-frame client and a throwaway broker for the wire tests.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent_intercom_broker::{BrokerConfig, BrokerHandle};
use serde_json::{Value, json};

pub const A: &str = "Scope_AAAAAAAAAA";
pub const B: &str = "Scope_BBBBBBBBBB";

pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        // Short paths: a Unix socket path is limited to about 100 bytes.
        let dir = std::env::temp_dir().join(format!("aicb-{}-{n}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn config(dir: &Path) -> BrokerConfig {
    let mut config = BrokerConfig::for_agent_dir(dir);
    config.idle_exit = None;
    config.log_level = agent_intercom_broker::LogLevel::Off;
    config
}

pub struct Broker {
    pub handle: Option<BrokerHandle>,
    pub dir: TempDir,
    pub socket: PathBuf,
}

impl Broker {
    pub fn start(name: &str) -> Broker {
        Broker::start_with(name, |_| {})
    }

    pub fn start_with(name: &str, adjust: impl FnOnce(&mut BrokerConfig)) -> Broker {
        let dir = TempDir::new(name);
        let mut c = config(&dir.0);
        adjust(&mut c);
        let socket = c.socket_path.clone();
        let handle = agent_intercom_broker::start(c).expect("broker starts");
        Broker {
            handle: Some(handle),
            dir,
            socket,
        }
    }

    pub fn connect(&self) -> Client {
        Client::connect(&self.socket)
    }

    pub fn restart(&mut self) {
        self.handle.take().expect("running").close();
        let c = config(&self.dir.0);
        self.handle = Some(agent_intercom_broker::start(c).expect("broker restarts"));
    }
}

pub struct Client {
    pub stream: UnixStream,
    /// Every frame received, in order.
    pub seen: Vec<Value>,
    /// Frames skipped by `expect` that a later `expect` may still claim.
    pub unclaimed: std::collections::VecDeque<Value>,
    pub id: String,
    /// The bytes of the last frame received, as the broker wrote them.
    pub last_raw: Vec<u8>,
}

impl Client {
    pub fn connect(path: &Path) -> Client {
        let stream = UnixStream::connect(path).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        Client {
            stream,
            seen: Vec::new(),
            unclaimed: Default::default(),
            id: String::new(),
            last_raw: Vec::new(),
        }
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    pub fn send(&mut self, value: Value) {
        let body = serde_json::to_vec(&value).unwrap();
        let mut frame = (body.len() as u32).to_be_bytes().to_vec();
        frame.extend_from_slice(&body);
        let _ = self.stream.write_all(&frame);
    }

    /// The next frame, or None on a clean close.
    pub fn recv_opt(&mut self, timeout: Duration) -> Option<Value> {
        self.stream.set_read_timeout(Some(timeout)).unwrap();
        let mut header = [0u8; 4];
        match self.stream.read_exact(&mut header) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return None,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return None;
            }
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return None,
            Err(e) => panic!("read: {e}"),
        }
        let mut body = vec![0u8; u32::from_be_bytes(header) as usize];
        self.stream.read_exact(&mut body).unwrap();
        // As JavaScript parses it: lone surrogates included.
        let value: Value = agent_intercom_broker::jstext::parse_frame(&body).unwrap();
        self.last_raw = body;
        self.seen.push(value.clone());
        Some(value)
    }

    pub fn recv(&mut self) -> Value {
        self.recv_opt(Duration::from_secs(5)).expect("a frame")
    }

    /// The first unclaimed frame of this type (frames of other types stay unclaimed).
    pub fn expect(&mut self, kind: &str) -> Value {
        if let Some(at) = self.unclaimed.iter().position(|v| v["type"] == kind) {
            return self.unclaimed.remove(at).expect("found");
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self
                .recv_opt(left)
                .unwrap_or_else(|| panic!("no {kind} frame; saw {:?}", self.seen));
            if v["type"] == kind {
                return v;
            }
            self.unclaimed.push_back(v);
        }
    }

    /// True when the broker closed the connection (after any frames still in flight).
    pub fn closed(&mut self) -> bool {
        for _ in 0..100 {
            if self.recv_opt(Duration::from_millis(200)).is_none() {
                let mut byte = [0u8; 1];
                self.stream
                    .set_read_timeout(Some(Duration::from_millis(200)))
                    .unwrap();
                return matches!(self.stream.read(&mut byte), Ok(0) | Err(_));
            }
        }
        false
    }

    /// No frame arrives within `wait`.
    pub fn quiet(&mut self, wait: Duration) -> bool {
        self.recv_opt(wait).is_none()
    }

    pub fn register_with(
        &mut self,
        session_id: Option<&str>,
        name: &str,
        scope: Option<&str>,
        runtime: &str,
    ) -> Value {
        let mut frame = json!({
            "type": "register",
            "protocol": "pi-intercom",
            "version": 4,
            "session": {
                "cwd": "/work", "model": "test-model", "pid": 4242, "startedAt": 1700000000000u64,
                "lastActivity": 1700000000000u64, "name": name, "runtimeInstanceId": runtime,
            },
        });
        if let Some(id) = session_id {
            frame["sessionId"] = json!(id);
        }
        if let Some(scope) = scope {
            frame["scopeId"] = json!(scope);
        }
        self.send(frame);
        let reply = self.recv();
        if reply["type"] == "registered" {
            self.id = reply["sessionId"].as_str().unwrap().to_string();
        }
        reply
    }

    pub fn register(&mut self, name: &str, scope: Option<&str>) -> String {
        let reply = self.register_with(None, name, scope, &format!("rt-{name}-{}", uuid_like()));
        assert_eq!(reply["type"], "registered", "{reply}");
        self.id.clone()
    }

    pub fn send_message(&mut self, to: &str, id: &str, text: &str) {
        self.send(json!({
            "type": "send",
            "to": to,
            "message": { "id": id, "timestamp": 1, "content": { "text": text } },
        }));
    }
}

pub fn uuid_like() -> String {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    )
}

pub fn error_frame(code: &str) -> impl Fn(&Value) -> bool + '_ {
    move |v| v["type"] == "error" && v["code"] == code
}
