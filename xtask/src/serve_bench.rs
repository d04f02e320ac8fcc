//! `cargo xtask bench serve`: `sr serve` (release) under load, in the embedded
//! mode and then as 3 replicas, each with a state directory of its own, on
//! one PostgreSQL server (a throwaway cluster, `sr_testing::postgres`, that
//! syncs every commit: `fsync=on`). 200 sessions each run a scripted
//! two-agent flow (sr-llm's mock server is the model, answering at once),
//! submitted by 32 clients at a time, each run's events followed on its own
//! stream. With replicas, run N is submitted to replica N, its events
//! followed on replica N+1 and its status read on replica N+2, so every run
//! crosses replicas. Reports throughput (runs/s), API latency p50/p95 (POST
//! /v1/runs, which starts the run's session, and GET /v1/runs/ID), the latency from a run's
//! acceptance to its first streamed event (alone on an idle server, and
//! under the load, where it includes queueing), each server's peak resident
//! memory, and per run of the load: the servers' CPU time and, on
//! PostgreSQL, the statements and the commits the database counted
//! (`Postgres::counted`); each against the target.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};
use sr_llm::mock::{MockReply, MockServer};
use sr_testing::postgres::Postgres;

use crate::ci::step;
use crate::root;

const SESSIONS: usize = 200;
const CLIENTS: usize = 32;
const IDLE_SAMPLES: usize = 30;

/// The two-agent flow of sr-cli's serve tests: a writer, then a reviewer of its draft.
const FLOW: &str = include_str!("../../crates/sr-cli/tests/fixtures/two_agents.sr");

pub fn run() -> Result<(), String> {
    step("cargo", &["build", "--release", "-q", "-p", "sr-cli", "--bin", "sr"], &[])?;
    let target = std::env::var("CARGO_TARGET_DIR").map_or_else(|_| root().join("target"), Into::into);
    let sr = Path::new(&target).join("release/sr");
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(bench(&sr, None))?;
    if !sr_testing::postgres::available() {
        println!("sr serve on PostgreSQL: skipped (no PostgreSQL 15 in /usr/lib/postgresql/15/bin)");
        return Ok(());
    }
    let settings = [sr_testing::postgres::DURABLE, sr_testing::postgres::COUNTING].concat();
    let postgres = sr_testing::postgres::start_with("bench", &settings).ok_or("PostgreSQL did not start")?;
    runtime.block_on(bench(&sr, Some(&postgres)))
}

/// The replicas one deployment runs: one embedded server, or three on
/// PostgreSQL, each with a state directory of its own.
fn replicas(database: Option<&Postgres>) -> Vec<Vec<String>> {
    let Some(database) = database else { return vec![["--state-dir", "state"].map(String::from).to_vec()] };
    let url = database.url();
    (1..=3)
        .map(|n| {
            let (id, state) = (format!("r{n}"), format!("state-r{n}"));
            ["--database-url", &url, "--replica-id", &id, "--state-dir", &state].map(String::from).to_vec()
        })
        .collect()
}

struct Served {
    child: std::process::Child,
    base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(sr: &Path, dir: &Path, mock: &MockServer, extra: &[String]) -> Result<Served, String> {
    let mut child = Command::new(sr)
        .args(["serve", "flow.sr", "--bind", "127.0.0.1:0", "--workers", "8"])
        .args(extra)
        .current_dir(dir)
        .env("OPENAI_BASE_URL", format!("{}/v1", mock.url()))
        .env("OPENAI_API_KEY", "bench-key-0123456789")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", sr.display()))?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    let base = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(url) = line.strip_prefix("sr serve: listening on ") {
                    break url.to_string();
                }
            }
            _ => return Err("sr serve did not start".to_string()),
        }
    };
    // Keep reading the log so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Ok(Served { child, base })
}

/// One deployment's figures: embedded without a database.
async fn bench(sr: &Path, database: Option<&Postgres>) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("sr-serve-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("flow.sr"), FLOW).map_err(|e| e.to_string())?;
    let mock = MockServer::start().await;
    for _ in 0..2 * (SESSIONS + IDLE_SAMPLES) {
        mock.push(MockReply::chunks(["Hello, ", "dear ", "reader."]));
    }
    let mut served = Vec::new();
    for extra in replicas(database) {
        served.push(start(sr, &dir, &mock, &extra)?);
    }
    let client = reqwest::Client::new();
    let bases: Arc<Vec<String>> = Arc::new(served.iter().map(|s| s.base.clone()).collect());

    // Alone on an idle server: acceptance to first event.
    let mut idle = Vec::new();
    for n in 0..IDLE_SAMPLES {
        idle.push(one_run(&client, &bases, n, None).await?.first_event);
    }

    let api = Arc::new(std::sync::Mutex::new(Vec::new()));
    let counter = database.map(Postgres::counter);
    let cpu_before: Vec<Option<u64>> = served.iter().map(|s| cpu_ticks(s.child.id())).collect();
    let started = Instant::now();
    let semaphore = Arc::new(tokio::sync::Semaphore::new(CLIENTS));
    let mut tasks = Vec::new();
    for n in 0..SESSIONS {
        let permit = semaphore.clone().acquire_owned().await.map_err(|e| e.to_string())?;
        let (client, bases, api) = (client.clone(), bases.clone(), api.clone());
        tasks.push(tokio::spawn(async move {
            let run = one_run(&client, &bases, n, Some(&api)).await;
            drop(permit);
            run
        }));
    }
    let mut loaded = Vec::new();
    for task in tasks {
        let run = task.await.map_err(|e| e.to_string())??;
        loaded.push(run.first_event);
    }
    let elapsed = started.elapsed();
    let work = database.zip(counter.as_ref()).map(|(database, counter)| database.counted(counter));
    let cpu: Option<u64> =
        served.iter().zip(&cpu_before).map(|(s, before)| Some(cpu_ticks(s.child.id())? - (*before)?)).sum();
    let memory: Vec<Option<u64>> = served.iter().map(|s| peak_memory(s.child.id())).collect();
    drop(served);
    let _ = std::fs::remove_dir_all(&dir);

    let mut api = api.lock().unwrap().clone();
    let (deployment, target) = match bases.len() {
        1 => ("embedded (SQLite)".to_string(), 150),
        n => (format!("{n} replicas on one PostgreSQL 15 (fsync on), a state directory each"), 100),
    };
    println!("sr serve, {deployment}, --workers 8: {SESSIONS} sessions × a two-agent flow, {CLIENTS} clients");
    println!(
        "  throughput            {:.1} runs/s ({SESSIONS} runs in {:.2} s; target ≥ {target})",
        SESSIONS as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64()
    );
    println!(
        "  API latency           p50 {} p95 {} ({} requests)",
        ms(percentile(&mut api, 0.5)),
        ms(percentile(&mut api, 0.95)),
        api.len()
    );
    println!("  first event, idle     p50 {} p95 {}", ms(percentile(&mut idle, 0.5)), ms(percentile(&mut idle, 0.95)));
    println!(
        "  first event, loaded   p50 {} p95 {} (includes queueing)",
        ms(percentile(&mut loaded, 0.5)),
        ms(percentile(&mut loaded, 0.95))
    );
    let memory: Vec<String> = memory
        .iter()
        .map(|kb| kb.map_or("unknown".to_string(), |kb| format!("{:.1} MiB", kb as f64 / 1024.0)))
        .collect();
    println!("  peak resident memory  {} (each server)", memory.join(" / "));
    let per_run = |n: u64| n as f64 / SESSIONS as f64;
    if let Some(ticks) = cpu {
        // /proc counts CPU time in USER_HZ ticks, 100 a second on Linux.
        println!("  CPU per run           {:.1} ms (the servers' user and system time)", per_run(ticks) * 10.0);
    }
    if let Some(work) = work {
        println!(
            "  SQL per run           {:.1} statements ({:.1} of them BEGIN/COMMIT; target ≤ 30), {:.1} commits (target ≤ 6)",
            per_run(work.statements),
            per_run(work.transaction_control),
            per_run(work.commits)
        );
    }
    Ok(())
}

struct RunTimes {
    first_event: Duration,
}

/// A run in a session of its own, and its event stream to the end; the `n`th run
/// asks replica `n`, follows the events on the next and reads the end on the
/// one after (all one server in the embedded mode).
async fn one_run(
    client: &reqwest::Client,
    bases: &[String],
    n: usize,
    api: Option<&std::sync::Mutex<Vec<Duration>>>,
) -> Result<RunTimes, String> {
    let base = |k: usize| &bases[(n + k) % bases.len()];
    let timed = |at: Instant| {
        if let Some(api) = api {
            api.lock().unwrap().push(at.elapsed());
        }
    };
    // A run without a session starts a new one: its submission makes both.
    let at = Instant::now();
    let body = json!({"workload": "flow", "prompt": "Ada"});
    let run = post(client, &format!("{}/v1/runs", base(0)), body).await?;
    timed(at);
    let accepted = Instant::now();
    let id = run["id"].as_str().ok_or_else(|| format!("no run id in {run}"))?;
    let response = client.get(format!("{}/v1/runs/{id}/events", base(1))).send().await.map_err(|e| e.to_string())?;
    let mut body = response.bytes_stream();
    let mut first = None;
    let mut text = String::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| e.to_string())?;
        first.get_or_insert_with(|| accepted.elapsed());
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    if !text.contains("\"type\":\"run_finished\"") || !text.contains("\"status\":\"completed\"") {
        return Err(format!("run {id} did not complete: {}", &text[text.len().saturating_sub(500)..]));
    }
    let at = Instant::now();
    let shown: Value = client
        .get(format!("{}/v1/runs/{id}", base(2)))
        .send()
        .await
        .map_err(|e| e.to_string())?
        .json()
        .await
        .map_err(|e| e.to_string())?;
    timed(at);
    if shown["status"] != "done" {
        return Err(format!("run {id}: {shown}"));
    }
    Ok(RunTimes { first_event: first.unwrap_or_default() })
}

async fn post(client: &reqwest::Client, url: &str, body: Value) -> Result<Value, String> {
    let response = client.post(url).json(&body).send().await.map_err(|e| e.to_string())?;
    let status = response.status();
    let answer: Value = response.json().await.map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("{url}: {status} {answer}"));
    }
    Ok(answer)
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples.get(((samples.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// The process's CPU time so far (user and system), in USER_HZ ticks.
fn cpu_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields 14 and 15 (utime, stime), counted after the command's closing parenthesis.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// The process's peak resident set (VmHWM), in KiB.
fn peak_memory(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
