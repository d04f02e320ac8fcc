//! `sr eval` end to end, offline: a mock model server for live and recorded
//! runs, cassettes for replays; results.json, exit codes, the compare gate,
//! shards and merge, dataset errors, timeouts and Ctrl-C.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sr_llm::mock::{MockReply, MockServer};

fn sr(args: &[&str], cwd: &Path, env: &[(&str, String)]) -> Output {
    command(args, cwd, env).output().unwrap()
}

fn command(args: &[&str], cwd: &Path, env: &[(&str, String)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sr"));
    command.args(args).current_dir(cwd).env("NO_COLOR", "1").env_remove("OPENAI_API_KEY").env_remove("OPENAI_BASE_URL");
    for (key, value) in env {
        command.env(key, value);
    }
    command
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sr-eval-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("helper.sr"), sr_testing::HELPER_WORKLOAD).unwrap();
    dir
}

fn mock_env(server: &MockServer) -> Vec<(&'static str, String)> {
    vec![("OPENAI_BASE_URL", format!("{}/v1", server.url())), ("OPENAI_API_KEY", "test-key-1234".to_string())]
}

/// Where a replay would go if it reached for the network: nothing listens there.
fn offline_env() -> Vec<(&'static str, String)> {
    vec![("OPENAI_BASE_URL", "http://127.0.0.1:9/v1".to_string()), ("OPENAI_API_KEY", "unused".to_string())]
}

fn results(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Per case: what must be equal between a run and its replay (timings aside).
fn scores(results: &Value) -> Vec<Value> {
    let cases = results["cases"].as_array().unwrap();
    cases.iter().map(|c| json!([c["id"], c["passed"], c["score"], c["scores"], c["output"], c["error"]])).collect()
}

const DATASET: &str = r#"{"id": "status", "prompt": "status of order 7?", "expect": [{"contains": "shipped"}, {"regex": "order\\s+7"}]}
{"id": "report", "prompt": "write the report", "expect": [{"file": "out.txt", "contains": "7"}, {"tool_called": "write_file", "args": {"path": "out.txt"}}]}
{"id": "input", "prompt": "read in.txt", "files": {"in.txt": "x"}, "expect": [{"file": "in.txt", "equals": "x"}, {"contains": "cancelled"}]}
"#;

/// Every case of DATASET, run one at a time, calls write_file then answers.
fn push_good_run(server: &MockServer) {
    for _ in 0..3 {
        server.push(MockReply::tool_call("w1", "write_file", json!({"path": "out.txt", "content": "order 7"})));
        server.push(MockReply::text("order 7 has shipped").usage(12, 5));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recorded_run_replays_offline_to_the_same_scores_and_compare_gates_a_regression() {
    let dir = temp("record");
    std::fs::write(dir.join("data.jsonl"), DATASET).unwrap();
    let server = MockServer::start().await;
    push_good_run(&server);
    let args = ["eval", "data.jsonl", "--workload", "helper.sr", "--jobs", "1", "--record-to", "rec", "--out", "live"];
    let out = sr(&args, &dir, &mock_env(&server));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 6);
    let live = results(&dir.join("live/results.json"));
    let by_id = |r: &Value, id: &str| r["cases"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap().clone();
    let status = by_id(&live, "status");
    assert_eq!((&status["passed"], &status["score"], &status["model_calls"]), (&json!(true), &json!(1.0), &json!(2)));
    assert_eq!(status["tokens"], json!({"input": 12, "output": 5}));
    assert_eq!(by_id(&live, "report")["passed"], json!(true));
    let input = by_id(&live, "input");
    assert_eq!((&input["passed"], &input["score"]), (&json!(false), &json!(0.5)));
    assert_eq!(input["scores"][1]["detail"], json!("the output does not contain \"cancelled\""));
    let summary = &live["summary"][0];
    assert_eq!(
        (&summary["workload"], &summary["passed"], &summary["total"]),
        (&json!("helper.sr"), &json!(2), &json!(3))
    );
    assert!(dir.join("live/cases/report/helper/default/events.jsonl").is_file());
    assert!(dir.join("rec/report/helper/default.jsonl").is_file());
    let report = std::fs::read_to_string(dir.join("live/report.md")).unwrap();
    assert!(report.contains("## Failures (1)") && report.contains("### input"), "{report}");
    let page = std::fs::read_to_string(dir.join("live/report.html")).unwrap();
    assert_eq!(page.matches("<details class=\"case ").count(), 3);
    assert!(page.contains("<li class=\"step-tool\"><b>tool</b> write_file("), "the transcript is in the page");

    // Offline: the model is served from the cassettes and the file the run
    // wrote is restored for the `file` scorer.
    let replay = ["eval", "data.jsonl", "--workload", "helper.sr", "--replay-from", "rec"];
    let out = sr(&[&replay[..], &["--out", "replay"]].concat(), &dir, &offline_env());
    assert!(out.status.success(), "{}", stderr(&out));
    let replayed = results(&dir.join("replay/results.json"));
    assert_eq!(scores(&replayed), scores(&live));
    // Not in a terminal: one plain line per case.
    let lines = stderr(&out);
    assert_eq!(lines.lines().filter(|l| l.starts_with('[')).count(), 3, "{lines}");
    assert!(lines.contains("FAIL input (helper.sr × default) score 0.50"), "{lines}");

    // The mean score is (1 + 1 + 0.5) / 3.
    let gated = sr(&[&replay[..], &["--min-score", "0.9", "--out", "gated"]].concat(), &dir, &offline_env());
    assert_eq!(gated.status.code(), Some(1), "{}", stderr(&gated));
    assert!(stderr(&gated).contains("mean score 0.833 is below --min-score 0.9"), "{}", stderr(&gated));
    let met = sr(&[&replay[..], &["--min-score", "0.8", "--out", "met"]].concat(), &dir, &offline_env());
    assert_eq!(met.status.code(), Some(0), "{}", stderr(&met));

    // A worse model: `status` now fails, so the gate fails.
    for _ in 0..3 {
        server.push(MockReply::text("no idea"));
    }
    let worse = ["eval", "data.jsonl", "--workload", "helper.sr", "--jobs", "1", "--out", "worse"];
    let out = sr(&worse, &dir, &mock_env(&server));
    assert!(out.status.success(), "{}", stderr(&out));
    let gate = sr(&["eval", "compare", "live/results.json", "worse/results.json", "--html", "compare.html"], &dir, &[]);
    let text = String::from_utf8(gate.stdout).unwrap();
    // Two of three cases flipped to failing: McNemar's exact p = 2 × 0.5² = 0.5,
    // and three cases are too few for any interval or significance at 5%:
    // the default gate (a significant pass-rate drop) passes, and says why.
    assert_eq!(gate.status.code(), Some(0), "{text}");
    assert!(
        text.starts_with("helper, new vs base: no significant difference in pass rate (-66.7 points, p = 0.50)"),
        "{text}"
    );
    assert!(
        text.contains("3 cases cannot make any difference significant at 0.05 (that takes 6 cases changing one way)."),
        "{text}"
    );
    assert!(
        text.contains("pass rate   66.7% → 0.0%  -66.7 points [too few cases to conclude]  p = 0.500 (McNemar exact)"),
        "{text}"
    );
    assert!(text.contains("  pass  pass_rate drop > 0 points (helper.sr × default): moved 66.667, p = 0.50"), "{text}");
    let page = std::fs::read_to_string(dir.join("compare.html")).unwrap();
    assert!(page.contains("<h1>Comparison: the gate passes</h1>") && page.contains("<h2>Cases that changed (2)</h2>"));
    // At a level of 0.6 the same drop is significant: the gate fails, as JSON too.
    let strict = ["eval", "compare", "live/results.json", "worse/results.json", "--significance", "0.6"];
    let failed = sr(&strict, &dir, &[]);
    assert_eq!(failed.status.code(), Some(1), "{}", String::from_utf8_lossy(&failed.stdout));
    assert!(stderr(&failed).contains("regression: 1 gate rule(s) failed"), "{}", stderr(&failed));
    let json_gate = sr(&[&strict[..], &["--format", "json"]].concat(), &dir, &[]);
    assert_eq!(json_gate.status.code(), Some(1));
    let verdict: Value = serde_json::from_slice(&json_gate.stdout).unwrap();
    let pass_rate = &verdict["variants"][0]["pass_rate"];
    assert_eq!((&pass_rate["p_value"], &verdict["regressed"]), (&json!(0.5), &json!(true)), "{verdict}");
    assert_eq!(verdict["gate"][0]["failed"], json!(true), "{verdict}");
    // A rule that does not parse says where.
    let bad = sr(&["eval", "compare", "live/results.json", "worse/results.json", "--gate", "f1 drop > x"], &dir, &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("column 11: expected an amount (a number at least 0), found \"x\""),
        "{}",
        stderr(&bad)
    );
    // `sr eval --baseline` gates the run it makes: the replay equals the live run.
    let baselined = ["--baseline", "live/results.json", "--gate", "mean_score drop > 0.1", "--out", "baselined"];
    let out = sr(&[&replay[..], &baselined[..]].concat(), &dir, &offline_env());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(
        said.contains("against the baseline live/results.json:\nhelper, new vs base: no significant difference"),
        "{said}"
    );
    assert!(said.contains("  pass  mean_score drop > 0.1 (helper.sr × default): moved 0, p = 1.0"), "{said}");
    assert!(dir.join("baselined/compare.html").exists());
    // Against the worse run, the replay's rise in pass rate fails a rule on rises
    // (at a level three cases can reach): exit 1, the results still written.
    let risen = ["--baseline", "worse/results.json", "--gate", "pass_rate rise > 10 points", "--significance", "0.6"];
    let out = sr(&[&replay[..], &risen[..], &["--out", "risen"]].concat(), &dir, &offline_env());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("regression: 1 gate rule(s) failed"), "{}", stderr(&out));
    assert!(dir.join("risen/results.json").exists() && dir.join("risen/compare.html").exists());
    let unjudged = sr(&[&replay[..], &["--gate", "f1 drop > 0.1", "--out", "x"]].concat(), &dir, &offline_env());
    assert_eq!(unjudged.status.code(), Some(2));
    assert!(stderr(&unjudged).contains("judge a run against --baseline"), "{}", stderr(&unjudged));
    assert!(text.contains("FAIL  status (helper.sr × default): the output does not contain \"shipped\""), "{text}");
    let same = sr(&["eval", "compare", "live/results.json", "replay/results.json"], &dir, &[]);
    assert_eq!(same.status.code(), Some(0), "{}", String::from_utf8_lossy(&same.stdout));
    let better = sr(&["eval", "compare", "worse/results.json", "live/results.json"], &dir, &[]);
    assert_eq!(better.status.code(), Some(0));
    assert!(String::from_utf8(better.stdout).unwrap().contains("fixed status"));

    // Shards replayed separately and merged give the whole run.
    for shard in ["1/2", "2/2"] {
        let out_dir = format!("shard{}", &shard[..1]);
        let args = [
            "eval",
            "data.jsonl",
            "--workload",
            "helper.sr",
            "--replay-from",
            "rec",
            "--shard",
            shard,
            "--out",
            &out_dir,
        ];
        let out = sr(&args, &dir, &offline_env());
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(results(&dir.join("shard1/results.json"))["cases"].as_array().unwrap().len(), 2);
    let merge = sr(&["eval", "merge", "shard1/results.json", "shard2/results.json", "-o", "merged.json"], &dir, &[]);
    assert!(merge.status.success(), "{}", stderr(&merge));
    let mut merged = scores(&results(&dir.join("merged.json")));
    let mut whole = scores(&live);
    merged.sort_by_key(|c| c[0].to_string());
    whole.sort_by_key(|c| c[0].to_string());
    assert_eq!(merged, whole);
    assert_eq!(results(&dir.join("merged.json"))["summary"][0]["passed"], json!(2));
    // A shard alone is missing cases of the whole run: the gate fails and says which.
    let short = sr(&["eval", "compare", "live/results.json", "shard1/results.json"], &dir, &[]);
    assert_eq!(short.status.code(), Some(1), "{}", String::from_utf8_lossy(&short.stdout));
    let said = format!("{}{}", String::from_utf8_lossy(&short.stdout), stderr(&short));
    assert!(said.contains("missing: 1 case run(s)") && said.contains("report"), "{said}");
    let allowed = sr(&["eval", "compare", "live/results.json", "shard1/results.json", "--allow-missing"], &dir, &[]);
    assert_eq!(allowed.status.code(), Some(0), "{}", String::from_utf8_lossy(&allowed.stdout));
    // Merged results get their reports from `sr eval report`.
    let rendered = sr(&["eval", "report", "merged.json", "--out", "merged-report"], &dir, &[]);
    assert!(rendered.status.success(), "{}", stderr(&rendered));
    let page = std::fs::read_to_string(dir.join("merged-report/report.html")).unwrap();
    assert_eq!(page.matches("<details class=\"case ").count(), 3);
    let twice = sr(&["eval", "merge", "shard1/results.json", "shard1/results.json", "-o", "bad.json"], &dir, &[]);
    assert_eq!(twice.status.code(), Some(2));
    assert!(stderr(&twice).contains("is in two of the results"), "{}", stderr(&twice));

    // --filter picks cases by id.
    let args =
        ["eval", "data.jsonl", "--workload", "helper.sr", "--replay-from", "rec", "--filter", "^rep", "--out", "f"];
    let out = sr(&args, &dir, &offline_env());
    assert!(out.status.success(), "{}", stderr(&out));
    let filtered = results(&dir.join("f/results.json"));
    assert_eq!(
        filtered["cases"].as_array().unwrap().iter().map(|c| c["id"].clone()).collect::<Vec<_>>(),
        [json!("report")]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn compare_takes_a_variant_by_its_entry_and_a_replay_of_unrecorded_epochs_is_warned_of_once() {
    let dir = temp("short-names");
    std::fs::write(dir.join("data.jsonl"), DATASET).unwrap();
    let server = MockServer::start().await;
    push_good_run(&server);
    push_good_run(&server);
    let both = ["--workload", "helper.sr", "--entry", "main", "--entry", "helper"];
    let args = [&["eval", "data.jsonl", "--jobs", "1", "--record-to", "rec", "--out", "live"], &both[..]].concat();
    let out = sr(&args, &dir, &mock_env(&server));
    assert!(out.status.success(), "{}", stderr(&out));

    // `main` is the entry of one variant only: it names helper.sr@main.
    let compare = |base: &str, new: &str| {
        let args = ["eval", "compare", "live/results.json", "live/results.json", "--base-variant", base];
        sr(&[&args[..], &["--new-variant", new]].concat(), &dir, &[])
    };
    let paired = compare("main", "helper.sr@helper");
    assert_eq!(paired.status.code(), Some(0), "{}", stderr(&paired));
    let text = String::from_utf8_lossy(&paired.stdout);
    assert!(text.contains("  helper.sr@main × default → helper.sr@helper × default (3 paired cases)"), "{text}");
    // `helper` is the stem of both and the entry of one: both are candidates.
    let ambiguous = compare("helper", "main");
    assert_eq!(ambiguous.status.code(), Some(2));
    assert!(
        stderr(&ambiguous)
            .contains("\"helper\" names 2 variants (helper.sr@main × default, helper.sr@helper × default)"),
        "{}",
        stderr(&ambiguous)
    );
    let unknown = compare("main", "solo");
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains(
            "no variant \"solo\" in the results (they have: helper.sr@main × default, helper.sr@helper × default)"
        ),
        "{}",
        stderr(&unknown)
    );

    // The recording has one epoch: a replay of two is warned of once, before
    // any case runs, and its second epoch fails for want of cassettes.
    let replay = ["eval", "data.jsonl", "--workload", "helper.sr", "--entry", "main", "--jobs", "1"];
    let args = [&replay[..], &["--replay-from", "rec", "--epochs", "2", "--out", "twice"]].concat();
    let out = sr(&args, &dir, &offline_env());
    let said = stderr(&out);
    assert_eq!(said.matches("warning: --epochs 2 with --replay-from").count(), 1, "{said}");
    let first = said.lines().next().unwrap();
    assert!(first.contains("it has no recording of epoch 2 ("), "{said}");
    assert!(first.contains("the run does 2× the case runs of one epoch"), "{said}");
    assert!(first.contains("or replay with --epochs 1"), "{said}");
    let twice = results(&dir.join("twice/results.json"));
    let errors: Vec<(u64, bool)> = twice["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["epoch"].as_u64().unwrap(), c["error"].as_str().is_some_and(|e| e.contains("no such file"))))
        .collect();
    assert_eq!(errors, [(1, false), (2, true), (1, false), (2, true), (1, false), (2, true)]);

    // Recorded with two epochs, a replay of two has nothing to warn of.
    push_good_run(&server);
    push_good_run(&server);
    let args = [&replay[..], &["--epochs", "2", "--record-to", "rec2", "--out", "live2"]].concat();
    let out = sr(&args, &dir, &mock_env(&server));
    assert!(out.status.success(), "{}", stderr(&out));
    let args = [&replay[..], &["--replay-from", "rec2", "--epochs", "2", "--out", "again"]].concat();
    let out = sr(&args, &dir, &offline_env());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("warning:"), "{}", stderr(&out));
}

#[test]
fn a_malformed_dataset_line_is_reported_with_file_line_and_column() {
    let dir = temp("malformed");
    let good = r#"{"id": "c1", "prompt": "p", "expect": []}"#;
    std::fs::write(dir.join("data.jsonl"), format!("{good}\n{{\"id\": \"c2\", \"prompt\": }}\n")).unwrap();
    let out = sr(&["eval", "data.jsonl", "--workload", "helper.sr", "--out", "o"], &dir, &offline_env());
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out), "error: data.jsonl:2:24: expected value\n");
    assert!(!dir.join("o").exists());

    std::fs::write(dir.join("data.yaml"), "- id: c1\n  prompt: p\n  expect:\n    - regex: '('\n").unwrap();
    let out = sr(&["eval", "data.yaml", "--workload", "helper.sr"], &dir, &offline_env());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).starts_with("error: data.yaml:4:5: expect: bad regex"), "{}", stderr(&out));

    // Bad flags and workloads are refused before anything runs.
    std::fs::write(dir.join("ok.jsonl"), good).unwrap();
    let out = sr(&["eval", "ok.jsonl", "--workload", "helper.sr", "--jobs", "0"], &dir, &[]);
    assert_eq!(out.status.code(), Some(2));
    let out = sr(&["eval", "ok.jsonl", "--workload", "missing.sr"], &dir, &[]);
    assert_eq!(out.status.code(), Some(2));
    let out = sr(&["eval", "ok.jsonl", "--workload", "helper.sr", "--replay-from", "nowhere"], &dir, &[]);
    assert_eq!((out.status.code(), stderr(&out)), (Some(2), "error: no recordings at nowhere\n".to_string()));
    let out = sr(&["eval", "compare", "ok.jsonl", "ok.jsonl"], &dir, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("ok.jsonl:1:"), "{}", stderr(&out));
}

/// A case's `files` directory outside the dataset's directory (`..`,
/// absolute, or a symlink out) is a dataset error: nothing runs, so no key
/// next to the dataset reaches a case or its model.
#[tokio::test(flavor = "multi_thread")]
async fn a_files_directory_outside_the_dataset_is_refused_before_anything_runs() {
    let dir = temp("files-outside");
    std::fs::create_dir_all(dir.join("keys")).unwrap();
    std::fs::write(dir.join("keys/id_rsa"), "-----BEGIN PRIVATE KEY-----").unwrap();
    std::fs::create_dir_all(dir.join("set")).unwrap();
    std::os::unix::fs::symlink(dir.join("keys"), dir.join("set/linked")).unwrap();
    let server = MockServer::start().await;
    server.push(MockReply::tool_call("r1", "read_file", json!({"path": "id_rsa"})));
    server.push(MockReply::text("done"));
    let keys = dir.join("keys").display().to_string();
    for (files, place) in [("../keys", "data.jsonl:1:51"), (keys.as_str(), "data.jsonl:1:"), ("linked", "data.jsonl:1")]
    {
        let line = json!({"id": "c1", "prompt": "read id_rsa", "files": files, "expect": []});
        std::fs::write(dir.join("set/data.jsonl"), line.to_string()).unwrap();
        let out = sr(
            &["eval", "data.jsonl", "--workload", "../helper.sr", "--out", "o"],
            &dir.join("set"),
            &mock_env(&server),
        );
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).starts_with(&format!("error: {place}")) && stderr(&out).contains("files: "),
            "{}",
            stderr(&out)
        );
        assert!(!dir.join("set/o").exists());
    }
    assert!(server.requests().is_empty(), "no case ran");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_case_that_times_out_fails_with_its_reason_after_its_retries() {
    let dir = temp("timeout");
    std::fs::write(dir.join("data.jsonl"), r#"{"id": "slow", "prompt": "p", "expect": [{"contains": "ok"}]}"#).unwrap();
    let server = MockServer::start().await;
    for _ in 0..2 {
        server.push(MockReply::text("ok").delay(Duration::from_secs(60)));
    }
    let started = Instant::now();
    // Long enough for each attempt's request to reach the server on a loaded
    // machine, far shorter than the replies' delay.
    let args = ["eval", "data.jsonl", "--workload", "helper.sr", "--timeout", "4", "--retries", "1", "--out", "o"];
    let out = sr(&args, &dir, &mock_env(&server));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(40));
    assert_eq!(server.requests().len(), 2, "one attempt and one retry");
    let case = &results(&dir.join("o/results.json"))["cases"][0];
    assert_eq!((&case["passed"], &case["error"]), (&json!(false), &json!("timeout")));
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_writes_the_results_of_the_finished_cases_and_says_so() {
    let dir = temp("ctrl-c");
    let lines = [r#"{"id": "a", "prompt": "p", "expect": []}"#, r#"{"id": "b", "prompt": "p", "expect": []}"#];
    std::fs::write(dir.join("data.jsonl"), lines.join("\n")).unwrap();
    let server = MockServer::start().await;
    server.push(MockReply::text("quick"));
    server.push(MockReply::text("never").delay(Duration::from_secs(120)));
    let mut child = command(
        &["eval", "data.jsonl", "--workload", "helper.sr", "--jobs", "1", "--out", "o"],
        &dir,
        &mock_env(&server),
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    assert!(first.starts_with("[1/2] PASS "), "{first}");
    // The second case is waiting for its model.
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.requests().len() < 2 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let started = Instant::now();
    // SAFETY: signalling the child this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(
        rest.contains("interrupted: 1 of 2 case runs finished; the results are in o/results.json (sr eval --resume o runs the rest)"),
        "{rest}"
    );
    let partial = results(&dir.join("o/results.json"));
    let cases = partial["cases"].as_array().unwrap().clone();
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0]["output"], json!("quick"));
    // The case the interruption cut off is missing, not failed, and every report says so first.
    assert_eq!((&partial["planned"], &partial["finished"]), (&json!(2), &json!(1)));
    assert_eq!(partial["missing"][0]["id"], json!("b"), "{partial}");
    let report = std::fs::read_to_string(dir.join("o/report.md")).unwrap();
    assert!(report.lines().next().unwrap().contains("(partial: 1 of 2 cases)"), "{report}");
    let page = std::fs::read_to_string(dir.join("o/report.html")).unwrap();
    assert!(page.contains("partial: 1 of 2 cases"), "the page says it first");

    // --resume runs only the missing case, as the run was asked, and rewrites the reports.
    server.push(MockReply::text("second"));
    let before = server.requests().len();
    let out = sr(&["eval", "--resume", "o"], &dir, &mock_env(&server));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests().len(), before + 1, "only b ran again");
    let whole = results(&dir.join("o/results.json"));
    let outputs: Vec<&Value> = whole["cases"].as_array().unwrap().iter().map(|c| &c["output"]).collect();
    assert_eq!(outputs, [&json!("quick"), &json!("second")]);
    assert_eq!((&whole["finished"], &whole["missing"]), (&json!(2), &json!([])));
    let report = std::fs::read_to_string(dir.join("o/report.md")).unwrap();
    assert!(!report.contains("partial"), "{report}");
    // A complete run has nothing to resume; a changed dataset cannot be resumed.
    let again = sr(&["eval", "--resume", "o"], &dir, &offline_env());
    assert!(again.status.success(), "{}", stderr(&again));
    std::fs::write(dir.join("data.jsonl"), lines[0]).unwrap();
    let changed = sr(&["eval", "--resume", "o"], &dir, &offline_env());
    assert_eq!(changed.status.code(), Some(2));
    assert!(stderr(&changed).contains("changed since the run being resumed"), "{}", stderr(&changed));
    let mixed = sr(&["eval", "--resume", "o", "--epochs", "2"], &dir, &offline_env());
    assert_eq!(mixed.status.code(), Some(2), "{}", stderr(&mixed));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_judge_is_recorded_with_its_case_and_replayed_offline() {
    let dir = temp("judge");
    let case = r#"{"id": "polite", "prompt": "status of order 7?", "expect": [{"judge": "Is the answer polite and about order 7?", "model": "openai/gpt-4o", "min_score": 0.7}]}"#;
    std::fs::write(dir.join("data.jsonl"), case).unwrap();
    let server = MockServer::start().await;
    server.push(MockReply::text("Order 7 has shipped, thank you for waiting."));
    server.push(MockReply::text(r#"{"score": 0.9, "reason": "Polite, and it answers about order 7."}"#));
    let args = ["eval", "data.jsonl", "--workload", "helper.sr", "--record-to", "rec", "--out", "live"];
    let out = sr(&args, &dir, &mock_env(&server));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].body["model"], json!("gpt-4o"));
    assert!(requests[1].body.to_string().contains("Is the answer polite and about order 7?"));
    let live = results(&dir.join("live/results.json"));
    let verdict = &live["cases"][0]["scores"][0];
    assert_eq!(
        verdict,
        &json!({"kind": "judge", "passed": true, "score": 0.9, "detail": "0.90 (pass at 0.70): Polite, and it answers about order 7."})
    );
    assert!(dir.join("rec/polite/helper/default.judge.jsonl").is_file());

    let replay = ["eval", "data.jsonl", "--workload", "helper.sr", "--replay-from", "rec", "--out", "replay"];
    let out = sr(&replay, &dir, &offline_env());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(scores(&results(&dir.join("replay/results.json"))), scores(&live));
}

/// `sr eval … 2>&1 | head`: the reader goes away before the run prints
/// anything; the evaluation still finishes, exits as it would have and
/// writes its results and reports.
#[tokio::test(flavor = "multi_thread")]
async fn a_closed_stdout_and_stderr_lose_no_results() {
    let dir = temp("closed-pipes");
    let lines = [
        r#"{"id": "a", "prompt": "p", "expect": [{"contains": "ok"}]}"#,
        r#"{"id": "b", "prompt": "p", "expect": []}"#,
    ];
    std::fs::write(dir.join("data.jsonl"), lines.join("\n")).unwrap();
    let server = MockServer::start().await;
    server.push(MockReply::text("ok"));
    server.push(MockReply::text("ok"));
    let mut child = command(
        &["eval", "data.jsonl", "--workload", "helper.sr", "--jobs", "1", "--out", "o"],
        &dir,
        &mock_env(&server),
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Both readers close at once: every write the run makes meets a broken pipe.
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let written = results(&dir.join("o/results.json"));
    assert_eq!((&written["complete"], &written["summary"][0]["passed"]), (&json!(true), &json!(2)));
    assert!(dir.join("o/report.md").is_file() && dir.join("o/report.html").is_file());
    // The other commands print through the same closed pipes.
    for args in [
        &["eval", "compare", "o/results.json", "o/results.json"][..],
        &["eval", "report", "o/results.json", "--out", "r"],
    ] {
        let mut child = command(args, &dir, &[]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        drop(child.stdout.take());
        drop(child.stderr.take());
        assert_eq!(child.wait().unwrap().code(), Some(0), "{args:?}");
    }
    assert!(dir.join("r/report.md").is_file());
}

/// An entry no workload has, a provider nobody knows and every problem of a
/// dataset are reported together before any case runs: exit 2, no output
/// directory, no model called.
#[tokio::test(flavor = "multi_thread")]
async fn every_problem_is_reported_before_any_case_runs() {
    let dir = temp("validate");
    let bad = [
        r#"{"id": "c1", "prompt": "p", "expect": [{"contians": "x"}]}"#,
        r#"{"id": "c2", "prompt": "p", "expect": [{"regex": "("}]}"#,
        r#"{"id": "c3", "prompt": "p", "expect": [{"contains": "ok"}]}"#,
        r#"{"id": "c3", "prompt": "p", "expect": []}"#,
    ];
    std::fs::write(dir.join("data.jsonl"), bad.join("\n")).unwrap();
    let server = MockServer::start().await;
    let args =
        ["eval", "data.jsonl", "--workload", "helper.sr", "--entry", "mian", "--model", "nowhere/m1", "--out", "o"];
    let out = sr(&args, &dir, &mock_env(&server));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let errors = stderr(&out);
    for expected in [
        "error: data.jsonl:1:",
        "unknown scorer `contians`: did you mean `contains`?",
        "error: data.jsonl:2:",
        "bad regex",
        "error: data.jsonl:4:",
        "--entry mian: helper.sr has no flow, agent or prompt named `mian`",
        "nowhere/m1",
    ] {
        assert!(errors.contains(expected), "{expected:?} in\n{errors}");
    }
    assert!(!dir.join("o").exists());
    assert!(server.requests().is_empty(), "no case ran");
}
