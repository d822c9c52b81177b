//! `agent-intercom pad` as real processes against one SQLite store: concurrency, crashes,
//! full and read-only disks, bad input.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

struct Tmp(PathBuf);

impl Tmp {
    fn new(name: &str) -> Tmp {
        let dir = std::env::temp_dir().join(format!("aic-padcli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Tmp(dir)
    }
    fn db(&self) -> PathBuf {
        self.0.join("pad.sqlite")
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const BIG: &str = r#"{"per_project_cap":1000000,"per_recipient_cap":1000000}"#;

fn pad(db: &Path, args: &[&str]) -> (i32, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_agent-intercom"))
        .arg("pad")
        .arg("--db")
        .arg(db)
        .args(["--config", BIG])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let value = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    (
        out.status.code().unwrap_or(-1),
        value,
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A `pad --stdin` process.
fn lines_process(db: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_agent-intercom"))
        .arg("pad")
        .arg("--db")
        .arg(db)
        .args(["--config", BIG])
        .arg("--stdin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Sends `requests` (one JSON line each) to a `pad --stdin` process, writing from a second
/// thread so neither pipe can fill up, and returns its answers; the process must exit 0.
fn converse(mut child: Child, requests: Vec<String>) -> Vec<Value> {
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        for request in requests {
            writeln!(stdin, "{request}").unwrap();
        }
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(
        out.status.success(),
        "pad --stdin exited with {}",
        out.status
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn count(db: &Path, agent: &str) -> usize {
    listed(db, agent).len()
}

/// Every id `agent` can list, through all pages.
fn listed(db: &Path, agent: &str) -> HashSet<String> {
    let mut ids = HashSet::new();
    let mut after: Option<String> = None;
    loop {
        let mut args = json!({"agent": agent, "limit": 1000});
        if let Some(a) = &after {
            args["after"] = json!(a);
        }
        let (code, page, err) = pad(db, &["list", &args.to_string()]);
        assert_eq!(code, 0, "{err}");
        for m in page["messages"].as_array().unwrap() {
            assert!(
                ids.insert(m["id"].as_str().unwrap().to_string()),
                "listed twice: {m}"
            );
        }
        match page["next"].as_str() {
            Some(next) => after = Some(next.to_string()),
            None => return ids,
        }
    }
}

fn ids_of(result: &Value) -> Vec<String> {
    result
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn four_processes_post_and_read_10000_each_losing_nothing_reading_each_once() {
    const PER: usize = 10_000;
    let tmp = Tmp::new("concurrent");
    let db = tmp.db();
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                let agent = format!("agent-{w}");
                let mut requests = Vec::new();
                for i in 0..PER {
                    requests.push(
                        json!({
                            "op": "post",
                            "args": {"from": agent, "content": format!("{agent} #{i}")},
                        })
                        .to_string(),
                    );
                    if i % 50 == 49 {
                        requests
                            .push(json!({"op": "unread", "args": {"agent": agent}}).to_string());
                    }
                }
                let mut posted = Vec::new();
                let mut read = Vec::new();
                for response in converse(lines_process(&db), requests) {
                    assert_eq!(response["ok"], true, "{response}");
                    let result = &response["result"];
                    if result.is_array() {
                        read.extend(ids_of(result));
                    } else {
                        posted.push(result["id"].as_str().unwrap().to_string());
                    }
                }
                (posted, read)
            })
        })
        .collect();
    let results: Vec<(Vec<String>, Vec<String>)> =
        workers.into_iter().map(|w| w.join().unwrap()).collect();
    let all: HashSet<&String> = results.iter().flat_map(|(p, _)| p).collect();
    assert_eq!(all.len(), 4 * PER, "every post got its own id");
    for (w, (_, read)) in results.iter().enumerate() {
        // What was not yet read while posting is read now, once.
        let (code, rest, err) = pad(
            &db,
            &[
                "unread",
                &json!({"agent": format!("agent-{w}")}).to_string(),
            ],
        );
        assert_eq!(code, 0, "{err}");
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let rest = ids_of(&rest);
        for id in read.iter().chain(rest.iter()) {
            *seen.entry(id.as_str()).or_default() += 1;
        }
        assert_eq!(seen.len(), 4 * PER, "agent-{w} saw every visible message");
        assert!(
            seen.values().all(|&n| n == 1),
            "agent-{w} read a message twice"
        );
        assert!(seen.keys().all(|id| all.contains(&id.to_string())));
    }
    assert_eq!(
        count(&db, "someone-else"),
        4 * PER,
        "nothing lost in the store"
    );
}

#[test]
fn four_processes_recording_costs_lose_no_update() {
    const PER: u64 = 2_000;
    let tmp = Tmp::new("costs");
    let db = tmp.db();
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let db = db.clone();
            std::thread::spawn(move || {
                let requests = (0..PER)
                    .map(|i| {
                        let tool = if i % 2 == 0 { "read" } else { "edit" };
                        json!({
                            "op": "cost.record",
                            "args": {
                                "agent": "shared",
                                "tool": tool,
                                "input_tokens": 10 + w,
                                "output_tokens": 1,
                                "cached_tokens": 2,
                                "pricing": {
                                    "input_per_million_micros": 3_000_000,
                                    "output_per_million_micros": 15_000_000,
                                },
                            },
                        })
                        .to_string()
                    })
                    .collect();
                let responses = converse(lines_process(&db), requests);
                assert_eq!(
                    responses.iter().filter(|r| r["ok"] == true).count() as u64,
                    PER
                );
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let (code, costs, err) = pad(&db, &["cost.list"]);
    assert_eq!(code, 0, "{err}");
    let costs = costs.as_array().unwrap();
    assert_eq!(costs.len(), 2, "{costs:?}");
    let total = |k: &str| costs.iter().map(|c| c[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(total("calls"), 4 * PER);
    // Each process w sent 10 + w input tokens per call.
    assert_eq!(total("input_tokens"), (10 + 11 + 12 + 13) * PER);
    assert_eq!(total("output_tokens"), 4 * PER);
    assert_eq!(total("cached_tokens"), 2 * 4 * PER);
    // Per call: (10+w) * 3 + 1 * 15 micros.
    assert_eq!(
        total("cost_micros"),
        ((10 + 11 + 12 + 13) * 3 + 4 * 15) * PER
    );
}

#[test]
fn a_writer_killed_mid_transaction_loses_no_acknowledged_message() {
    let tmp = Tmp::new("kill9");
    let db = tmp.db();
    for round in 0..3 {
        let mut child = lines_process(&db);
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            for i in 0.. {
                let post = json!({
                    "op": "post",
                    "args": {"from": "w", "content": format!("r{round} #{i} {}", "x".repeat(500))},
                });
                if writeln!(stdin, "{post}").is_err() {
                    return;
                }
            }
        });
        let mut acked = Vec::new();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        while acked.len() < 300 + round * 97 {
            let response: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
            acked.push(response["result"]["id"].as_str().unwrap().to_string());
        }
        // SIGKILL while the process is busy posting.
        child.kill().unwrap();
        child.wait().unwrap();
        writer.join().unwrap();
        // listed() asserts the store opens and lists after kill -9.
        let stored = listed(&db, "reader");
        for id in &acked {
            assert!(stored.contains(id), "round {round}: acknowledged {id} lost");
        }
    }
}

#[test]
fn a_full_disk_refuses_with_store_io_and_keeps_what_was_committed() {
    let tmp = Tmp::new("full");
    let db = tmp.db();
    let (code, _, err) = pad(&db, &["post", r#"{"from":"a","content":"before"}"#]);
    assert_eq!(code, 0, "{err}");
    let limit_blocks = std::fs::metadata(&db).unwrap().len() / 512 + 64;
    // RLIMIT_FSIZE makes writes past the limit fail as on a full disk (SIGXFSZ ignored).
    let script =
        format!("trap '' XFSZ; ulimit -f {limit_blocks}; exec \"$0\" pad --db \"$1\" --stdin",);
    let child = Command::new("sh")
        .args(["-c", &script, env!("CARGO_BIN_EXE_agent-intercom")])
        .arg(&db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let requests = (0..400)
        .map(|i| {
            json!({
                "op": "post",
                "args": {"from": "a", "content": format!("{i} {}", "y".repeat(4000))},
            })
            .to_string()
        })
        .collect();
    let responses = converse(child, requests);
    assert_eq!(
        responses.len(),
        400,
        "one response per request, also when the disk is full"
    );
    let ok = responses.iter().filter(|r| r["ok"] == true).count();
    let refused: Vec<&Value> = responses.iter().filter(|r| r["ok"] == false).collect();
    assert!(!refused.is_empty(), "the size limit was never hit");
    for r in &refused {
        assert_eq!(r["error"]["code"], "STORE_IO", "{r}");
        assert!(
            r["error"]["message"].as_str().unwrap().contains("disk"),
            "{r}"
        );
    }
    assert_eq!(
        count(&db, "b"),
        1 + ok,
        "every acknowledged post is stored, no refused one is"
    );
}

#[test]
fn a_read_only_store_is_a_clear_error_and_stays_intact() {
    let tmp = Tmp::new("ro");
    let db = tmp.db();
    let (code, _, err) = pad(&db, &["post", r#"{"from":"a","content":"kept"}"#]);
    assert_eq!(code, 0, "{err}");
    // As root, permissions do not stop writes; the immutable attribute does.
    let immutable = Command::new("chattr")
        .arg("+i")
        .arg(&db)
        .status()
        .is_ok_and(|s| s.success());
    let original = std::fs::metadata(&db).unwrap().permissions();
    if !immutable {
        let mut perms = original.clone();
        perms.set_readonly(true);
        std::fs::set_permissions(&db, perms).unwrap();
    }
    let (code, _, err) = pad(&db, &["post", r#"{"from":"a","content":"refused"}"#]);
    if immutable {
        let _ = Command::new("chattr").arg("-i").arg(&db).status();
    } else {
        std::fs::set_permissions(&db, original).unwrap();
    }
    if code == 0 {
        eprintln!("SKIPPED: this environment cannot make a file read-only for this user");
        return;
    }
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("STORE_IO") && err.contains("read-only"),
        "{err}"
    );
    assert_eq!(count(&db, "b"), 1);
}

#[test]
fn bad_inputs_are_refused_with_stable_codes_and_change_nothing() {
    let tmp = Tmp::new("bad");
    let db = tmp.db();
    let (_, task, _) = pad(
        &db,
        &[
            "task.create",
            r#"{"creator":"a","assignee":"b","title":"t"}"#,
        ],
    );
    let id = task["id"].as_str().unwrap().to_string();
    let (code, _, _) = pad(&db, &["post", r#"{"from":"a","content":"kept"}"#]);
    assert_eq!(code, 0);
    let huge = "z".repeat(70 * 1024);
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "post",
            json!({"from": "a", "content": "x", "ttl_hours": 0}).to_string(),
            "INVALID_TTL",
        ),
        (
            "post",
            json!({"from": "a", "content": "x", "ttl_hours": 1_000_000_000_000i64}).to_string(),
            "INVALID_TTL",
        ),
        (
            "post",
            json!({"from": "a", "content": "x", "ttl_hours": 0.5}).to_string(),
            "INVALID_TTL",
        ),
        (
            "post",
            json!({"from": "a", "content": "x", "privacy": "private"}).to_string(),
            "PRIVATE_WITHOUT_RECIPIENT",
        ),
        (
            "post",
            json!({"from": "a", "content": "x", "privacy": "secret"}).to_string(),
            "INVALID_ARGUMENT",
        ),
        (
            "post",
            json!({"from": "a", "content": huge}).to_string(),
            "CONTENT_TOO_LARGE",
        ),
        ("post", "{not json".to_string(), "INVALID_JSON"),
        (
            "task.transition",
            json!({"id": id, "by": "b", "to": "completed"}).to_string(),
            "INVALID_TRANSITION",
        ),
        (
            "task.transition",
            json!({"id": id, "by": "b", "to": "canceled"}).to_string(),
            "FORBIDDEN",
        ),
        (
            "task.transition",
            json!({"id": id, "by": "stranger", "to": "working"}).to_string(),
            "FORBIDDEN",
        ),
    ];
    for (op, args, code) in &cases {
        let (status, _, err) = pad(&db, &[op, args]);
        assert_eq!(status, 2, "{op} {code}: {err}");
        assert!(
            err.contains(&format!("[{code}]")),
            "{op}: expected {code}, got {err}"
        );
    }
    assert_eq!(count(&db, "b"), 1, "no refused post was stored");
    let (_, task, _) = pad(
        &db,
        &["task.get", &json!({"id": id, "agent": "a"}).to_string()],
    );
    assert_eq!(task["state"], "submitted");
    let (_, history, _) = pad(
        &db,
        &["task.history", &json!({"id": id, "agent": "b"}).to_string()],
    );
    assert_eq!(
        history.as_array().map(Vec::len),
        Some(1),
        "only the creation: {history}"
    );
}

#[test]
fn the_lines_mode_answers_every_line_in_order_even_bad_ones() {
    let tmp = Tmp::new("lines");
    let mut child = lines_process(&tmp.db());
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"op\":\"post\",\"args\":{\"from\":\"a\",\"content\":\"1\"},\"id\":7}\n")
        .unwrap();
    stdin.write_all(b"\xff\xfe not utf-8\n").unwrap();
    stdin.write_all(b"[1,2]\n").unwrap();
    stdin.write_all(b"{\"args\":{}}\n").unwrap();
    stdin.write_all(b"\n").unwrap();
    stdin
        .write_all(b"{\"op\":\"nope\",\"id\":\"x\"}\n")
        .unwrap();
    stdin
        .write_all(b"{\"op\":\"unread\",\"args\":{\"agent\":\"b\"}}")
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let responses: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let codes: Vec<&str> = responses
        .iter()
        .map(|r| r["error"]["code"].as_str().unwrap_or("ok"))
        .collect();
    assert_eq!(
        codes,
        [
            "ok",
            "INVALID_UTF8",
            "INVALID_ARGUMENT",
            "INVALID_ARGUMENT",
            "INVALID_ARGUMENT",
            "ok"
        ]
    );
    assert_eq!(responses[0]["id"], 7);
    assert_eq!(responses[4]["id"], "x");
    assert_eq!(responses[5]["result"].as_array().unwrap().len(), 1);
}

#[test]
fn four_processes_share_one_rate_limit_through_the_store() {
    const LIMIT: u64 = 100;
    const TAKES: usize = 150;
    let tmp = Tmp::new("rate");
    let db = tmp.db();
    let started = std::time::Instant::now();
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let db = db.clone();
            std::thread::spawn(move || {
                let take = json!({
                    "op": "rate.take",
                    "args": {"agent": "shared", "tool": "t", "agent_per_min": LIMIT},
                });
                let responses = converse(lines_process(&db), vec![take.to_string(); TAKES]);
                assert_eq!(responses.len(), TAKES);
                let mut allowed = 0u64;
                for r in &responses {
                    let result = &r["result"];
                    if result["allowed"] == true {
                        allowed += 1;
                    } else {
                        assert!(result["retry_after_ms"].as_u64().unwrap() >= 1, "{r}");
                        assert_eq!(result["levels"], json!(["agent"]), "{r}");
                    }
                }
                allowed
            })
        })
        .collect();
    let allowed: u64 = workers.into_iter().map(|w| w.join().unwrap()).sum();
    // The bucket starts full (LIMIT) and refills LIMIT per minute while the processes run.
    let refill = started.elapsed().as_millis() as u64 * LIMIT / 60_000 + 1;
    assert!(
        allowed >= LIMIT,
        "only {allowed} of the first {LIMIT} tokens were granted"
    );
    assert!(
        allowed <= LIMIT + refill,
        "{allowed} granted: the processes did not share one bucket"
    );
}

#[test]
fn usage_config_and_rule_checks_without_a_store() {
    let tmp = Tmp::new("usage");
    let db = tmp.db();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_agent-intercom"))
            .arg("pad")
            .arg("--db")
            .arg(&db)
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, _, err) = run(&[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.starts_with("agent-intercom: error[INVALID_ARGUMENT]: ")
            && err.contains("<OP|--stdin>"),
        "{err}"
    );
    let (code, _, err) = run(&["list", "{}", "extra"]);
    assert_eq!(code, Some(2), "{err}");
    let (code, _, err) = run(&["--config", "{nope", "list", r#"{"agent":"a"}"#]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("[INVALID_JSON]") && err.contains("--config"),
        "{err}"
    );
    let (code, _, err) = run(&["--config", r#"{"colour":1}"#, "list", r#"{"agent":"a"}"#]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("[UNKNOWN_KEY]") && err.contains("per_project_cap"),
        "{err}"
    );
    let (code, _, err) = run(&["list", "[1"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("[INVALID_JSON]"), "{err}");
    assert!(!db.exists(), "refused requests opened no store");
    // A rule check answers without a store, and creates none.
    let (code, out, err) = run(&["check.ttl", r#"{"ttl_hours":3}"#]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), r#"{"hours":3}"#);
    let (code, _, err) = run(&["check.ttl", r#"{"ttl_hours":0}"#]);
    assert_eq!(code, Some(2));
    assert!(err.contains("[INVALID_TTL]"), "{err}");
    assert!(!db.exists(), "rule checks opened no store");
}

#[test]
fn a_typo_in_an_argument_key_is_refused_and_nothing_is_posted() {
    let tmp = Tmp::new("typo");
    let db = tmp.db();
    let (code, _, err) = pad(
        &db,
        &[
            "post",
            r#"{"from":"a","to":"b","Privacy":"private","content":"secret"}"#,
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("[UNKNOWN_KEY]") && err.contains("\"Privacy\"") && err.contains("privacy"),
        "{err}"
    );
    let (code, _, err) = pad(&db, &["post", r#"{"from":"a","content":"x","ttl":1}"#]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("[UNKNOWN_KEY]") && err.contains("ttl_hours"),
        "{err}"
    );
    assert_eq!(count(&db, "outsider"), 0, "nothing was posted");
    // The same through --stdin, where the request line's own keys are checked as well.
    let responses = converse(
        lines_process(&db),
        vec![
            json!({
                "op": "post",
                "args": {"from": "a", "to": "b", "Privacy": "private", "content": "s"},
            })
            .to_string(),
            json!({"op": "post", "arg": {"from": "a", "content": "s"}}).to_string(),
        ],
    );
    for r in &responses {
        assert_eq!(r["error"]["code"], "UNKNOWN_KEY", "{r}");
    }
    assert_eq!(count(&db, "outsider"), 0, "nothing was posted");
}

#[test]
fn a_task_its_history_and_its_artifacts_are_for_its_participants_only() {
    let tmp = Tmp::new("task-read");
    let db = tmp.db();
    let (code, task, err) = pad(
        &db,
        &[
            "task.create",
            r#"{"creator":"a","assignee":"b","title":"t"}"#,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let id = task["id"].as_str().unwrap();
    let artifact = json!({"id": id, "by": "b", "name": "n", "content": "the secret plan"});
    let (code, _, err) = pad(&db, &["task.artifact", &artifact.to_string()]);
    assert_eq!(code, 0, "{err}");
    for op in ["task.get", "task.history", "task.artifacts"] {
        let (code, out, err) = pad(&db, &[op, &json!({"id": id, "agent": "c"}).to_string()]);
        assert_eq!(code, 2, "{op}: {out}");
        assert!(err.contains("[FORBIDDEN]"), "{op}: {err}");
        assert!(!err.contains("secret"), "{err}");
        let (code, out, err) = pad(&db, &[op, &json!({"id": id, "agent": "b"}).to_string()]);
        assert_eq!(code, 0, "{op}: {err}");
        assert!(!out.is_null());
    }
}

#[test]
fn a_db_path_is_a_file_name_never_an_sqlite_uri_or_special_name() {
    let tmp = Tmp::new("names");
    let run = |db: &str, args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_agent-intercom"))
            .current_dir(&tmp.0)
            .args(["pad", "--db", db])
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    for name in ["file:x.sqlite?mode=memory", ":memory:", "file::memory:"] {
        let (code, _, err) = run(name, &["post", r#"{"from":"a","content":"kept"}"#]);
        assert_eq!(code, Some(0), "{name}: {err}");
        assert!(
            tmp.0.join(name).is_file(),
            "{name}: no such file afterwards"
        );
        let (code, out, err) = run(name, &["list", r#"{"agent":"b"}"#]);
        assert_eq!(code, Some(0), "{name}: {err}");
        assert!(
            out.contains("kept"),
            "{name}: the post was not stored: {out}"
        );
    }
    let (code, _, err) = run("", &["post", r#"{"from":"a","content":"x"}"#]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("[INVALID_ARGUMENT]"), "{err}");
}

#[test]
fn a_lone_surrogate_in_an_argument_is_refused_naming_it() {
    let tmp = Tmp::new("surrogate");
    let db = tmp.db();
    // What JSON.stringify makes of a sliced emoji.
    for (args, named) in [
        (r#"{"from":"a","content":"a\ud800b"}"#, "content"),
        (
            r#"{"from":"a","content":"ok","metadata":{"n":["x","\udc00"]}}"#,
            "metadata.n[1]",
        ),
    ] {
        let (code, _, err) = pad(&db, &["post", args]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("[UNPAIRED_SURROGATE]"), "{err}");
        assert!(err.contains(named), "names {named}: {err}");
    }
    let responses = converse(
        lines_process(&db),
        vec![r#"{"op":"post","args":{"from":"a","content":"\ud83d"}}"#.to_string()],
    );
    assert_eq!(
        responses[0]["error"]["code"], "UNPAIRED_SURROGATE",
        "{}",
        responses[0]
    );
    assert!(
        responses[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("args.content")
    );
    // A proper pair is a character, and is stored as such.
    let (code, _, err) = pad(&db, &["post", r#"{"from":"a","content":"\ud83d\ude00"}"#]);
    assert_eq!(code, 0, "{err}");
    let (_, page, _) = pad(&db, &["list", r#"{"agent":"b"}"#]);
    assert_eq!(page["messages"][0]["content"], "\u{1F600}");
    assert_eq!(count(&db, "b"), 1, "only the whole character was stored");
}

#[test]
fn pad_options_given_twice_unknown_or_misplaced_are_usage_errors() {
    let tmp = Tmp::new("options");
    let other = tmp.0.join("other.sqlite");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_agent-intercom"))
            .arg("pad")
            .args(args)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stderr).unwrap())
    };
    let db = tmp.db();
    let db = db.to_str().unwrap();
    for (args, says) in [
        (
            vec!["--db", db, "--db", other.to_str().unwrap(), "cost.list"],
            "--db",
        ),
        (
            vec!["--db", db, "--config", "{}", "--config", "{}", "cost.list"],
            "--config",
        ),
        (vec!["--db", db, "--dbb", "x", "cost.list"], "--dbb"),
        (vec!["--db", db, "--stdin", "{}"], "--stdin"),
    ] {
        let (code, err) = run(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    assert!(!tmp.db().exists() && !other.exists(), "no store was opened");
    // A rate limit from the environment that is not text is refused, not taken as unset.
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let out = Command::new(env!("CARGO_BIN_EXE_agent-intercom"))
            .args([
                "pad",
                "--db",
                db,
                "rate.take",
                r#"{"agent":"a","tool":"t"}"#,
            ])
            .env(
                "LEAN_CTX_RATE_LIMIT_AGENT_PER_MIN",
                std::ffi::OsStr::from_bytes(b"\xff"),
            )
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("LEAN_CTX_RATE_LIMIT_AGENT_PER_MIN"), "{err}");
    }
}
