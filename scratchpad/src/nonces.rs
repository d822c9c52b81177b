//! Replay protection: the nonces of signed envelopes and signed requests, kept until the
//! signature they came with expires.

use agent_intercom_core::{Error, ErrorCode};
use rusqlite::params;

use crate::{Store, io};

/// Longest nonce or key id kept (longer ones are refused, not truncated).
pub const MAX_NONCE_BYTES: usize = 256;

impl Store {
    /// Records `nonce` as seen for `key_id` in `scope` until `expires_at_ms`, in one write
    /// transaction that first forgets nonces whose signature has expired. Answers `Ok(())` the
    /// first time and `REPLAYED` for a nonce already held; a nonce past its expiry is not stored
    /// (`SIGNATURE_EXPIRED`: its signature cannot be accepted anyway).
    pub fn remember_nonce(
        &mut self,
        scope: &str,
        key_id: &str,
        nonce: &str,
        expires_at_ms: i64,
    ) -> Result<(), Error> {
        for (what, value) in [("scope", scope), ("key id", key_id), ("nonce", nonce)] {
            if value.is_empty() || value.len() > MAX_NONCE_BYTES {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    format!("the {what} must be 1 to {MAX_NONCE_BYTES} bytes"),
                ));
            }
        }
        let now = self.clock.now_ms();
        if expires_at_ms <= now {
            return Err(Error::new(
                ErrorCode::SignatureExpired,
                "the signature carrying this nonce has expired",
            ));
        }
        let tx = self.write()?;
        tx.execute(
            "DELETE FROM seen_nonces WHERE expires_at <= ?1",
            params![now],
        )
        .map_err(io)?;
        let inserted = tx
            .execute(
                "INSERT INTO seen_nonces (scope, key_id, nonce, expires_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT DO NOTHING",
                params![scope, key_id, nonce, expires_at_ms],
            )
            .map_err(io)?;
        tx.commit().map_err(io)?;
        if inserted == 0 {
            return Err(Error::new(
                ErrorCode::Replayed,
                format!("nonce already seen for key {key_id}: a replay, refused"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicI64, Ordering};

    use super::*;
    use crate::{Clock, Config};

    struct Manual(AtomicI64);
    impl Clock for Manual {
        fn now_ms(&self) -> i64 {
            self.0.load(Ordering::SeqCst)
        }
    }

    #[test]
    fn a_nonce_is_accepted_once_until_it_expires() {
        let dir = std::env::temp_dir().join(format!("aic-nonce-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let clock = Arc::new(Manual(AtomicI64::new(1_000)));
        let mut store = Store::open(&dir.join("pad.db"), Config::default(), clock.clone()).unwrap();
        store.remember_nonce("envelope", "k1", "n1", 5_000).unwrap();
        let again = store
            .remember_nonce("envelope", "k1", "n1", 5_000)
            .unwrap_err();
        assert_eq!(again.code(), ErrorCode::Replayed);
        // Another key or scope is another namespace.
        store.remember_nonce("envelope", "k2", "n1", 5_000).unwrap();
        store.remember_nonce("http", "k1", "n1", 5_000).unwrap();
        // Past expiry: refused as expired, and the old entry is forgotten by the next write.
        let late = store
            .remember_nonce("envelope", "k1", "n9", 1_000)
            .unwrap_err();
        assert_eq!(late.code(), ErrorCode::SignatureExpired);
        clock.0.store(6_000, Ordering::SeqCst);
        store.remember_nonce("envelope", "k1", "n1", 9_000).unwrap();
        let empty = store
            .remember_nonce("envelope", "", "n", 9_000)
            .unwrap_err();
        assert_eq!(empty.code(), ErrorCode::InvalidArgument);
        let long = "x".repeat(MAX_NONCE_BYTES + 1);
        let too_long = store
            .remember_nonce("envelope", "k", &long, 9_000)
            .unwrap_err();
        assert_eq!(too_long.code(), ErrorCode::InvalidArgument);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
