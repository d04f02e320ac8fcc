//! `sr eval` stopped from outside: SIGTERM and SIGHUP keep the finished cases
//! like Ctrl-C; after `kill -9` the run log (`runs.jsonl`) lets `--resume`
//! run only what is missing; a torn last log line is dropped with a warning.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sr_llm::mock::{MockReply, MockServer};

fn command(args: &[&str], cwd: &Path, server: &MockServer) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sr"));
    command
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url()))
        .env("OPENAI_API_KEY", "test-key-1234")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

fn sr(args: &[&str], cwd: &Path, server: &MockServer) -> Output {
    command(args, cwd, server).output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A directory with the helper workload and a dataset of `cases`: an id and
/// what its answer must contain. Every answer is the same (cases with
/// `--jobs 1` may still start in any order), so a case's result does not
/// depend on which reply it gets.
fn temp(name: &str, cases: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sr-eval-crash-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("helper.sr"), sr_testing::HELPER_WORKLOAD).unwrap();
    let lines: Vec<String> = cases
        .iter()
        .map(|(id, word)| json!({"id": id, "prompt": "p", "expect": [{"contains": word}]}).to_string())
        .collect();
    std::fs::write(dir.join("data.jsonl"), lines.join("\n")).unwrap();
    dir
}

/// Every model reply.
const ANSWER: &str = "done";

fn results(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Per case: what an interrupted-then-resumed run and a whole one share (timings aside).
fn scores(results: &Value) -> Vec<Value> {
    let cases = results["cases"].as_array().unwrap();
    cases.iter().map(|c| json!([c["id"], c["passed"], c["score"], c["scores"], c["output"], c["error"]])).collect()
}

fn log_lines(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("o/runs.jsonl")).map_or(0, |t| t.lines().count())
}

/// Waits until the server has had `requests` requests and the log holds `logged` runs.
async fn wait_for(server: &MockServer, requests: usize, dir: &Path, logged: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while (server.requests().len() < requests || log_lines(dir) < logged) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!((server.requests().len(), log_lines(dir)), (requests, logged));
}

fn signal(child: &Child, signal: i32) {
    // SAFETY: signalling the child this test started.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_and_sighup_write_the_results_and_reports_of_the_finished_cases() {
    for (name, number) in [("SIGTERM", libc::SIGTERM), ("SIGHUP", libc::SIGHUP)] {
        let dir = temp(&name.to_lowercase(), &[("a", ANSWER), ("b", ANSWER)]);
        let server = MockServer::start().await;
        server.push(MockReply::text(ANSWER));
        server.push(MockReply::text("never").delay(Duration::from_secs(120)));
        let args = ["eval", "data.jsonl", "--workload", "helper.sr", "--jobs", "1", "--out", "o"];
        let child = command(&args, &dir, &server).spawn().unwrap();
        // `b` is waiting for its model.
        wait_for(&server, 2, &dir, 1).await;
        let started = Instant::now();
        signal(&child, number);
        let out = child.wait_with_output().unwrap();
        assert!(started.elapsed() < Duration::from_secs(10), "{name}");
        assert_eq!(out.status.code(), Some(130), "{name}: {}", stderr(&out));
        assert!(stderr(&out).contains("interrupted: 1 of 2 case runs finished"), "{name}: {}", stderr(&out));
        let partial = results(&dir.join("o/results.json"));
        let case = &partial["cases"][0];
        assert_eq!((&case["passed"], &case["output"]), (&json!(true), &json!(ANSWER)), "{name}");
        assert_eq!(partial["cases"].as_array().unwrap().len(), 1, "{name}");
        // The other case is missing, not failed.
        let other = if case["id"] == "a" { "b" } else { "a" };
        assert_eq!((&partial["finished"], &partial["missing"][0]["id"]), (&json!(1), &json!(other)), "{name}");
        let report = std::fs::read_to_string(dir.join("o/report.md")).unwrap();
        assert!(report.lines().next().unwrap().contains("(partial: 1 of 2 cases)"), "{name}: {report}");
        assert!(dir.join("o/report.html").is_file(), "{name}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn after_kill_9_resume_runs_only_the_missing_cases_to_the_results_of_a_whole_run() {
    // `c` wants another answer: a failing case among the ones compared.
    let dir = temp("kill", &[("a", ANSWER), ("b", ANSWER), ("c", "shipped"), ("d", ANSWER)]);
    let server = MockServer::start().await;
    let answer = || MockReply::text(ANSWER);
    for _ in 0..4 {
        server.push(answer());
    }
    let whole = ["eval", "data.jsonl", "--workload", "helper.sr", "--jobs", "1", "--out", "whole"];
    let out = sr(&whole, &dir, &server);
    assert!(out.status.success(), "{}", stderr(&out));
    let whole = results(&dir.join("whole/results.json"));
    assert_eq!(
        (&whole["finished"], &whole["cases"][2]["id"], &whole["cases"][2]["passed"]),
        (&json!(4), &json!("c"), &json!(false))
    );

    server.push(answer());
    server.push(answer());
    server.push(MockReply::text("never").delay(Duration::from_secs(120)));
    let start = server.requests().len();
    let args = ["eval", "data.jsonl", "--workload", "helper.sr", "--jobs", "1", "--out", "o"];
    let mut child = command(&args, &dir, &server).spawn().unwrap();
    wait_for(&server, start + 3, &dir, 2).await;
    child.kill().unwrap();
    child.wait().unwrap();
    // No results written at the end: the ones from before the first case say how it was asked.
    assert_eq!(results(&dir.join("o/results.json"))["finished"], json!(0));

    server.push(answer());
    server.push(answer());
    let before = server.requests().len();
    let out = sr(&["eval", "--resume", "o"], &dir, &server);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests().len(), before + 2, "only the two missing cases ran again");
    let resumed = results(&dir.join("o/results.json"));
    assert_eq!(scores(&resumed), scores(&whole));
    assert_eq!((&resumed["complete"], &resumed["finished"]), (&json!(true), &json!(4)));
    assert_eq!(log_lines(&dir), 4);
    let report = std::fs::read_to_string(dir.join("o/report.md")).unwrap();
    assert!(!report.contains("partial"), "{report}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_torn_last_log_line_is_dropped_with_a_warning_and_a_bad_middle_line_is_an_error() {
    let dir = temp("torn", &[("a", ANSWER), ("b", ANSWER), ("c", ANSWER)]);
    let server = MockServer::start().await;
    for _ in 0..3 {
        server.push(MockReply::text(ANSWER));
    }
    let args = ["eval", "data.jsonl", "--workload", "helper.sr", "--jobs", "1", "--out", "o"];
    let out = sr(&args, &dir, &server);
    assert!(out.status.success(), "{}", stderr(&out));
    let log = dir.join("o/runs.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    // Killed while writing the third line.
    std::fs::write(&log, format!("{}\n{}\n{}", lines[0], lines[1], &lines[2][..lines[2].len() / 2])).unwrap();

    server.push(MockReply::text(ANSWER));
    let before = server.requests().len();
    let out = sr(&["eval", "--resume", "o"], &dir, &server);
    assert!(out.status.success(), "{}", stderr(&out));
    let warning = format!("warning: {}: line 3 is incomplete (no newline", Path::new("o/runs.jsonl").display());
    assert!(stderr(&out).contains(&warning), "{}", stderr(&out));
    assert_eq!(server.requests().len(), before + 1, "only the torn case ran again");
    let whole = results(&dir.join("o/results.json"));
    assert_eq!(whole["finished"], json!(3));
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 3);

    // A directory from before the log gets one with the runs of its results.json.
    std::fs::remove_file(&log).unwrap();
    let before = server.requests().len();
    let out = sr(&["eval", "--resume", "o"], &dir, &server);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!((server.requests().len(), log_lines(&dir)), (before, 3));
    assert_eq!(results(&dir.join("o/results.json"))["finished"], json!(3));

    // A bad line with runs after it is not a torn write: nothing runs.
    let text = std::fs::read_to_string(&log).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    std::fs::write(&log, format!("{first}\n{{\"id\": 7}}\n{rest}")).unwrap();
    let before = server.requests().len();
    let out = sr(&["eval", "--resume", "o"], &dir, &server);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("o/runs.jsonl:2: not a case run"), "{}", stderr(&out));
    assert_eq!(server.requests().len(), before);
}
