//! `cargo xtask simulate`: generated workflows (`sr_testing::simulate`) run
//! live against a scripted model (where no call may be in doubt: nothing
//! crashed), then checked by the oracles: a replay is
//! identical with no requests, a run killed after any journal line and
//! resumed makes every effect once and ends with the same files, a fork
//! makes no requests before its step. A failing case is shrunk and printed
//! with its seed.

mod model;
mod project;
mod travel;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;
use sr_llm::mock::MockServer;
use sr_testing::random::Rng;
use sr_testing::simulate::{Feature, KNOWN_ESCAPES, KnownEscape, Workflow, generate, shrink};

use project::{Ended, Project, journal_lines};

struct Options {
    seed: u64,
    cases: usize,
    budget: Duration,
    size: usize,
    kills: usize,
    features: Vec<Feature>,
    oracles: Vec<&'static str>,
    /// Oracles skipped on workflows with a feature (known escapes).
    skipped: Vec<(&'static str, Feature)>,
    /// Keep the scratch directories (the last case's runs) for a look.
    keep: bool,
}

fn options(args: &[String]) -> Result<Options, String> {
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_secs());
    let mut o = Options {
        seed,
        cases: 1000,
        budget: Duration::from_secs(100),
        size: 8,
        kills: 4,
        features: Vec::new(),
        oracles: Vec::new(),
        skipped: Vec::new(),
        keep: false,
    };
    let mut only: Option<Vec<Feature>> = None;
    let mut without = Vec::new();
    let mut all = false;
    let mut args = args.iter();
    let features = |list: &str| -> Result<Vec<Feature>, String> {
        list.split(',').map(|n| Feature::from_name(n).ok_or(format!("no feature {n}"))).collect()
    };
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        let number = |v: &String| v.parse::<u64>().map_err(|e| format!("{arg}: {e}"));
        match arg.as_str() {
            "--seed" => o.seed = number(value()?)?,
            "--cases" => o.cases = number(value()?)? as usize,
            "--budget" => o.budget = Duration::from_secs(number(value()?)?),
            "--size" => o.size = number(value()?)? as usize,
            "--kills" => o.kills = number(value()?)? as usize,
            "--only" => only = Some(features(value()?)?),
            "--without" => without = features(value()?)?,
            "--all" => all = true,
            "--keep" => o.keep = true,
            _ => return Err(format!("unknown argument {arg}")),
        }
    }
    o.features = only.unwrap_or_else(|| Feature::ALL.to_vec());
    let escapes: Vec<&KnownEscape> = KNOWN_ESCAPES.iter().filter(|_| !all).collect();
    o.features.retain(|f| !without.contains(f) && !escapes.iter().any(|k| k.feature == Some(*f) && k.oracle.is_none()));
    o.oracles =
        ORACLES.into_iter().filter(|o| !escapes.iter().any(|k| k.oracle == Some(*o) && k.feature.is_none())).collect();
    o.skipped = escapes.iter().filter_map(|k| Some((k.oracle?, k.feature?))).collect();
    Ok(o)
}

/// The oracles, in the order a case meets them.
const ORACLES: [&str; 6] = ["live", "replay", "kill-resume", "resumed-replay", "fork", "time-travel"];

#[derive(Default)]
struct Figures {
    cases: usize,
    invalid: usize,
    passed: BTreeMap<&'static str, usize>,
    failed: BTreeMap<&'static str, usize>,
    requests: usize,
    mcp_effects: usize,
    files: usize,
    kills: usize,
    /// Forks from right after a call the run cancelled.
    cancelled_forks: usize,
}

pub fn run(args: &[String]) -> Result<(), String> {
    let o = options(args)?;
    let sr = sr_binary()?;
    let names: Vec<&str> = o.features.iter().map(|f| f.name()).collect();
    println!("simulate: seed {} (rerun: cargo xtask simulate --seed {}), budget {:?}", o.seed, o.seed, o.budget);
    println!("simulate: features {}", names.join(","));
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let server = runtime.block_on(MockServer::start());
    let failed = model::script(&server);
    let root = std::env::temp_dir().join(format!("sr-simulate-{}", std::process::id()));
    let handle = runtime.handle().clone();
    let (oracles, skipped) = (o.oracles.clone(), o.skipped.clone());
    let sim = Sim { sr, server, failed, root: root.clone(), kills: o.kills, oracles, skipped, handle };
    println!("simulate: oracles {}", o.oracles.join(","));
    for (oracle, feature) in &o.skipped {
        println!("simulate: {oracle} skipped on workflows with {} (a known escape)", feature.name());
    }
    let started = Instant::now();
    let mut figures = Figures::default();
    let mut failures = Vec::new();
    for case in 0..o.cases {
        if started.elapsed() >= o.budget {
            break;
        }
        let seed = o.seed.wrapping_add(case as u64);
        let workflow = generate(seed, &o.features, o.size);
        figures.cases += 1;
        match sim.check(&workflow, seed, &mut figures) {
            Ok(()) => {}
            Err(Failure::Invalid(why)) => {
                figures.invalid += 1;
                failures.push(format!("seed {seed}: the generated workflow is invalid:\n{why}"));
            }
            Err(Failure::Oracle(oracle, why)) => {
                // Shrinking stops at the budget's end, or after 60 s when it is spent.
                let deadline = (started + o.budget).max(Instant::now() + Duration::from_secs(60));
                let (shrunk, tried) = shrink(&workflow, |w| {
                    Instant::now() < deadline
                        && matches!(sim.check(w, seed, &mut Figures::default()), Err(Failure::Oracle(o, _)) if o == oracle)
                });
                let text = shrunk.render("python3 counter.py counts.txt");
                let shrunk_why = match sim.check(&shrunk, seed, &mut Figures::default()) {
                    Err(Failure::Oracle(_, why)) => why,
                    _ => "(it passed when checked again: the failure is flaky)".into(),
                };
                failures.push(format!(
                    "seed {seed}: oracle {oracle} failed: {why}\n  shrunk from {} to {} statements ({tried} tries), which fails with: {shrunk_why}\n{text}",
                    workflow.size(),
                    shrunk.size()
                ));
            }
        }
    }
    let took = started.elapsed();
    if o.keep {
        println!("simulate: the last case's runs are in {}", root.display());
    } else {
        let _ = std::fs::remove_dir_all(&root);
    }
    println!(
        "simulate: {} cases in {:.1?} ({:.2?} per case), {} model requests, {} MCP effects, {} files, {} kills, {} forks after a cancelled call",
        figures.cases,
        took,
        took / figures.cases.max(1) as u32,
        figures.requests,
        figures.mcp_effects,
        figures.files,
        figures.kills,
        figures.cancelled_forks
    );
    for oracle in ORACLES {
        println!(
            "  {oracle:12} passed {:4}  failed {:4}",
            figures.passed.get(oracle).unwrap_or(&0),
            figures.failed.get(oracle).unwrap_or(&0)
        );
    }
    for f in &failures {
        println!("\n{f}");
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(format!("simulate: {} of {} cases failed (seed {})", failures.len(), figures.cases, o.seed))
    }
}

/// The `sr` binary: `$SR_BIN`, else the debug build (built first).
fn sr_binary() -> Result<PathBuf, String> {
    if let Some(bin) = std::env::var_os("SR_BIN") {
        return std::fs::canonicalize(&bin).map_err(|e| format!("SR_BIN {}: {e}", PathBuf::from(&bin).display()));
    }
    crate::ci::step("cargo", &["build", "-p", "sr-cli", "--bin", "sr"], &[])?;
    Ok(crate::target_dir().join("debug/sr"))
}

enum Failure {
    Invalid(String),
    Oracle(&'static str, String),
}

struct Sim {
    sr: PathBuf,
    server: MockServer,
    failed: model::Failed,
    root: PathBuf,
    kills: usize,
    /// The oracles checked: all but the known escapes' unless `--all`.
    oracles: Vec<&'static str>,
    skipped: Vec<(&'static str, Feature)>,
    handle: tokio::runtime::Handle,
}

/// What the uninterrupted run did.
struct Live {
    files: BTreeMap<String, Vec<u8>>,
    events: Vec<Value>,
    mcp: Vec<String>,
    code: Option<i32>,
}

impl Sim {
    fn project(&self, name: &str, workflow: &Workflow) -> Project {
        Project::new(self.root.join(name), &self.sr, &self.server.url(), |mcp| workflow.render(mcp))
    }

    /// Whether `oracle` is checked on `workflow` (not a known escape).
    fn checks(&self, oracle: &str, workflow: &Workflow) -> bool {
        self.oracles.contains(&oracle)
            && !self.skipped.iter().any(|(o, f)| *o == oracle && workflow.features().contains(f))
    }

    fn requests(&self) -> usize {
        self.server.requests().len()
    }

    fn fresh_run(&self) {
        self.failed.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// Runs every oracle on `workflow`; the first that fails is the error.
    fn check(&self, workflow: &Workflow, seed: u64, figures: &mut Figures) -> Result<(), Failure> {
        let live = self.project("live", workflow);
        live.check().map_err(Failure::Invalid)?;
        let before = self.requests();
        self.fresh_run();
        let ended = live.run_live(&[]);
        figures.requests += self.requests() - before;
        let journal = live.journal().ok_or(Failure::Oracle("live", format!("no journal; {}", ended.stderr)))?;
        if !matches!(ended.code, Some(0 | 1)) {
            return fail(figures, "live", format!("exit code {:?}: {}", ended.code, ended.why()));
        }
        if let Some(why) = ended.paused.iter().find_map(|paused| paused_differs(paused, &ended.events)) {
            return fail(figures, "live", why);
        }
        if let Some(why) = in_doubt_uncrashed(&journal_lines(&journal), &ended) {
            return fail(figures, "live", why);
        }
        pass(figures, "live");
        let live =
            Live { files: live.files(), events: ended.events, mcp: applied(&live.mcp_calls()), code: ended.code };
        figures.mcp_effects += live.mcp.len();
        figures.files += live.files.len();

        // A replay serves everything: the same events and files, no request.
        if self.checks("replay", workflow) {
            let replay = self.project("replay", workflow);
            let before = self.requests();
            let ended = replay.replay(&journal);
            match self.compare(&live, &replay, &ended, before, true) {
                Some(why) => return fail(figures, "replay", why),
                None => pass(figures, "replay"),
            }
        }

        // Killed right after journal line k, then resumed.
        // (Conditions draw values too: look at the text.)
        let text = workflow.render("");
        let deterministic = !["uuid()", "now()", "random()", "random_int("].iter().any(|v| text.contains(v));
        let lines = journal_lines(&journal).len();
        let mut rng = Rng::new(seed);
        let mut points: Vec<usize> = (1..=lines).collect();
        while points.len() > self.kills {
            points.remove(rng.below(points.len()));
        }
        for k in points {
            figures.kills += 1;
            let killed = self.project("killed", workflow);
            self.fresh_run();
            let first = killed.run_live(&[("SR_SIM_KILL_AFTER_JOURNAL_LINES", k.to_string())]);
            let ended = if first.code.is_none() { killed.resume() } else { first };
            if deterministic && ended.code != live.code {
                let why = format!("after a kill at journal line {k}: exit code {:?}: {}", ended.code, ended.why());
                return fail(figures, "kill-resume", why);
            }
            let files = killed.files();
            // Values drawn after the kill are new ones: only a workflow without
            // value sources must end with the uninterrupted run's files.
            if deterministic && files != live.files {
                return fail(
                    figures,
                    "kill-resume",
                    format!("after a kill at journal line {k}: {}", diff(&live.files, &files)),
                );
            }
            let Some(killed_journal) = killed.journal() else {
                return fail(figures, "kill-resume", format!("after a kill at journal line {k}: no journal"));
            };
            // A call a sibling branch's failure cancelled may have reached the
            // server or not, as timing had it, in either run.
            let mut cancelled = cancelled_bumps(&journal_lines(&journal));
            cancelled.extend(cancelled_bumps(&journal_lines(&killed_journal)));
            let made = |names: &[String]| -> Vec<String> {
                names.iter().filter(|n| !cancelled.contains(n)).cloned().collect()
            };
            let mcp = applied(&killed.mcp_calls());
            if deterministic && made(&mcp) != made(&live.mcp) {
                let why =
                    format!("after a kill at journal line {k}: MCP effects {mcp:?}, uninterrupted {:?}", live.mcp);
                return fail(figures, "kill-resume", why);
            }
            let resumed = Live { files, events: Vec::new(), mcp, code: ended.code };
            let replay = self.project("killed-replay", workflow);
            let before = self.requests();
            let ended = replay.replay(&killed_journal);
            if self.checks("resumed-replay", workflow)
                && let Some(why) = self.compare(&resumed, &replay, &ended, before, false)
            {
                return fail(figures, "resumed-replay", format!("after a kill at journal line {k}: {why}"));
            }
        }
        pass(figures, "kill-resume");
        if self.checks("resumed-replay", workflow) {
            pass(figures, "resumed-replay");
        }

        // A fork at step K asks the model only for what follows K: a run of
        // its own, then forked (checked when the workflow draws no value).
        let forked = self.project("fork", workflow);
        self.fresh_run();
        forked.run_live(&[]);
        // (step, requests the step's model call took: a `FLAKY` one fails once
        // and the HTTP client sends it again, which the journal keeps as one.)
        let lines = forked.journal().map(|journal| journal_lines(&journal)).unwrap_or_default();
        let steps: Vec<(u64, usize)> = lines
            .iter()
            .filter_map(|l| {
                let requests = if l["kind"] != "llm" {
                    0
                } else if l.to_string().contains("FLAKY") {
                    2
                } else {
                    1
                };
                Some((l["step"].as_u64()?, requests))
            })
            .collect();
        if let Some(last) = steps.iter().map(|(s, _)| *s).max() {
            // Half the time, right after a call the run cancelled (a sibling
            // branch failed): a moment inside a branch that has no result
            // to serve.
            let cancelled = cancelled_steps(&lines);
            let from = match cancelled.is_empty() || rng.below(2) == 0 {
                true => 1 + rng.below(last as usize) as u64,
                false => cancelled[rng.below(cancelled.len())] + 1,
            };
            figures.cancelled_forks += usize::from(cancelled.contains(&(from - 1)));
            let allowed: usize = steps.iter().filter(|(s, _)| *s >= from).map(|(_, r)| r).sum();
            let before = self.requests();
            self.fresh_run();
            let ended = forked.fork(from);
            let made = self.requests() - before;
            // A fork draws its values anew, and then may take another path.
            if deterministic && made > allowed {
                let why = format!(
                    "a fork at step {from} of {last} made {made} model requests, {allowed} model steps follow it: {}",
                    ended.stderr
                );
                return fail(figures, "fork", why);
            }
        }
        pass(figures, "fork");

        if self.checks("time-travel", workflow) {
            let back = 1 + rng.below(8) as u64;
            if let Err(why) = self.travel(workflow, back) {
                return fail(figures, "time-travel", why);
            }
            pass(figures, "time-travel");
        }
        Ok(())
    }

    /// A run under `sr serve`, seen at its last event, `back` events before
    /// it and at the last again: the same files, no request, no tool call.
    fn travel(&self, workflow: &Workflow, back: u64) -> Result<(), String> {
        let project = self.project("travel", workflow);
        self.fresh_run();
        self.handle.block_on(async {
            let serve = travel::Serve::start(&self.sr, &project.dir, &self.server.url())?;
            serve.ready().await?;
            let id = serve.run().await?;
            let last = serve.events(&id).await?;
            let (requests, calls) = (self.requests(), project.mcp_calls().len());
            let end = serve.files_at(&id, last).await?;
            if !end["entries"].is_array() {
                return Err(format!("no files at event {last}: {end}"));
            }
            let earlier = last.saturating_sub(back).max(1);
            serve.files_at(&id, earlier).await?;
            let again = serve.files_at(&id, last).await?;
            if again != end {
                return Err(format!("back to event {earlier} of {last} and forward: files {again}, before {end}"));
            }
            let (requests, calls) = (self.requests() - requests, project.mcp_calls().len() - calls);
            if requests + calls != 0 {
                return Err(format!("going back and forth made {requests} model requests and {calls} MCP calls"));
            }
            Ok(())
        })
    }

    /// Why a replay in `project` differs from the live run, if it does.
    fn compare(&self, live: &Live, project: &Project, ended: &Ended, before: usize, events: bool) -> Option<String> {
        let made = self.requests() - before;
        if made != 0 {
            return Some(format!("{made} model requests: {}", ended.stderr));
        }
        if !project.mcp_calls().is_empty() {
            return Some(format!("MCP calls {:?}", project.mcp_calls()));
        }
        if ended.code != live.code {
            return Some(format!("exit code {:?}, live {:?}: {}", ended.code, live.code, ended.why()));
        }
        let files = project.files();
        if files != live.files {
            return Some(diff(&live.files, &files));
        }
        if events {
            let (a, b) = (normalize(&live.events), normalize(&ended.events));
            if a != b {
                let at = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
                return Some(format!(
                    "events differ at {at} ({} live, {} replayed): live {:?}, replayed {:?}",
                    a.len(),
                    b.len(),
                    a.get(at),
                    b.get(at)
                ));
            }
        }
        None
    }
}

fn pass(figures: &mut Figures, oracle: &'static str) {
    *figures.passed.entry(oracle).or_default() += 1;
}

fn fail(figures: &mut Figures, oracle: &'static str, why: String) -> Result<(), Failure> {
    *figures.failed.entry(oracle).or_default() += 1;
    Err(Failure::Oracle(oracle, why))
}

/// The steps of the calls a journal has no result for although its run
/// ended: model calls marked `cancelled`, tool calls with no `tool` line.
fn cancelled_steps(lines: &[Value]) -> Vec<u64> {
    if !lines.iter().any(|l| l["kind"] == "end") {
        return Vec::new();
    }
    let place = |l: &Value| (l["at"].clone(), l["n"].clone());
    let ended: Vec<_> = lines.iter().filter(|l| l["kind"] == "tool").map(place).collect();
    let tool_cut = |l: &Value| l["kind"] == "tool_start" && !ended.contains(&place(l));
    let model_cut = |l: &Value| l["kind"] == "llm" && l["cancelled"] == true;
    lines.iter().filter(|l| model_cut(l) || tool_cut(l)).filter_map(|l| l["step"].as_u64()).collect()
}

/// The names of the counter's calls a journal has a start and no result
/// for although its run ended: cancelled, maybe after they took effect.
fn cancelled_bumps(lines: &[Value]) -> Vec<String> {
    let cancelled = cancelled_steps(lines);
    let bump = |l: &&Value| l["kind"] == "tool_start" && l["step"].as_u64().is_some_and(|s| cancelled.contains(&s));
    lines.iter().filter(bump).filter_map(|l| Some(l["args"]["name"].as_str()?.to_owned())).collect()
}

/// The MCP effects applied: one per idempotency key (a call repeated with
/// its key is the same effect), as sorted names.
fn applied(calls: &[String]) -> Vec<String> {
    let mut keys: BTreeMap<&str, &str> = BTreeMap::new();
    for call in calls {
        let (name, key) = call.split_once(' ').unwrap_or((call, ""));
        keys.insert(if key.is_empty() { call } else { key }, name);
    }
    let mut names: Vec<String> = keys.values().map(|n| (*n).to_owned()).collect();
    names.sort();
    names
}

fn diff(want: &BTreeMap<String, Vec<u8>>, got: &BTreeMap<String, Vec<u8>>) -> String {
    let mut out = Vec::new();
    for (path, bytes) in want {
        match got.get(path) {
            None => out.push(format!("{path} missing")),
            Some(other) if other != bytes => out.push(format!(
                "{path}: {:?}, uninterrupted {:?}",
                String::from_utf8_lossy(other),
                String::from_utf8_lossy(bytes)
            )),
            Some(_) => {}
        }
    }
    out.extend(got.keys().filter(|p| !want.contains_key(*p)).map(|p| format!("{p} extra")));
    format!("files differ: {}", out.join("; "))
}

/// Why the events of a process that paused for a human are not the run's
/// (`last`: the last process's, which emits the run from its start) up to
/// the question, followed by the pause (the flows and agents under way
/// finished, then the run, paused), if they are not.
fn paused_differs(paused: &[Value], last: &[Value]) -> Option<String> {
    let (paused, last) = (normalize(paused), normalize(last));
    let Some(asked) = paused.iter().rposition(|e| e["type"] == "human_input_requested") else {
        return Some(format!("a process paused without asking: {:?}", paused.last()));
    };
    if paused[..=asked] != last[..=asked.min(last.len().saturating_sub(1))] {
        let at = paused.iter().zip(&last).position(|(a, b)| a != b).unwrap_or(last.len());
        return Some(format!(
            "a paused process's events differ at {at} from the resumed run's: paused {:?}, resumed {:?}",
            paused.get(at),
            last.get(at)
        ));
    }
    let tail = &paused[asked + 1..];
    let pause = tail.last().is_some_and(|e| e["type"] == "run_finished" && e["status"] == "paused");
    let finishing = tail.iter().all(|e| e["type"].as_str().is_some_and(|t| t.ends_with("_finished")));
    (!pause || !finishing).then(|| format!("a process's events after its question are not a pause: {tail:?}"))
}

/// Why a run nothing crashed found a call in doubt, if it did: only a crash
/// cuts a call off (a pause lets the calls in flight end, a failing sibling
/// cancels them), so every call has its result or was cancelled.
fn in_doubt_uncrashed(lines: &[Value], ended: &Ended) -> Option<String> {
    let events = ended.paused.iter().chain([&ended.events]).flatten();
    let asked = events.filter(|e| e["type"] == "tool_in_doubt").map(|e| e["tool"].to_string());
    let decided = lines.iter().filter(|l| l["kind"] == "in_doubt").map(|l| format!("step {}", l["of"]));
    let doubts: Vec<String> = asked.chain(decided).collect();
    (!doubts.is_empty()).then(|| format!("calls in doubt although no process crashed: {}", doubts.join(", ")))
}

/// Events without what differs between two correct runs (times, ids,
/// durations) and without text deltas (a replay sends a reply whole).
fn normalize(events: &[Value]) -> Vec<Value> {
    const VOLATILE: &[&str] =
        &["ts", "time", "timestamp", "duration_ms", "elapsed_ms", "invocation_id", "run_id", "session_id"];
    events
        .iter()
        .filter(|e| e["type"] != "text_delta")
        .map(|e| {
            let mut e = e.clone();
            if let Some(map) = e.as_object_mut() {
                map.retain(|k, _| !VOLATILE.contains(&k.as_str()));
            }
            e
        })
        .collect()
}
