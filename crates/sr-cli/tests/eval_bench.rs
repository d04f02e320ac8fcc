//! `examples/code-review-bench`: replayed offline from its cassettes, twice,
//! to the scores of the run that recorded them; `examples/structured-workflow`'s
//! dataset replayed offline. `record` (ignored) re-records
//! the cassettes against a scripted model on the mock server:
//! `cargo test -p sr-cli --test eval_bench -- --ignored record`.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use sr_llm::mock::{MockReply, MockServer};

fn bench() -> PathBuf {
    sr_testing::workspace_root().join("examples/code-review-bench")
}

fn sr(args: &[&str], env: &[(&str, String)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sr"));
    command.args(args).current_dir(bench()).env("NO_COLOR", "1");
    // A replay that reached for the network would find nothing there.
    command.env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1").env("OPENAI_API_KEY", "unused");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sr-eval-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `sr eval` of the bench, both workloads, from its cassettes into `out`: its results.json.
fn replay(out: &Path) -> Value {
    let args =
        ["eval", "dataset.yaml", "--workload", "review.sr", "--workload", "split.sr", "--replay-from", "cassettes"];
    let run = sr(&[&args[..], &["--jobs", "4", "--out", out.to_str().unwrap()]].concat(), &[]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap()
}

/// Per case run, by id and workload: everything but timings.
fn scores(results: &Value) -> Vec<Value> {
    let mut cases: Vec<Value> = results["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let fields = ["id", "workload", "passed", "score", "scores", "output", "error", "tokens", "model_calls"];
            Value::Array(fields.iter().map(|f| c[*f].clone()).collect())
        })
        .collect();
    cases.sort_by_key(|c| format!("{}{}", c[0], c[1]));
    cases
}

#[test]
fn the_bench_replays_offline_to_the_recorded_scores_every_time() {
    let first = replay(&temp("first"));
    let second = replay(&temp("second"));
    assert_eq!(scores(&first), scores(&second));
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(bench().join("results.json")).unwrap()).unwrap();
    assert_eq!(scores(&first), scores(&recorded));
    let passed: Vec<(Value, Value, Value)> = first["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["workload"].clone(), s["passed"].clone(), s["total"].clone()))
        .collect();
    assert_eq!(passed, [(json!("review.sr"), json!(5), json!(8)), (json!("split.sr"), json!(7), json!(8))]);
}

fn finding(file: &str, line: u64, category: &str, message: &str) -> Value {
    json!({"file": file, "line": line, "category": category, "message": message})
}

/// The scripted reviewer of review.sr: per case, the file it reads and the
/// findings it answers with. Some are right, one misses a defect, one
/// mislabels one and one reports a defect that is not there.
fn review_answers() -> Vec<(&'static str, &'static str, Value)> {
    let f = finding;
    vec![
        (
            "off-by-one",
            "src/pagination.py",
            json!([f("src/pagination.py", 3, "bug", "Page 1 skips the first page: start is (number - 1) * size.")]),
        ),
        (
            "sql-injection",
            "src/users.py",
            json!([f("src/users.py", 5, "security", "The name is formatted into the SQL: use a parameter.")]),
        ),
        (
            "mutable-default",
            "src/cart.py",
            json!([f("src/cart.py", 1, "bug", "The default list is shared between calls.")]),
        ),
        (
            "resource-leak",
            "src/config.py",
            json!([f("src/config.py", 6, "bug", "The file is never closed: use `with open(path)`.")]),
        ),
        ("division-by-zero", "src/stats.py", json!([f("src/stats.py", 2, "bug", "mean([]) divides by zero.")])),
        (
            "shell-injection",
            "src/archive.py",
            json!([f("src/archive.py", 5, "bug", "A path with spaces breaks the command.")]),
        ),
        (
            "quadratic-dedupe",
            "src/dedupe.py",
            json!([f("src/dedupe.py", 5, "performance", "`in` on a list makes this quadratic: use a set.")]),
        ),
        ("clean", "src/greet.py", json!([f("src/greet.py", 2, "bug", "The name is not escaped.")])),
    ]
}

/// The scripted agents of split.sr: per case, the bug finder's findings, then
/// the security finder's. The bug finder misses the quadratic loop.
fn split_answers() -> Vec<(&'static str, Value, Value)> {
    let f = finding;
    let none = json!([]);
    vec![
        ("off-by-one", json!([f("src/pagination.py", 3, "bug", "Page 1 skips the first page.")]), none.clone()),
        ("sql-injection", none.clone(), json!([f("src/users.py", 5, "security", "SQL injection through `name`.")])),
        (
            "mutable-default",
            json!([f("src/cart.py", 1, "bug", "The default list is shared between calls.")]),
            none.clone(),
        ),
        ("resource-leak", json!([f("src/config.py", 5, "bug", "The file is never closed.")]), none.clone()),
        (
            "division-by-zero",
            json!([
                f("src/stats.py", 2, "bug", "mean([]) divides by zero."),
                f("src/stats.py", 6, "bug", "total == 0 passes the check.")
            ]),
            none.clone(),
        ),
        (
            "shell-injection",
            none.clone(),
            json!([f("src/archive.py", 5, "security", "Shell injection through `path`.")]),
        ),
        ("quadratic-dedupe", none.clone(), none.clone()),
        ("clean", none.clone(), none),
    ]
}

fn file_of(id: &str) -> &'static str {
    review_answers().into_iter().find(|(case, _, _)| *case == id).unwrap().1
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "re-records the shipped cassettes"]
async fn record() {
    let server = MockServer::start().await;
    let env = [("OPENAI_BASE_URL", format!("{}/v1", server.url())), ("OPENAI_API_KEY", "test-key-1234".to_string())];
    let _ = std::fs::remove_dir_all(bench().join("cassettes"));
    let scratch = temp("record");
    let read = |file: &str| MockReply::tool_call("call_1", "read_file", json!({"path": file})).usage(180, 20);
    let answer = |findings: &Value| MockReply::text(findings.to_string()).usage(260, 40);
    let mut runs = Vec::new();
    for (id, file, findings) in review_answers() {
        runs.push((id, "review.sr", vec![read(file), answer(&findings)]));
    }
    for (id, bugs, holes) in split_answers() {
        runs.push((id, "split.sr", vec![read(file_of(id)), answer(&bugs), read(file_of(id)), answer(&holes)]));
    }
    // One case run per process, so that the scripted replies meet their case.
    let mut recorded = Vec::new();
    for (id, workload, replies) in runs {
        for reply in replies {
            server.push(reply);
        }
        let out = scratch.join(format!("{id}-{workload}"));
        let args = ["eval", "dataset.yaml", "--workload", workload, "--record-to", "cassettes", "--filter"];
        let run = sr(&[&args[..], &[&format!("^{id}$"), "--out", out.to_str().unwrap()]].concat(), &env);
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        assert_eq!(server.remaining(), 0, "{id} on {workload} used its replies");
        let text = std::fs::read_to_string(out.join("results.json")).unwrap();
        recorded.extend(scores(&serde_json::from_str(&text).unwrap()));
    }
    recorded.sort_by_key(|c| format!("{}{}", c[0], c[1]));
    let out = temp("recorded");
    assert_eq!(scores(&replay(&out)), recorded, "the replay scores as the recorded runs did");
    for name in ["results.json", "report.md", "report.html"] {
        std::fs::copy(out.join(name), bench().join(name)).unwrap();
    }
}

#[test]
fn the_structured_workflow_dataset_replays_offline_and_passes() {
    let example = sr_testing::workspace_root().join("examples/structured-workflow");
    let out = temp("structured");
    let args = [
        "eval",
        "dataset.yaml",
        "--workload",
        "workflow.sr",
        "--replay-from",
        "cassettes",
        "--out",
        out.to_str().unwrap(),
    ];
    let run = Command::new(env!("CARGO_BIN_EXE_sr"))
        .args(args)
        .current_dir(&example)
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        .env("OPENAI_API_KEY", "unused")
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let results: Value = serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let case = &results["cases"][0];
    assert_eq!(
        (&case["id"], &case["passed"], &case["model_calls"]),
        (&json!("word_frequencies"), &json!(true), &json!(7))
    );
    assert_eq!(
        case["output"],
        json!({"structured": {"passed": true, "attempts": 2}, "baseline": {"passed": true, "attempts": 1}})
    );
}
