//! `cargo bench -p agent-intercom-core`: wall-clock medians of the core's hot functions, for Rust
//! and C users (the C ABI adds a few nanoseconds of argument checks). Not a test.

use std::hint::black_box;
use std::time::Instant;

use agent_intercom_core::routing::{self, Session};
use agent_intercom_core::scope::{self, ScopeId};
use agent_intercom_core::{canonical, corpus, protocol};

fn median_ns(mut f: impl FnMut()) -> f64 {
    let mut batch = 1u32;
    loop {
        let t = Instant::now();
        for _ in 0..batch {
            f();
        }
        if t.elapsed().as_millis() >= 10 || batch >= 1 << 24 {
            break;
        }
        batch *= 2;
    }
    let mut samples: Vec<f64> = (0..15)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..batch {
                f();
            }
            t.elapsed().as_nanos() as f64 / batch as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn show(name: &str, ns: f64) {
    let text = if ns >= 1000.0 {
        format!("{:.1} µs", ns / 1000.0)
    } else {
        format!("{ns:.1} ns")
    };
    println!("| {name} | {text} |");
}

fn main() {
    let doc = canonical::parse(corpus::CORPUS_JSON).unwrap();
    let compact = canonical::canonical_json(&doc).unwrap();
    let a = ScopeId::parse(protocol::SCOPE_A);
    let names = ["alpha", "worker", "worker", "prefix-one", "prefix-two"];
    let ids: Vec<String> = (0..1000)
        .map(|i| format!("{i:08x}-aaaa-4aaa-8aaa-aaaaaaaaaaaa"))
        .collect();
    let sessions: Vec<Session<'_>> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| Session {
            id,
            name: Some(names[i % 5]),
            scope: if i % 2 == 0 { a } else { None },
        })
        .collect();

    println!("| function | median |");
    println!("| --- | ---: |");
    show(
        "parse_scope (valid)",
        median_ns(|| {
            black_box(scope::parse_scope(black_box(Some(protocol::SCOPE_A)), "scopeId").is_ok());
        }),
    );
    show(
        "parse_scope (invalid)",
        median_ns(|| {
            black_box(scope::parse_scope(black_box(Some("bad scope")), "scopeId").is_err());
        }),
    );
    show(
        "resolve_target, exact id among 1,000",
        median_ns(|| {
            black_box(routing::resolve_target(a, black_box(&ids[999]), &sessions));
        }),
    );
    show(
        "resolve_target, name among 1,000 (ambiguous)",
        median_ns(|| {
            black_box(routing::resolve_target(a, black_box("worker"), &sessions));
        }),
    );
    show(
        "audience among 1,000",
        median_ns(|| {
            black_box(routing::audience(
                routing::AudienceEvent::PresenceUpdate,
                &ids[0],
                a,
                &sessions,
            ));
        }),
    );
    show(
        "canonical_json_of_text (corpus, 38 KB)",
        median_ns(|| {
            black_box(canonical::canonical_json_of_text(black_box(&compact)).unwrap());
        }),
    );
    show(
        "canonical_hash_of_text (corpus)",
        median_ns(|| {
            black_box(canonical::canonical_hash_of_text("d", black_box(&compact)).unwrap());
        }),
    );
    show(
        "canonical_hash_of_text {\"b\":2,\"a\":1}",
        median_ns(|| {
            black_box(
                canonical::canonical_hash_of_text("boss-test-v1", black_box(r#"{"b":2,"a":1}"#))
                    .unwrap(),
            );
        }),
    );
    show(
        "semantics_hash_of (parsed corpus)",
        median_ns(|| {
            black_box(corpus::semantics_hash_of(black_box(&doc)).unwrap());
        }),
    );
}
