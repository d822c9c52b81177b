//! `AIC_VECTOR=<substring>`: a vector runner runs only the cases whose id (or name) contains the
//! substring, and counts the others as filtered, so one vector reruns alone:
//!
//! ```text
//! AIC_VECTOR=ask/mutual cargo nextest run -p agent-intercom-core --test asks_vectors --no-capture
//! ```
//!
//! One copy, included by every Rust vector runner (core, broker and scratchpad tests) with
//! `#[path = ".../core/tests/support/vector_filter.rs"] mod vector_filter;`. The C runners
//! (`tests/c/support.h`) and the Node runners (`tests/node/helpers.js`) read the same variable.
#![allow(dead_code)] // each runner uses part of it

/// The environment variable.
pub const VAR: &str = "AIC_VECTOR";

/// Which cases run.
#[derive(Clone, Debug, Default)]
pub struct Filter(Option<String>);

impl Filter {
    /// The filter `AIC_VECTOR` sets; unset or empty runs every case.
    pub fn from_env() -> Filter {
        let value = std::env::var_os(VAR).map(|v| {
            v.into_string()
                .unwrap_or_else(|v| panic!("{VAR}={v:?} is not Unicode"))
        });
        Filter(value.filter(|v| !v.is_empty()))
    }

    /// Every case, whatever the environment (the runners' self-tests, which count exactly).
    pub fn none() -> Filter {
        Filter(None)
    }

    /// The cases whose id contains `part` (what `AIC_VECTOR=part` selects).
    pub fn matching(part: &str) -> Filter {
        Filter(Some(part.to_string()).filter(|p| !p.is_empty()))
    }

    /// True when some cases may be filtered out.
    pub fn active(&self) -> bool {
        self.0.is_some()
    }

    /// Whether the case with this id (or name) runs.
    pub fn selects(&self, id: &str) -> bool {
        self.0.as_deref().is_none_or(|part| id.contains(part))
    }
}

/// What a runner did with the cases of one file: every case is executed, skipped (a kind this
/// runner cannot express, with a reason) or filtered (by `AIC_VECTOR`), nothing else.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Cases in the file.
    pub total: usize,
    /// Cases run.
    pub executed: usize,
    /// Cases this runner does not run.
    pub skipped: usize,
    /// Cases `AIC_VECTOR` left out.
    pub filtered: usize,
}

impl Counts {
    /// No case seen yet of a file of `total`.
    pub fn new(total: usize) -> Counts {
        Counts {
            total,
            ..Counts::default()
        }
    }

    /// Prints `file: N cases, E executed, S skipped, F filtered` and fails unless every case was
    /// executed, skipped or filtered.
    pub fn report(&self, file: &str, filter: &Filter) {
        let filtered = match &filter.0 {
            Some(part) => format!(", {} filtered ({VAR}={part})", self.filtered),
            None => String::new(),
        };
        println!(
            "{file}: {} cases, {} executed, {} skipped{filtered}",
            self.total, self.executed, self.skipped
        );
        if filter.active() && self.filtered == self.total {
            println!("  {VAR} matches no case of {file}");
        }
        assert!(
            filter.active() || self.filtered == 0,
            "{file}: filtered without a filter"
        );
        assert_eq!(
            self.executed + self.skipped + self.filtered,
            self.total,
            "{file}: some case was neither executed, skipped nor filtered"
        );
    }
}
