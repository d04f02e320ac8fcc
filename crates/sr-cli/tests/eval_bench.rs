//! `examples/code-review-bench`: replayed offline from its cassettes, twice,
//! to the scores of the run that recorded them. `record` (ignored) re-records
//! the cassettes against a scripted model on the mock server:
//! `cargo test -p sr-cli --test eval_bench -- --ignored record`.

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

/// `sr eval` of the bench from its cassettes into `out`: its results.json.
fn replay(out: &Path) -> Value {
    let args = ["eval", "dataset.yaml", "--workload", "review.sr", "--replay-from", "cassettes", "--jobs", "4"];
    let run = sr(&[&args[..], &["--out", out.to_str().unwrap()]].concat(), &[]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap()
}

/// Per case, by id: everything but timings.
fn scores(results: &Value) -> Vec<Value> {
    let mut cases: Vec<Value> = results["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| json!([c["id"], c["passed"], c["score"], c["scores"], c["output"], c["error"], c["tokens"], c["model_calls"]]))
        .collect();
    cases.sort_by_key(|c| c[0].to_string());
    cases
}

#[test]
fn the_bench_replays_offline_to_the_recorded_scores_every_time() {
    let first = replay(&temp("first"));
    let second = replay(&temp("second"));
    assert_eq!(scores(&first), scores(&second));
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(bench().join("results.json")).unwrap()).unwrap();
    assert_eq!(scores(&first), scores(&recorded));
    let summary = &first["summary"][0];
    assert_eq!((&summary["passed"], &summary["total"]), (&json!(5), &json!(8)), "{summary}");
}

/// The scripted reviewer: per case, the findings it answers with. Some are
/// right, some miss a defect, mislabel one or report one that is not there.
fn answers() -> Vec<(&'static str, &'static str, Value)> {
    let f = |file: &str, line: u64, category: &str, message: &str| {
        json!({"file": file, "line": line, "category": category, "message": message})
    };
    vec![
        ("off-by-one", "src/pagination.py", json!([f("src/pagination.py", 3, "bug", "Page 1 skips the first page: start is (number - 1) * size.")])),
        ("sql-injection", "src/users.py", json!([f("src/users.py", 5, "security", "The name is formatted into the SQL: use a parameter.")])),
        ("mutable-default", "src/cart.py", json!([f("src/cart.py", 1, "bug", "The default list is shared between calls.")])),
        ("resource-leak", "src/config.py", json!([f("src/config.py", 6, "bug", "The file is never closed: use `with open(path)`.")])),
        ("division-by-zero", "src/stats.py", json!([f("src/stats.py", 2, "bug", "mean([]) divides by zero.")])),
        ("shell-injection", "src/archive.py", json!([f("src/archive.py", 5, "bug", "A path with spaces breaks the command.")])),
        ("quadratic-dedupe", "src/dedupe.py", json!([f("src/dedupe.py", 5, "performance", "`in` on a list makes this quadratic: use a set.")])),
        ("clean", "src/greet.py", json!([f("src/greet.py", 2, "bug", "The name is not escaped.")])),
    ]
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "re-records the shipped cassettes"]
async fn record() {
    let server = MockServer::start().await;
    let env = [("OPENAI_BASE_URL", format!("{}/v1", server.url())), ("OPENAI_API_KEY", "test-key-1234".to_string())];
    let _ = std::fs::remove_dir_all(bench().join("cassettes"));
    let scratch = temp("record");
    // One case per process, so that the scripted replies meet their case.
    for (id, file, findings) in answers() {
        server.push(MockReply::tool_call("call_1", "read_file", json!({"path": file})).usage(180, 20));
        server.push(MockReply::text(findings.to_string()).usage(260, 40));
        let out = scratch.join(id);
        let args = ["eval", "dataset.yaml", "--workload", "review.sr", "--record-to", "cassettes", "--filter"];
        let run = sr(&[&args[..], &[&format!("^{id}$"), "--out", out.to_str().unwrap()]].concat(), &env);
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
        assert_eq!(server.remaining(), 0, "{id} used its replies");
    }
    let mut recorded: Vec<Value> = answers()
        .iter()
        .flat_map(|(id, _, _)| {
            let text = std::fs::read_to_string(scratch.join(id).join("results.json")).unwrap();
            scores(&serde_json::from_str(&text).unwrap())
        })
        .collect();
    recorded.sort_by_key(|c| c[0].to_string());
    let out = temp("recorded");
    assert_eq!(scores(&replay(&out)), recorded, "the replay scores as the recorded runs did");
    for name in ["results.json", "report.md"] {
        std::fs::copy(out.join(name), bench().join(name)).unwrap();
    }
}
