//! Scratchpad benchmark (not a test): post, unread and export latencies against a store of
//! 100,000 live messages across 50 projects and 200 agents, and, in the same run, the approach of
//! rewriting one JSON file per post (written here only for comparison) at 200 and 10,000 messages.
//!
//! cargo run --release --locked -p agent-intercom-scratchpad --example bench [-- --messages N]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use agent_intercom_scratchpad::{Config, NewMessage, Store, SystemClock};
use serde_json::{Value, json};

const PROJECTS: usize = 50;
const AGENTS: usize = 200;

/// A small deterministic generator (xorshift), so runs are comparable.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn project(p: usize) -> String {
    format!("/work/project-{p:02}")
}
fn agent(a: usize) -> String {
    format!("agent-{a:03}")
}
/// Agents are spread over projects: agent a works in project a % 50, in team a % 2.
fn project_of(a: usize) -> usize {
    a % PROJECTS
}

fn message(rng: &mut Rng, from: usize, i: usize) -> NewMessage {
    let roll = rng.below(10);
    let p = project_of(from);
    // 70% public, 20% team, 10% private to an agent of the same project.
    let (privacy, to) = match roll {
        0 => (
            "private",
            Some(agent(p + PROJECTS * rng.below(AGENTS / PROJECTS))),
        ),
        1 | 2 => ("team", None),
        _ => ("public", None),
    };
    NewMessage {
        from: agent(from),
        to,
        category: "note".into(),
        priority: Some(["low", "normal", "normal", "high"][rng.below(4)].into()),
        privacy: Some(privacy.into()),
        content: format!(
            "note {i}: built the parser, tests pass; token=abc{i:08} \
             see /work/project-{p:02}/src/lib.rs"
        ),
        metadata: None,
        task_id: None,
        project_root: Some(project(p)),
        ttl_hours: Some(24),
    }
}

struct Stats(Vec<f64>);
impl Stats {
    fn pct(&mut self, p: f64) -> f64 {
        self.0.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let i = ((self.0.len() as f64 - 1.0) * p).round() as usize;
        self.0[i]
    }
    fn row(&mut self, name: &str) {
        println!(
            "| {name} | {} | {:.3} | {:.3} | {:.3} |",
            self.0.len(),
            self.pct(0.5),
            self.pct(0.99),
            self.pct(1.0)
        );
    }
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed().as_secs_f64() * 1e3)
}

/// The comparison: every post reads the whole JSON file, appends, and rewrites it.
fn json_file_post(path: &Path, m: &NewMessage, i: usize) {
    let mut all: Vec<Value> = match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    all.push(
        json!({"id": format!("m{i}"), "from": m.from, "to": m.to, "privacy": m.privacy,
        "content": m.content, "project_root": m.project_root, "created_at": i}),
    );
    std::fs::write(path, serde_json::to_vec(&all).unwrap()).unwrap();
}

fn json_file_read(path: &Path, reader: &str) -> usize {
    let all: Vec<Value> = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    all.iter()
        .filter(|m| m["to"].is_null() || m["to"] == reader)
        .count()
}

fn main() {
    let mut total = 100_000usize;
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--messages") {
        total = args[i + 1].parse().expect("--messages N");
    }
    let dir: PathBuf = std::env::temp_dir().join(format!("aic-pad-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = Config {
        per_project_cap: total,
        ..Config::default()
    };
    let mut store = Store::open(&dir.join("pad.sqlite"), config, Arc::new(SystemClock)).unwrap();
    for a in 0..AGENTS {
        let team = if a % 2 == 0 { "red" } else { "blue" };
        store
            .register_agent(&agent(a), Some(&project(project_of(a))), Some(team))
            .unwrap();
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut fill = Stats(Vec::with_capacity(total));
    let (_, fill_ms) = timed(|| {
        for i in 0..total {
            let from = rng.below(AGENTS);
            let m = message(&mut rng, from, i);
            let (_, ms) = timed(|| store.post(&m).unwrap());
            fill.0.push(ms);
        }
    });
    println!(
        "store: {total} live messages, {PROJECTS} projects, {AGENTS} agents; \
         filled in {:.1} s ({:.3} ms/post average)\n",
        fill_ms / 1e3,
        fill_ms / total as f64
    );
    // First unread of every agent: the catch-up read of everything visible in its project.
    let mut catch_up = Stats(Vec::new());
    let mut delivered = 0;
    for a in 0..AGENTS {
        let (got, ms) = timed(|| {
            store
                .read_unread(&agent(a), Some(&project(project_of(a))))
                .unwrap()
        });
        delivered += got.len();
        catch_up.0.push(ms);
    }
    // Steady state: one new post, then the unread of an agent of that project.
    let mut post = Stats(Vec::new());
    let mut unread = Stats(Vec::new());
    for i in 0..2_000 {
        let from = rng.below(AGENTS);
        let m = message(&mut rng, from, total + i);
        let (_, ms) = timed(|| store.post(&m).unwrap());
        post.0.push(ms);
        let reader = project_of(from) + PROJECTS * rng.below(AGENTS / PROJECTS);
        let (_, ms) = timed(|| {
            store
                .read_unread(&agent(reader), Some(&project(project_of(reader))))
                .unwrap()
        });
        unread.0.push(ms);
    }
    let mut export = Stats(Vec::new());
    for _ in 0..200 {
        let a = rng.below(AGENTS);
        let (text, ms) = timed(|| {
            store
                .export(&agent(a), Some(&project(project_of(a))), 200, false)
                .unwrap()
        });
        assert!(text.len() > 2);
        export.0.push(ms);
    }
    println!("| operation (SQLite store, {total} live) | samples | p50 ms | p99 ms | max ms |");
    println!("|---|---:|---:|---:|---:|");
    post.row("post");
    fill.row(&format!("post while filling (0 to {total} live)"));
    unread.row("unread (after one new post)");
    catch_up.row(&format!(
        "first unread per agent (catch-up, {} messages avg)",
        delivered / AGENTS
    ));
    export.row("export newest 200 (redacted)");

    println!(
        "\n| JSON file rewritten per post (comparison) | samples | p50 ms | p99 ms | max ms |"
    );
    println!("|---|---:|---:|---:|---:|");
    for size in [200usize, 10_000] {
        let path = dir.join(format!("pad-{size}.json"));
        let mut rng = Rng(7);
        // Filled in memory and written once; only the measured posts rewrite the file.
        let all: Vec<Value> = (0..size)
            .map(|i| {
                let from = rng.below(AGENTS);
                let m = message(&mut rng, from, i);
                json!({"id": format!("m{i}"), "from": m.from, "to": m.to, "privacy": m.privacy,
                    "content": m.content, "project_root": m.project_root, "created_at": i})
            })
            .collect();
        std::fs::write(&path, serde_json::to_vec(&all).unwrap()).unwrap();
        let mut post = Stats(Vec::new());
        let mut read = Stats(Vec::new());
        for i in 0..200 {
            let from = rng.below(AGENTS);
            let m = message(&mut rng, from, size + i);
            let (_, ms) = timed(|| json_file_post(&path, &m, size + i));
            post.0.push(ms);
            let (_, ms) = timed(|| json_file_read(&path, &agent(from)));
            read.0.push(ms);
        }
        post.row(&format!("post at {size} messages"));
        read.row(&format!("read at {size} messages"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
