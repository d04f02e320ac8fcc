//! `sr eval --server URL`: the cases run as runs of a real `sr serve` (its
//! model sr-llm's mock server) and give the results a local `sr eval` of the
//! same dataset and model replies gives; each case names its run, which the
//! server knows. Then what goes wrong: no server, a wrong or missing key, a
//! workload the server does not serve, cases a server cannot run, a run that
//! fails, and a run that outlasts `--timeout` (cancelled on the server).
#![allow(clippy::unwrap_used)]

mod serving;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::{Value, json};
use serving::{KEY, Serve, temp, wait_until};
use sr_llm::mock::{MockReply, MockServer};

const DATASET: &str = r#"{"id": "status", "prompt": "status of order 7?", "expect": [{"contains": "shipped"}, {"regex": "order\\s+7"}]}
{"id": "report", "prompt": "write the report", "expect": [{"tool_called": "write_file", "args": {"path": "out.txt"}}, {"contains": "shipped"}]}
{"id": "cancel", "prompt": "cancel order 7", "expect": [{"contains": "cancelled"}]}
"#;

/// The replies of one pass over DATASET with two epochs, one case run at a
/// time: every run writes a file, then answers (the order the harness takes
/// the case runs in is not fixed, so each gets the same replies).
fn push_replies(mock: &MockServer) {
    for _ in 0..6 {
        mock.push(
            MockReply::tool_call("w1", "write_file", json!({"path": "out.txt", "content": "order 7"})).usage(20, 3),
        );
        mock.push(MockReply::text("order 7 has shipped; see out.txt").usage(30, 6));
    }
}

/// `sr ARGS` in `dir`, with `env` and no other model configuration.
fn sr(dir: &Path, args: &[&str], env: &[(&str, String)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sr"));
    command.args(args).current_dir(dir).env("NO_COLOR", "1").env_remove("OPENAI_API_KEY").env_remove("OPENAI_BASE_URL");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn results(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// What must be equal between a local and a server's evaluation, per case run.
fn outcomes(results: &Value) -> Vec<Value> {
    let cases = results["cases"].as_array().unwrap();
    cases
        .iter()
        .map(|c| {
            json!([
                c["id"],
                c["epoch"],
                c["passed"],
                c["score"],
                c["scores"],
                c["output"],
                c["error"],
                c["tokens"],
                c["cost_usd"],
                c["model_calls"],
                c["events"]
            ])
        })
        .collect()
}

/// The types of the events in a case's events file.
fn event_types(out: &Path, case: &Value) -> Vec<String> {
    let text = std::fs::read_to_string(out.join(case["events"].as_str().unwrap())).unwrap();
    text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].as_str().unwrap().to_string()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn cases_run_on_the_server_give_the_local_results_and_name_their_runs() {
    let dir = temp("eval-same", &[("helper.sr", sr_testing::HELPER_WORKLOAD), ("data.jsonl", DATASET)]);
    let mock = MockServer::start().await;
    push_replies(&mock);
    let model = [("OPENAI_BASE_URL", format!("{}/v1", mock.url())), ("OPENAI_API_KEY", KEY.to_string())];
    let args = ["eval", "data.jsonl", "--workload", "helper.sr", "--epochs", "2", "--jobs", "1"];
    let out = sr(&dir, &[&args[..], &["--out", "local"]].concat(), &model);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(mock.remaining(), 0);

    push_replies(&mock);
    let serve = Serve::start(&dir, &mock, &["helper.sr"]).await;
    // No model configuration here: every model call is the server's.
    let out = sr(&dir, &[&args[..], &["--out", "remote", "--server", serve.base()]].concat(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(mock.remaining(), 0, "the server made every model call");
    let (local, remote) = (results(&dir.join("local/results.json")), results(&dir.join("remote/results.json")));
    assert_eq!(outcomes(&remote), outcomes(&local));
    assert_eq!(outcomes(&remote).len(), 6);
    let passed = |r: &Value| r["cases"].as_array().unwrap().iter().filter(|c| c["passed"] == json!(true)).count();
    assert_eq!((passed(&local), passed(&remote)), (4, 4), "status and report pass, cancel fails");
    for key in ["passed", "total", "pass_rate"] {
        assert_eq!(remote["summary"][0][key], local["summary"][0][key], "{key}");
    }
    assert_eq!(remote["run"]["servers"], json!([serve.base()]));
    assert!(local["run"].get("servers").is_none() && local["cases"][0].get("run").is_none());

    let mut runs = Vec::new();
    let mut sessions = Vec::new();
    for (case, here) in remote["cases"].as_array().unwrap().iter().zip(local["cases"].as_array().unwrap()) {
        let run = case["run"].as_str().unwrap_or_else(|| panic!("no run: {case}"));
        let (status, row) = serve.get(&format!("/v1/runs/{run}")).await;
        assert_eq!(status, 200, "{row}");
        assert_eq!(
            (&row["status"], &row["workload"], &row["result"]),
            (&json!("done"), &json!("helper"), &case["output"])
        );
        runs.push(run.to_string());
        sessions.push(row["session"].as_str().unwrap().to_string());
        assert_eq!(event_types(&dir.join("remote"), case), event_types(&dir.join("local"), here), "{}", case["id"]);
    }
    for ids in [&mut runs, &mut sessions] {
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 6, "a run and a session of its own per case run");
    }
    // The studio's links (`/runs/ID`) open the page of each run.
    let page = reqwest::get(format!("{}/runs/{}", serve.base(), runs[0])).await.unwrap();
    assert_eq!(page.status(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_key_is_required_checked_and_never_written() {
    let key = "eval-key-0123456789-secret";
    let dir = temp(
        "eval-key",
        &[("helper.sr", sr_testing::HELPER_WORKLOAD), ("data.jsonl", DATASET), ("keys.txt", &format!("{key}\n"))],
    );
    std::fs::write(dir.join("wrong.txt"), "# not the server's\nwrong-key-0123456789\n").unwrap();
    let mock = MockServer::start().await;
    let serve = Serve::start(&dir, &mock, &["helper.sr", "--api-key-file", "keys.txt"]).await;
    let args = ["eval", "data.jsonl", "--workload", "helper.sr", "--filter", "^status$", "--server", serve.base()];
    for given in [&[][..], &["--api-key-file", "wrong.txt"][..]] {
        let out = sr(&dir, &[&args[..], given, &["--out", "refused"]].concat(), &[]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let expected = format!("error: {}: the server refused the API key (401 Unauthorized)", serve.base());
        assert!(stderr(&out).contains(&expected), "{}", stderr(&out));
        assert!(!dir.join("refused/results.json").exists(), "nothing ran");
    }
    mock.push(MockReply::text("order 7 has shipped").usage(1, 1));
    let out = sr(&dir, &[&args[..], &["--api-key-file", "keys.txt", "--out", "keyed"]].concat(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = results(&dir.join("keyed/results.json"));
    assert_eq!(results["cases"][0]["passed"], json!(true), "{results}");
    assert!(results["run"]["api_key_file"].as_str().unwrap().ends_with("keys.txt"));
    let mut written = vec![String::from_utf8_lossy(&out.stdout).into_owned(), stderr(&out)];
    for file in walk(&dir.join("keyed")) {
        written.push(std::fs::read_to_string(file).unwrap());
    }
    assert!(written.len() > 4 && written.iter().all(|text| !text.contains(key)), "the key was written");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() { files.extend(walk(&path)) } else { files.push(path) }
    }
    files
}

#[tokio::test(flavor = "multi_thread")]
async fn what_a_server_cannot_do_is_refused_before_any_case_runs() {
    let with_files = r#"{"id": "files", "prompt": "read in.txt", "files": {"in.txt": "x"}, "expect": [{"contains": "x"}]}
{"id": "reads", "prompt": "write", "expect": [{"file": "out.txt", "contains": "7"}]}
"#;
    let dir = temp(
        "eval-refused",
        &[
            ("helper.sr", sr_testing::HELPER_WORKLOAD),
            ("other.sr", sr_testing::HELPER_WORKLOAD),
            ("data.jsonl", DATASET),
        ],
    );
    std::fs::write(dir.join("files.jsonl"), with_files).unwrap();
    let mock = MockServer::start().await;
    let serve = Serve::start(&dir, &mock, &["helper.sr"]).await;
    let base = serve.base();
    let cases: [(&[&str], &str); 5] = [
        (
            &["eval", "data.jsonl", "--workload", "other.sr", "--server", base],
            &format!("error: {base}: the server serves no workload named `other` (for other.sr); it serves: helper"),
        ),
        (
            &["eval", "data.jsonl", "--workload", "helper.sr", "--server", "http://127.0.0.1:9"],
            "error: cannot reach the server at http://127.0.0.1:9: ",
        ),
        (
            &["eval", "files.jsonl", "--workload", "helper.sr", "--server", base],
            "error: case files: has starting files, which --server cannot send",
        ),
        (
            &["eval", "files.jsonl", "--workload", "helper.sr", "--server", base],
            "error: case reads: the `file` scorer reads the run's work directory, which stays on the server",
        ),
        (
            &["eval", "data.jsonl", "--workload", "helper.sr", "--server", base, "--replay-from", "rec"],
            "the argument '--server <URL>' cannot be used with '--replay-from <DIR>'",
        ),
    ];
    for (args, expected) in cases {
        let out = sr(&dir, &[args, &["--out", "never"]].concat(), &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(expected), "{args:?}: {}", stderr(&out));
        assert!(!dir.join("never").exists(), "{args:?}: nothing ran");
    }
    assert!(mock.requests().is_empty());
    let (_, listed) = serve.get("/v1/runs").await;
    assert_eq!(listed["runs"], json!([]), "no run was submitted");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_run_fails_its_case_and_a_slow_one_times_out_and_is_cancelled() {
    let dir = temp("eval-fail", &[("helper.sr", sr_testing::HELPER_WORKLOAD), ("data.jsonl", DATASET)]);
    let mock = MockServer::start().await;
    let serve = Serve::start(&dir, &mock, &["helper.sr"]).await;
    let args = ["eval", "data.jsonl", "--workload", "helper.sr", "--filter", "^status$", "--server", serve.base()];

    mock.push(MockReply::error(400, "the model refuses this request"));
    let out = sr(&dir, &[&args[..], &["--out", "failed"]].concat(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let case = results(&dir.join("failed/results.json"))["cases"][0].clone();
    let error = case["error"].as_str().unwrap_or_else(|| panic!("{case}"));
    assert!(error.contains("the model refuses this request"), "{error}");
    assert_eq!((&case["passed"], &case["score"]), (&json!(false), &json!(0.0)));
    let (_, row) = serve.get(&format!("/v1/runs/{}", case["run"].as_str().unwrap())).await;
    assert_eq!((&row["status"], &row["error"]), (&json!("failed"), &case["error"]));

    mock.push(MockReply::text("too late").delay(Duration::from_secs(60)));
    let started = std::time::Instant::now();
    let out = sr(&dir, &[&args[..], &["--timeout", "2", "--out", "slow"]].concat(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    let case = results(&dir.join("slow/results.json"))["cases"][0].clone();
    assert_eq!(case["error"], json!("timeout"));
    // The run the case gave up on does not go on on the server.
    wait_until(Duration::from_secs(20), || async {
        let (_, listed) = serve.get("/v1/runs").await;
        let runs = listed["runs"].as_array().unwrap().clone();
        runs.iter().any(|r| r["status"] == "cancelled").then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_queue_deals_the_cases_to_every_postgres_replica_behind_one_url() {
    let Some(db) = sr_testing::postgres::start("eval") else { return };
    let dataset: Vec<String> = (1..=8)
        .map(|i| {
            format!(r#"{{"id": "c{i}", "prompt": "status of order {i}?", "expect": [{{"contains": "shipped"}}]}}"#)
        })
        .collect();
    let dataset = dataset.join("\n");
    let dir = temp("eval-pg", &[("helper.sr", sr_testing::HELPER_WORKLOAD), ("data.jsonl", &dataset)]);
    let mock = MockServer::start().await;
    for _ in 0..8 {
        mock.push(MockReply::text("it has shipped").usage(3, 2).delay(Duration::from_millis(400)));
    }
    let url = db.url();
    let replica = |name: &'static str| {
        let (dir, mock, url) = (dir.clone(), &mock, url.clone());
        async move {
            let args = ["helper.sr", "--database-url", &url, "--replica-id", name, "--workers", "1"];
            Serve::start(&dir, mock, &args).await
        }
    };
    let a = replica("a").await;
    let _b = replica("b").await;
    // Every case is submitted to a; the queue in PostgreSQL lets b claim some.
    let args = ["eval", "data.jsonl", "--workload", "helper.sr", "--jobs", "4", "--server", a.base(), "--out", "pg"];
    let out = sr(&dir, &args, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = results(&dir.join("pg/results.json"));
    let cases = results["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 8);
    assert!(cases.iter().all(|c| c["passed"] == json!(true) && c["tokens"] == json!({"input": 3, "output": 2})));
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    let mut claimers = Vec::new();
    for case in cases {
        let row = client.query_one("SELECT replica FROM runs WHERE id = $1", &[&case["run"].as_str().unwrap()]).await;
        claimers.push(row.unwrap().get::<_, String>(0));
    }
    claimers.sort();
    claimers.dedup();
    assert_eq!(claimers, ["a", "b"], "both replicas ran cases");
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_cancels_the_runs_it_cut_off_on_the_server() {
    let dir = temp("eval-ctrl-c", &[("helper.sr", sr_testing::HELPER_WORKLOAD), ("data.jsonl", DATASET)]);
    let mock = MockServer::start().await;
    mock.push(MockReply::text("never").delay(Duration::from_secs(120)));
    let serve = Serve::start(&dir, &mock, &["helper.sr"]).await;
    let args = ["eval", "data.jsonl", "--workload", "helper.sr", "--filter", "^status$", "--server", serve.base()];
    let mut child = Command::new(env!("CARGO_BIN_EXE_sr"))
        .args(args)
        .args(["--out", "o"])
        .current_dir(&dir)
        .env_remove("OPENAI_API_KEY")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The case's run waits for its model on the server.
    wait_until(Duration::from_secs(30), || async { (!mock.requests().is_empty()).then_some(()) }).await;
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let (_, listed) = serve.get("/v1/runs").await;
    let runs = listed["runs"].as_array().unwrap().clone();
    assert_eq!(runs.len(), 1, "{listed}");
    let id = runs[0]["id"].as_str().unwrap().to_string();
    // The cancel was sent before sr eval exited: the run stops on the server
    // (its model would answer after two minutes).
    wait_until(Duration::from_secs(20), || async {
        let (_, row) = serve.get(&format!("/v1/runs/{id}")).await;
        (row["status"] == "cancelled").then_some(())
    })
    .await;
}

/// A flow that asks a human before it answers.
const ASKS: &str = r#"model main = openai/gpt-4o-mini
flow main:
    escalate to human "Approve the draft?"
    return "approved: " + $human_input
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_run_that_asks_a_human_fails_its_case_and_is_cancelled() {
    let dataset = r#"{"id": "ask", "prompt": "p", "expect": [{"contains": "approved"}]}"#;
    let dir = temp("eval-ask", &[("asks.sr", ASKS), ("data.jsonl", dataset)]);
    let mock = MockServer::start().await;
    let serve = Serve::start(&dir, &mock, &["asks.sr"]).await;
    let args = ["eval", "data.jsonl", "--workload", "asks.sr", "--server", serve.base(), "--out", "o"];
    let out = sr(&dir, &args, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let case = results(&dir.join("o/results.json"))["cases"][0].clone();
    let error = case["error"].as_str().unwrap_or_else(|| panic!("{case}"));
    assert!(error.starts_with("the run asked a human (Approve the draft?); sr eval answers no question"), "{error}");
    let id = case["run"].as_str().unwrap().to_string();
    wait_until(Duration::from_secs(20), || async {
        let (_, row) = serve.get(&format!("/v1/runs/{id}")).await;
        (row["status"] == "cancelled").then_some(())
    })
    .await;
}
