//! Tool calls through the journal. A live call is journaled twice: a
//! `tool_start` line before it runs (so a call cut off by a crash is known)
//! and a `tool` line with its result and the files it changed after; both
//! carry the call's idempotency key. A served call runs nothing; in a replay
//! or a run going back in time its file changes are made again. A resumed
//! run that meets a call cut off calls an idempotent tool again with the same
//! key, and otherwise stops with [`ToolStop::InDoubt`] for the run to ask its
//! decider ([`Journal::resolve`]); the decision is journaled (`in_doubt`).
//! What a tool reports while it runs (`crate::tools::Update`) is journaled as
//! it comes (a `tool_update` line, before the event), and a served call, a
//! cut-off one included, reports it again before anything else.

use std::sync::Arc;

use serde_json::{Value, json};

use super::entry::{FILES_KIND, IN_DOUBT_KIND, TOOL_KIND, TOOL_START_KIND, TOOL_UPDATE_KIND};
use super::workspace::{Before, RestoreError};
use super::{Decision, Divergence, Effect, EffectAt, Journal, Mode};
use crate::in_doubt::{Decision as InDoubt, Question};
use crate::tools::{Report, Tool, ToolError, Update};

/// Why a tool call through the journal does not give the model a result.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolStop {
    Diverged(Divergence),
    /// The call was cut off by a crash and its tool is not idempotent: the
    /// run asks its decider ([`Journal::resolve`]).
    InDoubt(Question),
    /// Nobody decided: the run stops, to be resumed with a decision.
    Undecided(Question),
    /// The decision was `fail`.
    Failed(Question),
    /// A replay or a run going back in time reached a call whose file
    /// changes its journal cannot make again (past the journal's limits):
    /// it stops rather than go on without them.
    Unrestorable(String),
}

impl From<Divergence> for ToolStop {
    fn from(divergence: Divergence) -> ToolStop {
        ToolStop::Diverged(divergence)
    }
}

type Called = Result<Result<Value, ToolError>, ToolStop>;

impl Journal {
    /// The result of calling `tool` with `args` at `at`: from the journal, or
    /// from the tool; what the call reports goes to `report` either way.
    pub async fn tool(&self, at: &EffectAt, tool: &dyn Tool, args: Value, report: &Report) -> Called {
        let name = tool.name();
        let recorded = match self.decide(at) {
            Decision::Live => return Ok(self.live_tool(at, tool, &name, args, None, report).await),
            Decision::Missing => return Err(self.missing(at, &format!("a call of tool '{name}'")).into()),
            Decision::Serve(Effect::Tool {
                name: recorded,
                args: recorded_args,
                outcome,
                changes,
                step,
                key,
                updates,
                before,
                unrecorded,
                warnings,
            }) => {
                if *recorded != name || *recorded_args != args {
                    return Err(tool_divergence(recorded, recorded_args, &name, &args).into());
                }
                // Also a call cut off: the events of its updates were emitted.
                for update in updates {
                    report(update.clone());
                }
                self.warn(at, warnings.clone());
                (outcome, changes, *step, key, before, unrecorded)
            }
            Decision::Serve(other) => {
                return Err(Divergence(format!(
                    "the run calls tool '{name}' with {} where the journal recorded {}",
                    super::entry::shown(&args),
                    other.describe()
                ))
                .into());
            }
        };
        let (outcome, changes, step, key, before, unrecorded) = recorded;
        if let Some(workspace) = &self.workspace
            && matches!(self.mode, Mode::Replay | Mode::Travel)
        {
            if let Some(why) = unrecorded {
                return Err(ToolStop::Unrestorable(format!("the journal does not have the file changes of {why}")));
            }
            workspace.redo(&self.recorded, changes).map_err(|e| ToolStop::Unrestorable(e.to_string()))?;
        }
        // A call cut off by a crash: what it changed of its paths is
        // journaled before it is decided about, so that a replay of the
        // final journal makes it too.
        if outcome.is_none()
            && self.mode == Mode::Resume
            && let Some(workspace) = &self.workspace
        {
            let mut from = before.clone();
            for change in changes {
                if let Some(state) = from.iter_mut().find(|(path, _)| *path == change.path) {
                    state.1 = change.after.clone();
                }
            }
            let captured = match self.recorded.cut_tree(at) {
                Some(then) => workspace.cut_off_tree(then, &self.recorded),
                None => workspace.cut_off(&from),
            };
            if !captured.changes.is_empty() {
                let entry = json!({
                    "kind": FILES_KIND, "at": &*at.thread, "n": at.n, "step": self.take_step(),
                    "files": captured.changes,
                });
                if let Err(e) = self.write_blobs(&captured.blobs).and_then(|()| self.write(&entry)) {
                    return Ok(Err(ToolError(e.to_string())));
                }
            }
        }
        match outcome {
            Some(Ok(value)) => Ok(Ok(value.clone())),
            Some(Err(error)) => Ok(Err(ToolError(error.clone()))),
            // The live run was cancelled during the call (a timeout, a failed
            // sibling branch): a replay waits to be cancelled at the same point.
            None if self.mode == Mode::Replay && self.recorded.ended() => self.parked(&at.thread).await,
            // Cancelled when its `parallel` block ended (a sibling failed):
            // a resumed run waits to be cancelled at the same point too.
            None if self.recorded.block_finished(&at.thread) => self.parked(&at.thread).await,
            None => {
                // Cancelled by its block (the recorded run ended) while a
                // sibling's failure may cancel it again: it waits for that
                // first ([`super::siblings`]), then is in doubt as any call
                // cut off half-way.
                if self.mode != Mode::Replay
                    && self.recorded.ended()
                    && let Some(settled) = self.siblings_settled(&at.thread)
                {
                    settled.await;
                }
                let key = key.clone().unwrap_or_else(|| self.key(at, step));
                let question = Question { tool: name, args, idempotency_key: key };
                // A replay never goes live: it is told the call was cut off.
                if self.mode == Mode::Replay {
                    return self.apply(at, tool, question, InDoubt::Skip, None, report).await;
                }
                if tool.idempotent() {
                    return self.apply(at, tool, question, InDoubt::Retry, None, report).await;
                }
                match self.recorded.decision(step) {
                    Some(decision) => self.apply(at, tool, question, decision, None, report).await,
                    None => Err(ToolStop::InDoubt(question)),
                }
            }
        }
    }

    /// Asks the run's decider about `question`, the call in doubt at `at`
    /// ([`ToolStop::InDoubt`]), journals its decision and acts on it.
    pub async fn resolve(&self, at: &EffectAt, tool: &dyn Tool, question: Question, report: &Report) -> Called {
        let Some(Effect::Tool { step, .. }) = self.recorded.effect(at) else {
            return Ok(Err(ToolError(format!("the journal has no call of '{}' in doubt here", question.tool))));
        };
        match self.decider.decide(&question).await {
            Some(decision) => self.apply(at, tool, question, decision, Some(*step), report).await,
            None => {
                *self.undecided.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(question.clone());
                Err(ToolStop::Undecided(question))
            }
        }
    }

    /// Acts on `decision` about the call in doubt at `at`; a decision just
    /// taken about the call started at step `of` is journaled first.
    async fn apply(
        &self,
        at: &EffectAt,
        tool: &dyn Tool,
        question: Question,
        decision: InDoubt,
        of: Option<u64>,
        report: &Report,
    ) -> Called {
        if let Some(of) = of {
            let entry = json!({
                "kind": IN_DOUBT_KIND, "at": &*at.thread, "n": at.n, "step": self.take_step(),
                "of": of, "decision": decision, "key": question.idempotency_key,
            });
            if let Err(e) = self.write(&entry) {
                return Ok(Err(ToolError(e.to_string())));
            }
        }
        let Question { tool: name, args, idempotency_key } = question;
        match decision {
            InDoubt::Retry => {
                self.put_back(at, tool).map_err(|e| ToolStop::Unrestorable(e.to_string()))?;
                Ok(self.live_tool(at, tool, &name, args, Some(idempotency_key), report).await)
            }
            InDoubt::Fail => Err(ToolStop::Failed(Question { tool: name, args, idempotency_key })),
            InDoubt::Skip => {
                // It may have taken effect: it is not made again. The answer
                // is journaled, so a later resume serves it as well.
                let error = format!(
                    "the call of '{name}' with {args} was cut off when the run was interrupted; it is not repeated \
                     because it may already have taken effect: check its effect before calling it again"
                );
                let mut entry =
                    json!({"at": &*at.thread, "n": at.n, "step": self.take_step(), "name": name, "args": args});
                entry["kind"] = json!(TOOL_KIND);
                entry["key"] = json!(idempotency_key);
                entry["error"] = json!(error);
                if let Err(e) = self.write(&entry) {
                    return Ok(Err(ToolError(e.to_string())));
                }
                Ok(Err(ToolError(error)))
            }
        }
    }

    /// A file tool that is not idempotent (an append) cut off after it
    /// changed its paths is made again from the state it started in, so
    /// that its change is made once whatever the crash interrupted.
    fn put_back(&self, at: &EffectAt, tool: &dyn Tool) -> Result<(), RestoreError> {
        if tool.idempotent() || self.mode != Mode::Resume {
            return Ok(());
        }
        match (&self.workspace, self.recorded.effect(at)) {
            (Some(workspace), Some(Effect::Tool { before, .. })) => workspace.put_back(&self.recorded, before),
            _ => Ok(()),
        }
    }

    /// The idempotency key of the call at `at` that started at `step`: the
    /// run's invocation id and the call's place in the journal.
    fn key(&self, at: &EffectAt, step: u64) -> String {
        format!("{}:{at}:{step}", self.invocation)
    }

    async fn live_tool(
        &self,
        at: &EffectAt,
        tool: &dyn Tool,
        name: &str,
        args: Value,
        key: Option<String>,
        report: &Report,
    ) -> Result<Value, ToolError> {
        let before = match &self.workspace {
            Some(workspace) if self.writes() => workspace.before(name, &args).await,
            _ => Before::Nothing,
        };
        // Once the run pauses no call starts: this one waits for its
        // `parallel` block to cancel it ([`super::pausing`]).
        let Some(_in_flight) = self.admit(at, name) else { return std::future::pending().await };
        let step = self.take_step();
        let key = key.unwrap_or_else(|| self.key(at, step));
        if !self.writes() {
            return tool.call_reporting(args, &key, report.clone()).await;
        }
        let mut entry = json!({"at": &*at.thread, "n": at.n, "step": step, "name": name, "args": args, "key": key});
        entry["kind"] = json!(TOOL_START_KIND);
        // A file tool's paths as they are, with their bytes: if a crash cuts
        // the call off, the resumed run knows what it changed.
        if let Some(workspace) = &self.workspace
            && !before.paths().is_empty()
        {
            entry["before"] = serde_json::to_value(before.paths()).expect("states always serialize");
            self.write_blobs(&workspace.blobs_of(before.paths()))
                .map_err(|e| ToolError(format!("cannot record the tool call: {e}")))?;
        }
        // A whole-directory call: how the directory differs from what the
        // journal knows, so that a crash during the call leaves what it
        // started from in the journal.
        if let Some(tree) = before.tree() {
            entry["tree"] = serde_json::to_value(tree).expect("states always serialize");
        }
        self.write(&entry).map_err(|e| ToolError(format!("cannot record the tool call: {e}")))?;
        if let Some(line) = entry.as_object_mut() {
            line.remove("before");
            line.remove("tree");
        }
        // Journaled before it is emitted: after a crash, a replay may repeat
        // an update the store missed, never miss one it has.
        let noted: Report = match &self.writer {
            Some(writer) => {
                let (cassette, report) = (writer.cassette.clone(), report.clone());
                let place = json!({"kind": TOOL_UPDATE_KIND, "at": &*at.thread, "n": at.n, "step": step});
                Arc::new(move |update: Update| {
                    let mut line = place.clone();
                    line["update"] = serde_json::to_value(&update).unwrap_or_default();
                    // A journal that cannot be written fails the call's `tool` line below.
                    let _ = cassette.append(&line);
                    report(update);
                })
            }
            None => report.clone(),
        };
        let result = tool.call_reporting(args, &key, noted).await;
        entry["kind"] = json!(TOOL_KIND);
        match &result {
            Ok(value) => entry["result"] = value.clone(),
            Err(e) => entry["error"] = json!(e.0),
        }
        let mut turn = None;
        if let Some(workspace) = &self.workspace {
            let captured = workspace.after(before);
            turn = captured.turn;
            if !captured.changes.is_empty() {
                self.write_blobs(&captured.blobs)
                    .map_err(|e| ToolError(format!("cannot record the tool's files: {e}")))?;
                entry["files"] = serde_json::to_value(&captured.changes).expect("changes always serialize");
            }
            if let Some(why) = &captured.unrecorded {
                entry["files_unrecorded"] = json!(why);
            }
            if !captured.warnings.is_empty() {
                entry["warnings"] = json!(captured.warnings);
            }
            self.warn(at, captured.warnings);
        }
        self.write(&entry).map_err(|e| ToolError(format!("cannot record the tool result: {e}")))?;
        // The next call that changes files may start.
        drop(turn);
        result
    }
}

/// What differs between the recorded call and the run's.
fn tool_divergence(recorded: &str, recorded_args: &Value, name: &str, args: &Value) -> Divergence {
    if recorded != name {
        return Divergence(format!(
            "the run calls tool '{name}' where the journal recorded a call of tool '{recorded}' with {}",
            super::entry::shown(recorded_args)
        ));
    }
    let differences = sr_llm::differences(recorded_args, args);
    let mut message = format!("the arguments of tool '{name}' differ from the journal's at:");
    for difference in differences.iter().take(4) {
        message.push_str(&format!("\n  {difference}"));
    }
    if differences.len() > 4 {
        message.push_str(&format!("\n  … and {} more", differences.len() - 4));
    }
    Divergence(message)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use futures::future::BoxFuture;
    use serde_json::{Value, json};
    use sr_llm::Cassette;

    use super::ToolStop;
    use crate::in_doubt::{Always, Decider, Decision, Once};
    use crate::journal::{EffectAt, Journal, Meta, Mode, Recorded};
    use crate::tools::{Tool, ToolError, ToolSpec, Update};

    /// A tool that notes the key of every call.
    struct Noted {
        idempotent: bool,
        keys: Mutex<Vec<String>>,
    }

    impl Tool for Noted {
        fn spec(&self) -> ToolSpec {
            ToolSpec { name: "charge".into(), description: String::new(), parameters: json!({}) }
        }
        fn call(&self, _args: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
            unreachable!("the journal always passes a key")
        }
        fn call_keyed(&self, _args: Value, key: &str) -> BoxFuture<'_, Result<Value, ToolError>> {
            self.keys.lock().unwrap().push(key.to_string());
            Box::pin(std::future::ready(Ok(json!("charged"))))
        }
        fn idempotent(&self) -> bool {
            self.idempotent
        }
    }

    fn silent() -> crate::tools::Report {
        Arc::new(|_| {})
    }

    /// A report that keeps what it is told.
    fn collecting() -> (Arc<Mutex<Vec<Update>>>, crate::tools::Report) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        (seen, Arc::new(move |update| sink.lock().unwrap().push(update)))
    }

    fn update(state: &str, text: &str) -> Update {
        Update { task_id: "t-1".into(), state: state.into(), text: text.into() }
    }

    /// A remote agent's tool: reports two updates, then answers.
    struct Reporting(Mutex<u32>);

    impl Tool for Reporting {
        fn spec(&self) -> ToolSpec {
            ToolSpec { name: "remote".into(), description: String::new(), parameters: json!({}) }
        }
        fn call(&self, _args: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
            unreachable!("the journal always passes a report")
        }
        fn call_reporting(
            &self,
            _args: Value,
            _key: &str,
            report: crate::tools::Report,
        ) -> BoxFuture<'_, Result<Value, ToolError>> {
            *self.0.lock().unwrap() += 1;
            report(update("working", "reading"));
            report(update("completed", "looks good"));
            Box::pin(std::future::ready(Ok(json!("looks good"))))
        }
    }

    #[tokio::test]
    async fn what_a_tool_reports_is_journaled_and_a_replay_reports_it_again_without_calling() {
        let path = std::env::temp_dir().join(format!("sr-reporting-{}.jsonl", std::process::id()));
        let cassette = Arc::new(Cassette::create(&path).unwrap());
        let journal = Journal::recording(cassette, &Meta::new("w.sr", "go"), None).unwrap();
        let at = EffectAt { thread: "main".into(), n: 0 };
        let (live, report) = collecting();
        let tool = Reporting(Mutex::new(0));
        let answer = journal.tool(&at, &tool, json!({"request": "x"}), &report).await;
        assert_eq!(answer, Ok(Ok(json!("looks good"))));
        let live = live.lock().unwrap().clone();
        assert_eq!(live, [update("working", "reading"), update("completed", "looks good")]);

        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let replay = Journal::new(Mode::Replay, Recorded::parse(&text).unwrap(), None, None);
        let (served, report) = collecting();
        let again = replay.tool(&at, &tool, json!({"request": "x"}), &report).await;
        assert_eq!((again, served.lock().unwrap().clone()), (Ok(Ok(json!("looks good"))), live.clone()));
        assert_eq!(*tool.0.lock().unwrap(), 1, "the replay called the tool");

        // Cut off by a crash after its updates: they are reported again, and
        // the call is not made (a replay is told it was cut off).
        let cut: String =
            text.lines().filter(|l| !l.contains(r#""kind":"tool""#)).collect::<Vec<_>>().join("\n") + "\n";
        assert_eq!(cut.matches(r#""kind":"tool_update""#).count(), 2, "{cut}");
        let replay = Journal::new(Mode::Replay, Recorded::parse(&cut).unwrap(), None, None);
        let (served, report) = collecting();
        let again = replay.tool(&at, &tool, json!({"request": "x"}), &report).await;
        assert!(matches!(again, Ok(Err(ToolError(e))) if e.contains("was cut off")));
        assert_eq!(served.lock().unwrap().clone(), live);
        assert_eq!(*tool.0.lock().unwrap(), 1, "the replay called the tool");

        // A journal whose update is not an update is refused with its line.
        let bad = text.replace(r#""state":"working""#, r#""state":7"#);
        assert_ne!(bad, text);
        let error = Recorded::parse(&bad).unwrap_err();
        assert!(error.to_string().starts_with("line 3 of the journal: update:"), "{error}");
    }

    /// A journal cut off during a call of `charge` (step 1, key `k-1`),
    /// with `more` lines after it.
    fn cut_off(more: &[Value]) -> String {
        let meta = Meta { invocation_id: "inv".into(), ..Meta::new("w.sr", "go") };
        let start = json!({"kind": "tool_start", "at": "main", "n": 0, "step": 1, "name": "charge",
                           "args": {"cents": 5}, "key": "k-1"});
        let mut lines = vec![meta.to_entry(), start];
        lines.extend(more.iter().cloned());
        lines.iter().map(|l| l.to_string() + "\n").collect()
    }

    struct Resumed {
        outcome: Result<Result<Value, ToolError>, ToolStop>,
        keys: Vec<String>,
        /// The kinds of the lines the resumed run added, with their decision or error.
        added: Vec<String>,
        undecided: bool,
        journal: String,
    }

    /// Resumes `text` (in `mode`) at the cut-off call, deciding with `decider`
    /// as the run does: asked only when the journal says the call is in doubt.
    async fn resume(text: &str, mode: Mode, idempotent: bool, decider: Arc<dyn Decider>) -> Resumed {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("sr-in-doubt-{}-{n}.jsonl", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let cassette = Arc::new(Cassette::append_to(&path).unwrap());
        let writer = (mode != Mode::Replay).then_some(cassette);
        let journal = Journal::new(mode, Recorded::parse(text).unwrap(), writer, None).deciding("inv", decider);
        let tool = Noted { idempotent, keys: Mutex::new(Vec::new()) };
        let at = EffectAt { thread: "main".into(), n: 0 };
        let outcome = match journal.tool(&at, &tool, json!({"cents": 5}), &silent()).await {
            Err(ToolStop::InDoubt(question)) => {
                assert_eq!(question.idempotency_key, "k-1");
                journal.resolve(&at, &tool, question, &silent()).await
            }
            other => other,
        };
        let written = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let added = written[text.len()..]
            .lines()
            .map(|l| {
                let line: Value = serde_json::from_str(l).unwrap();
                let detail = line.get("decision").or(line.get("error")).or(line.get("result")).cloned();
                let detail = detail.map(|d| d.as_str().unwrap_or_default().chars().take(24).collect::<String>());
                format!("{} {}", line["kind"].as_str().unwrap(), detail.unwrap_or_default()).trim().to_string()
            })
            .collect();
        Resumed {
            outcome,
            keys: tool.keys.into_inner().unwrap(),
            added,
            undecided: journal.undecided().is_some(),
            journal: written,
        }
    }

    #[tokio::test]
    async fn a_cut_off_call_is_retried_skipped_failed_or_left_in_doubt_as_decided() {
        let charged = || Ok(Ok(json!("charged")));
        let skipped = "the call of 'charge' with";
        // idempotent, decider → result, calls (keys), lines added
        #[allow(clippy::type_complexity)]
        let table: Vec<(bool, Option<Decision>, &str, Vec<&str>, Vec<&str>)> = vec![
            (true, None, "charged", vec!["k-1"], vec!["tool_start", "tool charged"]),
            (
                false,
                Some(Decision::Retry),
                "charged",
                vec!["k-1"],
                vec!["in_doubt retry", "tool_start", "tool charged"],
            ),
            (false, Some(Decision::Skip), "skipped", vec![], vec!["in_doubt skip", "tool the call of 'charge' wit"]),
            (false, Some(Decision::Fail), "failed", vec![], vec!["in_doubt fail"]),
            (false, None, "undecided", vec![], vec![]),
        ];
        for (idempotent, decision, expected, keys, added) in table {
            let run = resume(&cut_off(&[]), Mode::Resume, idempotent, Arc::new(Once::new(decision))).await;
            let what = format!("idempotent {idempotent}, decision {decision:?}");
            match expected {
                "charged" => assert_eq!(run.outcome, charged(), "{what}"),
                "skipped" => {
                    assert!(matches!(&run.outcome, Ok(Err(ToolError(e))) if e.starts_with(skipped)), "{what}")
                }
                "failed" => assert!(matches!(&run.outcome, Err(ToolStop::Failed(q)) if q.tool == "charge"), "{what}"),
                _ => assert!(matches!(&run.outcome, Err(ToolStop::Undecided(q)) if q.args == json!({"cents": 5}))),
            }
            assert_eq!(run.keys, keys, "{what}: the calls made, by key");
            assert_eq!(run.added, added, "{what}: the journal's new lines");
            assert_eq!(run.undecided, expected == "undecided", "{what}");

            // A later resume is served what this one journaled: nothing is
            // asked (the decider would retry) and nothing is called again.
            if expected != "undecided" {
                let again = resume(&run.journal, Mode::Resume, false, Arc::new(Always(Decision::Retry))).await;
                assert!(again.keys.is_empty(), "{what}: called again on a later resume");
                assert_eq!(again.outcome.is_ok(), run.outcome.is_ok(), "{what}");
                assert!(again.added.iter().all(|l| !l.starts_with("in_doubt")), "{what}: asked again");
            }
        }
    }

    #[tokio::test]
    async fn a_retry_cut_off_again_is_asked_about_again_and_a_replay_never_calls() {
        // Retried, and cut off again: the decision was about the first call.
        let retried = cut_off(&[
            json!({"kind": "in_doubt", "at": "main", "n": 0, "step": 2, "of": 1, "decision": "retry", "key": "k-1"}),
            json!({"kind": "tool_start", "at": "main", "n": 0, "step": 3, "name": "charge", "args": {"cents": 5},
                   "key": "k-1"}),
        ]);
        let run = resume(&retried, Mode::Resume, false, Arc::new(Once::new(None))).await;
        assert!(matches!(run.outcome, Err(ToolStop::Undecided(_))) && run.keys.is_empty());

        let replayed = resume(&cut_off(&[]), Mode::Replay, true, Arc::new(Always(Decision::Retry))).await;
        assert!(replayed.keys.is_empty(), "a replay went live");
        assert!(matches!(replayed.outcome, Ok(Err(_))));
    }

    #[tokio::test]
    async fn a_call_without_a_recorded_key_gets_one_from_its_place_and_a_bad_decision_is_refused() {
        let text = cut_off(&[]).replace(r#","key":"k-1""#, "");
        assert!(!text.contains("k-1"));
        let journal = Journal::new(Mode::Resume, Recorded::parse(&text).unwrap(), None, None)
            .deciding("inv", Arc::new(Once::new(None)));
        let tool = Noted { idempotent: false, keys: Mutex::new(Vec::new()) };
        let at = EffectAt { thread: "main".into(), n: 0 };
        let Err(ToolStop::InDoubt(question)) = journal.tool(&at, &tool, json!({"cents": 5}), &silent()).await else {
            panic!("not in doubt")
        };
        assert_eq!(question.idempotency_key, "inv:main#0:1");

        let bad =
            cut_off(&[json!({"kind": "in_doubt", "at": "main", "n": 0, "step": 2, "of": 1, "decision": "maybe"})]);
        let error = Recorded::parse(&bad).unwrap_err();
        let error = error.to_string();
        assert!(error.starts_with("line 3 of the journal") && error.contains("\"maybe\" is no decision"), "{error}");
    }
}
