//! Test-only fault points and clock. A build with the `fault-injection` feature reads
//! `AGENT_INTERCOM_LINE_FAULT=<point>:<mode>` and `AGENT_INTERCOM_LINE_TEST_NOW=<unix ms>`; a
//! build without it refuses to start when either is set, so a production binary can never be
//! told to misbehave.

use std::ffi::OsString;

use crate::{Code, LineError};

/// The variable naming one fault point and its mode.
pub const FAULT_ENV: &str = "AGENT_INTERCOM_LINE_FAULT";
/// The variable fixing the clock (UNIX milliseconds).
pub const TEST_NOW_ENV: &str = "AGENT_INTERCOM_LINE_TEST_NOW";
/// The fault points, in the order a submit meets them: the intent commit, the claim (the
/// ledger's charge) commit, just after it (before any send), just after the whole request was
/// written (before the response is read), the outcome commit; `cancel`'s adoption-closing
/// commit and just after it; and the persisting commit of each authority mutation. `abort` is
/// meaningful at every point (at a commit: before it commits); the two uncertain modes at the
/// commits only (elsewhere they do nothing). In the native lab, `run-adopted` is just after
/// the adopted checkpoint commits, and at `worker` an uncertain mode makes the worker fail.
pub const POINTS: &[&str] = &[
    "intent-commit",
    "ledger-commit",
    "after-claim-before-send",
    "after-send-before-response",
    "outcome-commit",
    "cancel-close",
    "after-cancel-close",
    "enroll-commit",
    "rotate-commit",
    "revoke-commit",
    "run-adopted",
    "worker",
];

/// What happens at a fault point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The commit happens, then an error is reported (the commit "looks" failed).
    UncertainCommitted,
    /// The commit does not happen, and an error is reported.
    UncertainAbsent,
    /// The process dies at once (`abort`), as in a crash.
    Abort,
}

impl Mode {
    fn from_name(name: &str) -> Option<Mode> {
        match name {
            "uncertain-committed" => Some(Mode::UncertainCommitted),
            "uncertain-absent" => Some(Mode::UncertainAbsent),
            "abort" => Some(Mode::Abort),
            _ => None,
        }
    }
}

/// The faults and clock of this process (none, in a build without the feature).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Faults {
    point: Option<(&'static str, Mode)>,
    now_ms: Option<i64>,
}

impl Faults {
    /// No fault, the real clock.
    pub fn none() -> Faults {
        Faults::default()
    }

    /// The faults the environment asks for; refused in a build without fault injection.
    pub fn from_env(env: &dyn Fn(&str) -> Option<OsString>) -> Result<Faults, LineError> {
        let fault = env(FAULT_ENV);
        let now = env(TEST_NOW_ENV);
        if !cfg!(feature = "fault-injection") {
            if fault.is_some() || now.is_some() {
                return Err(LineError::new(
                    Code::FaultInjectionUnavailable,
                    format!("{FAULT_ENV} and {TEST_NOW_ENV} exist only in a fault-injection build"),
                ));
            }
            return Ok(Faults::none());
        }
        let text = |v: Option<OsString>, name: &str| -> Result<Option<String>, LineError> {
            v.map(|v| {
                v.into_string()
                    .map_err(|_| LineError::new(Code::Usage, format!("{name} must be UTF-8")))
            })
            .transpose()
        };
        Faults::parse(
            text(fault, FAULT_ENV)?.as_deref(),
            text(now, TEST_NOW_ENV)?.as_deref(),
        )
    }

    /// Faults from their text forms (`point:mode`, UNIX milliseconds).
    pub fn parse(fault: Option<&str>, now: Option<&str>) -> Result<Faults, LineError> {
        let bad = |what: String| Err(LineError::new(Code::Usage, what));
        let point = match fault {
            None => None,
            Some(text) => {
                let (point, mode) = text.split_once(':').unwrap_or((text, ""));
                let Some(point) = POINTS.iter().copied().find(|p| *p == point) else {
                    return bad(format!("{FAULT_ENV}: no fault point {point:?}"));
                };
                let Some(mode) = Mode::from_name(mode) else {
                    return bad(format!("{FAULT_ENV}: no mode {mode:?}"));
                };
                Some((point, mode))
            }
        };
        let now_ms = match now {
            None => None,
            Some(text) => match text.parse::<i64>() {
                Ok(ms) if ms >= 0 => Some(ms),
                _ => return bad(format!("{TEST_NOW_ENV} must be UNIX milliseconds")),
            },
        };
        Ok(Faults { point, now_ms })
    }

    /// The mode set for `point`, if this is the point.
    pub fn at(&self, point: &str) -> Option<Mode> {
        self.point.filter(|(p, _)| *p == point).map(|(_, m)| m)
    }

    /// Commits `tx` under the fault point `point`: `abort` dies before the commit,
    /// `uncertain-absent` drops it, `uncertain-committed` commits it; both uncertain modes, and a
    /// COMMIT that fails (it may still have reached the disk), answer `uncertain()`.
    pub fn commit(
        &self,
        tx: rusqlite::Transaction<'_>,
        point: &str,
        uncertain: impl Fn() -> LineError,
    ) -> Result<(), LineError> {
        match self.at(point) {
            Some(Mode::Abort) => std::process::abort(),
            Some(Mode::UncertainAbsent) => {
                drop(tx);
                Err(uncertain())
            }
            Some(Mode::UncertainCommitted) => {
                let _ = tx.commit();
                Err(uncertain())
            }
            None => tx.commit().map_err(|_| uncertain()),
        }
    }

    /// Dies here when `point` is set to `abort` (a crash between two steps).
    pub fn crash_at(&self, point: &str) {
        if self.at(point) == Some(Mode::Abort) {
            std::process::abort();
        }
    }

    /// The time, UNIX milliseconds (the test clock when one is set).
    pub fn now_ms(&self) -> i64 {
        self.now_ms.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_names_points_and_modes() {
        let f = Faults::parse(Some("ledger-commit:abort"), Some("1000")).unwrap();
        assert_eq!(f.at("ledger-commit"), Some(Mode::Abort));
        assert_eq!(f.at("after-claim-before-send"), None);
        assert_eq!(f.now_ms(), 1000);
        for bad in ["nowhere:abort", "ledger-commit:explode", "ledger-commit"] {
            assert_eq!(
                Faults::parse(Some(bad), None).unwrap_err().code,
                Code::Usage,
                "{bad}"
            );
        }
        assert!(Faults::parse(None, Some("-1")).is_err());
    }

    #[cfg(not(feature = "fault-injection"))]
    #[test]
    fn a_build_without_fault_injection_refuses_the_variables() {
        for var in [FAULT_ENV, TEST_NOW_ENV] {
            let env = |name: &str| (name == var).then(|| OsString::from("ledger-commit:abort"));
            let err = Faults::from_env(&env).unwrap_err();
            assert_eq!(err.code, Code::FaultInjectionUnavailable);
        }
        assert_eq!(Faults::from_env(&|_| None).unwrap(), Faults::none());
    }
}
