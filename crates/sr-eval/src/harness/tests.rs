use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;
use sr_llm::{ChatRequest, ChatStream, Provider};
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results, conforming, user_says};

use super::*;
use crate::dataset::parse_jsonl;

fn program(dir: &Path) -> Arc<Compiled> {
    program_of(dir, "helper.sr", sr_testing::HELPER_WORKLOAD)
}

fn program_of(dir: &Path, name: &str, text: &str) -> Arc<Compiled> {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    sr_runtime::workload::load(&mut sr_hir::RootDatabase::default(), &path).map_err(|_| "compile").unwrap()
}

fn cases(jsonl: &str) -> Vec<Case> {
    parse_jsonl(jsonl, Path::new("t.jsonl"), Path::new(".")).unwrap()
}

fn options(out: &Path, provider: Arc<dyn Provider>, jobs: usize) -> Options {
    Options {
        jobs,
        timeout: None,
        retries: 0,
        out: out.to_path_buf(),
        models: Models::Provider(provider),
        run: RunOptions { max_turns: 5, ..RunOptions::default() },
        reduce: Reduce::Mean,
    }
}

/// Every case of every variant once.
async fn go(variants: Vec<Variant>, cases: Vec<Case>, options: Options, stop: impl Future<Output = ()>) -> Ran {
    let planned = plan(&variants, &cases, 1);
    run(variants, cases, planned, options, &|_| {}, stop).await
}

async fn run_all(dir: &Path, cases: Vec<Case>, options: Options) -> Ran {
    let variants = variants(&[("helper.sr".to_string(), program(dir))], &[], &[]);
    go(variants, cases, options, std::future::pending()).await
}

fn writer() -> Arc<dyn Provider> {
    let write = |r: &ChatRequest| user_says("write")(r) && !after_tool_results()(r);
    Arc::new(
        conforming("order 7 has shipped")
            .always(write, Reply::Calls(vec![("write_file".into(), json!({"path": "out.txt", "content": "order 7"}))]))
            .always(after_tool_results(), Reply::Text("written".into())),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_case_runs_in_its_own_work_directory_and_is_scored() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let set = cases(
        r#"{"id": "writes", "prompt": "write the report", "expect": [{"file": "out.txt", "contains": "7"}, {"tool_called": "write_file", "args": {"path": "out.txt"}}, {"equals": "written"}]}
{"id": "reads", "prompt": "status of order 7?", "files": {"in/order.txt": "7"}, "expect": [{"contains": "shipped"}, {"file": "in/order.txt", "equals": "7"}, {"file": "out.txt"}, {"tool_called": "write_file", "called": false}]}"#,
    );
    let ran = run_all(dir.path(), set, options(&out, writer(), 2)).await;
    assert!(!ran.interrupted);
    let [writes, reads] = &ran.results.cases[..] else { panic!("{:?}", ran.results.cases) };
    assert_eq!(writes.id, "writes");
    assert!(writes.passed, "{:?}", writes.scores);
    assert_eq!((writes.score, writes.model_calls), (1.0, 2));
    assert_eq!(writes.tokens.input, 20);
    // The other case's file is not in this one's work directory.
    assert!(!reads.passed);
    let failed: Vec<_> = reads.scores.iter().filter(|s| !s.passed).map(|s| s.detail.as_str()).collect();
    assert_eq!(failed, ["out.txt: no such file"]);
    assert_eq!(reads.score, 0.75);
    assert_eq!(reads.output, json!("order 7 has shipped"));
    assert_eq!(writes.events.as_deref(), Some("cases/writes/helper/default/events.jsonl"));
    let events = std::fs::read_to_string(out.join(writes.events.as_deref().unwrap())).unwrap();
    let kinds: Vec<String> =
        events.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["type"].to_string()).collect();
    assert_eq!(kinds.first().map(String::as_str), Some("\"run_started\""));
    assert_eq!(kinds.last().map(String::as_str), Some("\"run_finished\""));
    assert!(kinds.iter().any(|k| k == "\"tool_call\""));
}

/// Cases share a session store but not a session: no case's model sees
/// another case's conversation (an agent entry point continues its session's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_case_has_a_session_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> =
        (0..3).map(|i| format!(r#"{{"id": "c{i}", "prompt": "question {i}", "expect": []}}"#)).collect();
    let model = Arc::new(conforming("ok"));
    let agent =
        "model main = openai/gpt-4o-mini\nprompt answer: \"\"\"You answer.\"\"\"\nagent:\n    instruction answer\n";
    let variants = variants(&[("answer.sr".to_string(), program_of(dir.path(), "answer.sr", agent))], &[], &[]);
    let options = options(dir.path(), model.clone(), 1);
    let ran = go(variants, cases(&lines.join("\n")), options, std::future::pending()).await;
    assert!(ran.results.cases.iter().all(|c| c.passed && c.error.is_none()), "{:?}", ran.results.cases);
    let mut conversations: Vec<Vec<String>> =
        model.requests().iter().map(|r| r.messages.iter().map(|m| m.text()).collect()).collect();
    conversations.sort();
    assert_eq!(conversations, [["question 0"], ["question 1"], ["question 2"]]);
}

/// Answers once `wanted` requests are in flight at the same time, and keeps
/// the most it saw in flight.
struct Gate {
    wanted: usize,
    in_flight: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

impl Provider for Gate {
    fn chat(&self, _: ChatRequest) -> ChatStream {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        let (in_flight, most, wanted) = (self.in_flight.clone(), self.most.clone(), self.wanted);
        futures::stream::once(async move {
            let deadline = Instant::now() + Duration::from_secs(20);
            while most.load(Ordering::SeqCst) < wanted && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            in_flight.fetch_sub(1, Ordering::SeqCst);
            let reply = if most.load(Ordering::SeqCst) >= wanted { "together" } else { "alone" };
            conforming(reply).chat(ChatRequest::new("m", vec![]))
        })
        .flatten()
        .boxed()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_cases_run_at_once_and_no_more() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = 4;
    let lines: Vec<String> = (0..12)
        .map(|i| format!(r#"{{"id": "c{i}", "prompt": "p{i}", "expect": [{{"equals": "together"}}]}}"#))
        .collect();
    let most = Arc::new(AtomicUsize::new(0));
    let gate = Gate { wanted: jobs, in_flight: Arc::new(AtomicUsize::new(0)), most: most.clone() };
    let started = Instant::now();
    let ran = run_all(dir.path(), cases(&lines.join("\n")), options(dir.path(), Arc::new(gate), jobs)).await;
    // Every case saw `jobs` runs in flight: the first `jobs` waited for each other.
    assert!(ran.results.cases.iter().all(|c| c.passed), "{:?}", ran.results.cases);
    assert_eq!(most.load(Ordering::SeqCst), jobs);
    assert!(started.elapsed() < Duration::from_secs(15));
}

/// Answers after a long wait when the prompt says "slow", and counts the
/// waits that were given up (their streams dropped).
struct Slow {
    calls: AtomicUsize,
    dropped: Arc<AtomicUsize>,
    fast: ScriptedProvider,
}

impl Slow {
    fn new() -> Slow {
        Slow { calls: AtomicUsize::new(0), dropped: Arc::new(AtomicUsize::new(0)), fast: conforming("ok") }
    }
}

struct CountDrop(Arc<AtomicUsize>);

impl Drop for CountDrop {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Provider for Slow {
    fn chat(&self, request: ChatRequest) -> ChatStream {
        if user_says("slow")(&request) {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let counted = CountDrop(self.dropped.clone());
            let wait = async move {
                let _counted = counted;
                tokio::time::sleep(Duration::from_secs(60)).await
            };
            return futures::stream::once(wait).flat_map(|_| futures::stream::empty()).boxed();
        }
        self.fast.chat(request)
    }
}

/// Waits up to five seconds for `done`.
async fn eventually(done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    done()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_case_fails_with_its_reason_after_its_retries_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let set = cases(
        r#"{"id": "slow", "prompt": "slow one", "expect": [{"contains": "ok"}]}
{"id": "fast", "prompt": "fast one", "expect": [{"contains": "ok"}]}"#,
    );
    let slow = Arc::new(Slow::new());
    let mut options = options(dir.path(), slow.clone(), 2);
    // Room for the fast case on a busy machine.
    options.timeout = Some(Duration::from_secs(1));
    options.retries = 2;
    let started = Instant::now();
    let ran = run_all(dir.path(), set, options).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let [slow_case, fast_case] = &ran.results.cases[..] else { panic!() };
    assert_eq!((slow_case.passed, slow_case.score, slow_case.error.as_deref()), (false, 0.0, Some("timeout")));
    assert_eq!(slow.calls.load(Ordering::SeqCst), 3, "one attempt and two retries");
    assert!(fast_case.passed);
    assert_eq!(ran.results.summary[0].passed, 1);
    // No timed-out attempt is left waiting for its model in the background.
    assert!(eventually(|| slow.dropped.load(Ordering::SeqCst) == 3).await, "{:?}", slow.dropped);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_that_does_not_answer_fails_its_scorer_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    // The run answers at once; the judge's prompt says "slow" (the rubric) and waits.
    let set = cases(
        r#"{"id": "judged", "prompt": "fast one", "expect": [{"contains": "ok"}, {"judge": "slow rubric", "model": "m"}]}"#,
    );
    let slow = Arc::new(Slow::new());
    let mut options = options(dir.path(), slow.clone(), 1);
    // Room for the run itself on a busy machine.
    options.timeout = Some(Duration::from_secs(2));
    let started = Instant::now();
    let ran = run_all(dir.path(), set, options).await;
    assert!(started.elapsed() < Duration::from_secs(15));
    let case = &ran.results.cases[0];
    assert_eq!(case.error, None, "{:?}", case.scores);
    let verdicts: Vec<(&str, bool, &str)> =
        case.scores.iter().map(|s| (s.kind.as_str(), s.passed, s.detail.as_str())).collect();
    assert_eq!(verdicts[1], ("judge", false, "timeout"));
    assert_eq!((case.passed, case.score), (false, 0.5));
    assert_eq!(slow.calls.load(Ordering::SeqCst), 1);
}

/// A judge's model calls count in its case's tokens and cost (and so in its
/// variant's), not in its model calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judges_tokens_and_cost_are_its_cases() {
    let dir = tempfile::tempdir().unwrap();
    let set = cases(
        r#"{"id": "plain", "prompt": "status?", "expect": [{"contains": "ok"}]}
{"id": "judged", "prompt": "status?", "expect": [{"contains": "ok"}, {"judge": "Is it ok?", "model": "openai/judge"}]}"#,
    );
    let verdict = r#"{"score": 0.8, "reason": "it says ok"}"#;
    let provider = conforming("ok").always(|r: &ChatRequest| r.model == "openai/judge", Reply::Text(verdict.into()));
    let mut options = options(dir.path(), Arc::new(provider), 1);
    let mut prices = sr_llm::PriceTable::new();
    let price = |usd| sr_llm::Price { input: usd, output: usd, cache_read: None, cache_write: None };
    prices.insert("openai/gpt-4o-mini", price(1.0));
    prices.insert("openai/judge", price(100.0));
    options.run.prices = Some(Arc::new(prices));
    let ran = run_all(dir.path(), set, options).await;
    let [plain, judged] = &ran.results.cases[..] else { panic!("{:?}", ran.results.cases) };
    assert!(judged.passed, "{:?}", judged.scores);
    assert_eq!(judged.scores[1].detail, "0.80 (pass at 0.50): it says ok");
    // The scripted model takes 10 input tokens and len / 4 + 1 output tokens.
    let judge_tokens = Tokens { input: 10, output: verdict.len() as u64 / 4 + 1 };
    assert_eq!(plain.tokens, Tokens { input: 10, output: 1 });
    assert_eq!(judged.tokens, Tokens { input: 10 + judge_tokens.input, output: 1 + judge_tokens.output });
    assert_eq!((plain.model_calls, judged.model_calls), (1, 1));
    let run_cost = 11.0 / 1e6;
    let judge_cost = 100.0 * (judge_tokens.input + judge_tokens.output) as f64 / 1e6;
    let close = |got: Option<f64>, want: f64| got.is_some_and(|got| (got - want).abs() < 1e-12);
    assert!(close(plain.cost_usd, run_cost), "{:?}", plain.cost_usd);
    assert!(close(judged.cost_usd, run_cost + judge_cost), "{:?}", judged.cost_usd);
    let summary = &ran.results.summary[0];
    assert_eq!(summary.tokens, Tokens { input: 30, output: 2 + judge_tokens.output });
    assert!(close(summary.cost_usd, 2.0 * run_cost + judge_cost), "{:?}", summary.cost_usd);
}

const HOST_SHELL: &str = r#"model main = openai/gpt-4o-mini
tool sh = builtin streetrace.cli.host
prompt runner: """You run commands."""
agent:
    instruction runner
    tools sh
"#;

/// The bytes in `path` (0 when it is not there).
fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_case_stops_running_and_its_processes_are_killed() {
    let dir = tempfile::tempdir().unwrap();
    let beat = dir.path().join("beat");
    // The loop runs in a subshell, another process of the command's group than
    // the `sh` the tool started.
    let script = format!("(while true; do echo x >> {}; sleep 0.02; done) & wait", beat.display());
    let first = |r: &ChatRequest| !after_tool_results()(r);
    let call = ("execute_cli_command".to_string(), json!({"command": ["sh", "-c", script]}));
    let provider: Arc<dyn Provider> = Arc::new(conforming("done").always(first, Reply::Calls(vec![call])));
    let mut options = options(dir.path(), provider, 1);
    // Room for the run to reach its command on a busy machine.
    options.timeout = Some(Duration::from_secs(2));
    options.run.allow_host_tools = true;
    options.run.command_timeout = Duration::from_secs(120);
    let variants = variants(&[("host.sr".to_string(), program_of(dir.path(), "host.sr", HOST_SHELL))], &[], &[]);
    let set = cases(r#"{"id": "loops", "prompt": "run it", "expect": []}"#);
    let started = Instant::now();
    let ran = go(variants, set, options, std::future::pending()).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(ran.results.cases[0].error.as_deref(), Some("timeout"));
    assert!(size(&beat) > 0, "the command ran");
    // Nothing writes to the file any more.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let after = size(&beat);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(size(&beat), after, "the command's loop outlived its case");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_run_is_a_failed_case_and_stop_returns_the_results_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let broken: Arc<dyn Provider> = Arc::new(ScriptedProvider::new());
    let set = cases(r#"{"id": "c1", "prompt": "p", "expect": []}"#);
    let ran = run_all(dir.path(), set, options(dir.path(), broken, 1)).await;
    let case = &ran.results.cases[0];
    assert!(!case.passed);
    assert!(case.error.as_deref().unwrap_or_default().contains("the script has no answer"), "{:?}", case.error);

    let lines: Vec<String> =
        (0..6).map(|i| format!(r#"{{"id": "c{i}", "prompt": "slow {i}", "expect": []}}"#)).collect();
    let slow = Arc::new(Slow::new());
    let variants = variants(&[("helper.sr".to_string(), program(dir.path()))], &[], &[]);
    let started = Instant::now();
    let stop = tokio::time::sleep(Duration::from_millis(300));
    let ran = go(variants, cases(&lines.join("\n")), options(dir.path(), slow, 2), stop).await;
    assert!(ran.interrupted);
    assert!(ran.results.cases.is_empty());
    assert!(started.elapsed() < Duration::from_secs(10));
    // The runs cut off are missing, not failed: the results say they are partial.
    assert_eq!((ran.results.complete, ran.results.planned, ran.results.missing.len()), (false, 6, 6));
    assert_eq!(ran.results.partial().as_deref(), Some("partial: 0 of 6 cases"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_epochs_each_case_runs_that_many_times_each_run_with_its_events() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let set = cases(
        r#"{"id": "c1", "prompt": "status?", "expect": [{"contains": "ok"}]}
{"id": "c2", "prompt": "status?", "expect": [{"contains": "no"}]}"#,
    );
    let variants = variants(&[("helper.sr".to_string(), program(dir.path()))], &[], &[]);
    let planned = plan(&variants, &set, 3);
    assert_eq!(planned.len(), 6);
    let ran =
        run(variants, set, planned, options(&out, Arc::new(conforming("ok")), 2), &|_| {}, std::future::pending())
            .await;
    let runs: Vec<(&str, u32, bool)> = ran.results.cases.iter().map(|c| (c.id.as_str(), c.epoch, c.passed)).collect();
    assert_eq!(
        runs,
        [("c1", 1, true), ("c1", 2, true), ("c1", 3, true), ("c2", 1, false), ("c2", 2, false), ("c2", 3, false)]
    );
    let events: Vec<&str> = ran.results.cases.iter().filter_map(|c| c.events.as_deref()).collect();
    assert_eq!(
        events[..3],
        [
            "cases/c1/helper/default/events.jsonl",
            "cases/c1/helper/default/events.2.jsonl",
            "cases/c1/helper/default/events.3.jsonl"
        ]
    );
    assert!(events.iter().all(|e| out.join(e).is_file()));
    let summary = &ran.results.summary[0];
    assert_eq!((summary.cases, summary.passed, summary.total, summary.pass_rate), (2, 3, 6, 0.5));
    assert!(ran.results.complete);
}

/// A run whose provider panics is a failed case with the reason, not a lost one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_case_whose_run_panics_fails_and_the_others_run() {
    struct Panics;
    impl Provider for Panics {
        fn chat(&self, request: ChatRequest) -> ChatStream {
            assert!(!user_says("boom")(&request), "the provider panics");
            conforming("ok").chat(request)
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let set = cases(
        r#"{"id": "boom", "prompt": "boom", "expect": [{"contains": "ok"}]}
{"id": "fine", "prompt": "fine", "expect": [{"contains": "ok"}]}"#,
    );
    let ran = run_all(dir.path(), set, options(dir.path(), Arc::new(Panics), 1)).await;
    let [boom, fine] = &ran.results.cases[..] else { panic!("{:?}", ran.results.cases) };
    assert!(!boom.passed && boom.error.is_some(), "{boom:?}");
    assert_eq!(boom.scores.len(), 1);
    assert!(fine.passed);
    assert!(ran.results.complete);
}

#[test]
fn filter_and_shard_pick_cases_and_variants_multiply() {
    let lines: Vec<String> = (1..=7).map(|i| format!(r#"{{"id": "c{i}", "prompt": "p", "expect": []}}"#)).collect();
    let ids = |filter: Option<&str>, shard| {
        let filter = filter.map(|f| Regex::new(f).unwrap());
        select(cases(&lines.join("\n")), filter.as_ref(), shard).into_iter().map(|c| c.id).collect::<Vec<_>>()
    };
    assert_eq!(ids(Some("^c[2-4]$"), None), ["c2", "c3", "c4"]);
    assert_eq!(ids(None, Some((1, 3))), ["c1", "c4", "c7"]);
    assert_eq!(ids(None, Some((3, 3))), ["c3", "c6"]);
    // Shards of one dataset cover every case once.
    let mut all: Vec<String> = (1..=3).flat_map(|i| ids(None, Some((i, 3)))).collect();
    all.sort();
    assert_eq!(all, ids(None, None));

    let dir = tempfile::tempdir().unwrap();
    let p = program(dir.path());
    let workloads = [("a/review.sr".to_string(), p.clone()), ("b/review.sr".to_string(), p)];
    let vs = variants(&workloads, &["main".into(), "helper".into()], &["openai/x".into(), "m".into()]);
    assert_eq!(vs.len(), 8);
    let labels: Vec<(String, String)> = vs.iter().map(|v| (v.label.clone(), model_label(v.model.as_deref()))).collect();
    assert_eq!(labels[0], ("review@main".to_string(), "openai_x".to_string()));
    assert_eq!(labels[7], ("review-2@helper".to_string(), "m".to_string()));
}

#[test]
fn variants_whose_models_are_all_at_temperature_zero_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let model = |temperature: &str| {
        format!(
            "model main:\n    provider: openai\n    name: gpt-4o-mini\n    temperature: {temperature}\n\
             prompt answer: \"\"\"You answer.\"\"\"\nagent:\n    instruction answer\n"
        )
    };
    let cold = program_of(dir.path(), "cold.sr", &model("0.0"));
    let warm = program_of(dir.path(), "warm.sr", &model("0.7"));
    let workloads = [("cold.sr".to_string(), cold.clone()), ("warm.sr".to_string(), warm)];
    let all = variants(&workloads, &[], &[]);
    let found: Vec<&str> = temperature_zero(&all).iter().map(|v| v.workload.as_str()).collect();
    assert_eq!(found, ["cold.sr"]);
    // A --model override's temperature is not the workload's to say; a model without one is not at 0.
    assert!(temperature_zero(&variants(&[("cold.sr".to_string(), cold)], &[], &["openai/x".into()])).is_empty());
    assert!(temperature_zero(&variants(&[("h.sr".to_string(), program(dir.path()))], &[], &[])).is_empty());
}

/// A model that links a host file (and a host directory) into its work
/// directory, here through a host command, gets none of it into the results:
/// the `file` scorer and the grading flow's input read through a jail on the
/// work directory. The links are there: the scorers say where they lead.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scorers_never_read_through_a_symlink_the_run_left() {
    let dir = tempfile::tempdir().unwrap();
    let host = tempfile::tempdir().unwrap();
    let secret = "root:$6$host-secret-hash:19000";
    std::fs::write(host.path().join("shadow"), format!("{secret}\n")).unwrap();
    let link = |target: &Path, name: &str| {
        let command = json!({"command": ["ln", "-s", target, name]});
        Reply::Calls(vec![("execute_cli_command".to_string(), command)])
    };
    let first = |r: &ChatRequest| !after_tool_results()(r);
    let provider = ScriptedProvider::new()
        .on(first, vec![link(&host.path().join("shadow"), "report.txt")])
        .on(after_tool_results(), vec![link(host.path(), "hostdir"), Reply::Text("done".into())]);
    std::fs::write(
        dir.path().join("grade.sr"),
        "flow main:\n    $seen = json_parse($input_prompt)\n    return {score: 1, reason: \"files: ${seen.files}\"}\n",
    )
    .unwrap();
    let line = r#"{"id": "leak", "prompt": "go", "expect": [{"file": "report.txt", "equals": "x"}, {"file": "hostdir/shadow", "contains": "root"}, {"flow": "grade.sr"}]}"#;
    let set = parse_jsonl(line, Path::new("t.jsonl"), dir.path()).unwrap();
    let out = dir.path().join("out");
    let mut options = options(&out, Arc::new(provider), 1);
    options.run.allow_host_tools = true;
    let variants = variants(&[("sh.sr".to_string(), program_of(dir.path(), "sh.sr", HOST_SHELL))], &[], &[]);
    let ran = go(variants, set, options, std::future::pending()).await;
    let case = &ran.results.cases[0];
    assert_eq!(case.error, None);
    let details: Vec<&str> = case.scores.iter().map(|s| s.detail.as_str()).collect();
    assert!(details[0].starts_with("report.txt: path 'report.txt' leads outside the work directory"), "{details:?}");
    assert!(details[1].starts_with("hostdir/shadow: path 'hostdir/shadow' leads outside"), "{details:?}");
    assert_eq!(details[2], "1.00 (pass at 0.50): files: {}");
    let written = [
        serde_json::to_string(&ran.results).unwrap(),
        crate::report::markdown(&ran.results),
        crate::html::report(&ran.results, &out),
    ];
    for text in written {
        assert!(!text.contains("host-secret-hash"), "{text}");
    }
}

/// A replayed case's cassette is read through a jail on the replay
/// directory: one that is a symlink out of it fails the case, and nothing of
/// the file it points at reaches the results.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cassettes_are_read_inside_the_replay_directory() {
    let dir = tempfile::tempdir().unwrap();
    let host = tempfile::tempdir().unwrap();
    std::fs::write(host.path().join("secret.jsonl"), "{\"host-secret-line\": 1}\n").unwrap();
    let cassettes = dir.path().join("cassettes");
    std::fs::create_dir_all(cassettes.join("c1/helper")).unwrap();
    std::os::unix::fs::symlink(host.path().join("secret.jsonl"), cassettes.join("c1/helper/default.jsonl")).unwrap();
    std::os::unix::fs::symlink(host.path(), cassettes.join("c2")).unwrap();
    let out = dir.path().join("out");
    let mut options = options(&out, Arc::new(ScriptedProvider::new()), 1);
    options.models = Models::Replay(cassettes);
    let set = cases(
        "{\"id\": \"c1\", \"prompt\": \"p\", \"expect\": []}\n{\"id\": \"c2\", \"prompt\": \"p\", \"expect\": []}",
    );
    let ran = run_all(dir.path(), set, options).await;
    for case in &ran.results.cases {
        let error = case.error.as_deref().unwrap_or_default();
        assert!(error.contains("leads outside"), "{error}");
    }
    let text = serde_json::to_string(&ran.results).unwrap();
    assert!(!text.contains("host-secret-line"), "{text}");
}
