//! What the store tests share: a clock the test sets, a throwaway directory, small constructors.
#![allow(dead_code)] // each test file uses its own part of it

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use agent_intercom_scratchpad::{Clock, Config, NewMessage, Store};

pub struct ManualClock(pub AtomicI64);

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

pub struct Tmp(pub PathBuf);

impl Tmp {
    pub fn new(name: &str) -> Tmp {
        static N: AtomicI64 = AtomicI64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "aic-pad-{}-{}-{name}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Tmp(dir)
    }
    pub fn db(&self) -> PathBuf {
        self.0.join("pad.sqlite")
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn open(tmp: &Tmp, clock: &Arc<ManualClock>, config: Config) -> Store {
    Store::open(&tmp.db(), config, clock.clone()).unwrap()
}

pub fn msg(from: &str, content: &str) -> NewMessage {
    NewMessage {
        from: from.into(),
        category: "note".into(),
        content: content.into(),
        ..NewMessage::default()
    }
}

pub fn ids(messages: &[agent_intercom_scratchpad::Message]) -> Vec<String> {
    messages.iter().map(|m| m.content.clone()).collect()
}
