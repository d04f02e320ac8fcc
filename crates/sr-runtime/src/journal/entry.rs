//! The lines of a journal, read into what a run is served from.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sr_llm::{ChatEvent, ChatRequest, LlmError};

use super::EffectAt;
use super::ParseError;
use super::files::{BLOB_KIND, Change, State};
use crate::in_doubt::{Decision, NoDecision};

/// The journal format this program writes and reads; a journal without it
/// (or with an older one) was made by an earlier `sr` and must be recorded again.
pub const JOURNAL_FORMAT: u64 = 2;

pub(crate) const META_KIND: &str = "meta";
pub(crate) const TOOL_START_KIND: &str = "tool_start";
pub(crate) const TOOL_KIND: &str = "tool";
/// What a tool reported during its call (`crate::tools::Update`), written as
/// it comes, so that a call a crash cut off reports it again too.
pub(crate) const TOOL_UPDATE_KIND: &str = "tool_update";
pub(crate) const VALUE_KIND: &str = "value";
pub(crate) const INTERLEAVE_KIND: &str = "interleave";
pub(crate) const FORK_KIND: &str = "fork";
pub(crate) const END_KIND: &str = "end";
/// An answer a person gave to an `escalate to human` during the run: it
/// joins the answers of the `meta` before it.
pub(crate) const ANSWER_KIND: &str = "answer";
/// A decision about a tool call in doubt (`crate::in_doubt`); `of` is the
/// step of the call's `tool_start`.
pub(crate) const IN_DOUBT_KIND: &str = "in_doubt";
/// What a call a crash cut off had changed of its paths, journaled by the
/// run that resumed it, before the call's decision.
pub(crate) const FILES_KIND: &str = "files";

/// How a recorded run started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub invocation_id: String,
    pub workload: String,
    /// The message the run started with.
    pub input: String,
    /// The flow or agent it started at (`--entry`), when not the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// Answers to its `escalate to human`s, in order (a resumed run's).
    #[serde(default)]
    pub answers: Vec<String>,
    /// The work directory it ran in, absolute, so that a resumed run works
    /// on the same files wherever it is started from (`None`: a journal
    /// written before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_dir: Option<String>,
}

impl Meta {
    /// A meta for a run of `workload` with `input`, under a new invocation id.
    pub fn new(workload: impl Into<String>, input: impl Into<String>) -> Meta {
        Meta {
            invocation_id: uuid::Uuid::new_v4().to_string(),
            workload: workload.into(),
            input: input.into(),
            entry: None,
            answers: Vec::new(),
            work_dir: None,
        }
    }

    /// The journal's first line.
    pub fn to_entry(&self) -> Value {
        let mut entry = serde_json::to_value(self).expect("a meta line always serializes");
        entry["kind"] = json!(META_KIND);
        entry["format"] = json!(JOURNAL_FORMAT);
        entry
    }
}

/// One recorded effect.
#[derive(Debug)]
pub(crate) enum Effect {
    Model {
        step: u64,
        /// The request, normalized (`sr_llm::normalize`).
        request: Value,
        events: Vec<ChatEvent>,
        error: Option<LlmError>,
        /// The live run dropped the exchange before it finished (a timeout,
        /// a failed sibling branch, an interruption).
        cancelled: bool,
    },
    Tool {
        step: u64,
        name: String,
        args: Value,
        /// `None`: the call started and the run ended before it returned.
        outcome: Option<Result<Value, String>>,
        changes: Vec<Change>,
        /// The call's idempotency key (journals of an earlier `sr` lack it).
        key: Option<String>,
        /// What the tool reported at this place, every attempt's, in order
        /// (a remote agent's updates).
        updates: Vec<crate::tools::Update>,
        /// A file tool's paths as they were before the call (its `tool_start`).
        before: Vec<(String, State)>,
        /// Why the journal does not know the files the call changed.
        unrecorded: Option<String>,
        /// What the run was told about the call's files (limits passed).
        warnings: Vec<String>,
    },
    Value {
        step: u64,
        source: String,
        args: Value,
        value: Value,
    },
}

impl Effect {
    pub(crate) fn step(&self) -> u64 {
        match self {
            Effect::Model { step, .. } | Effect::Tool { step, .. } | Effect::Value { step, .. } => *step,
        }
    }

    /// What was recorded, for a divergence's message.
    pub(crate) fn describe(&self) -> String {
        match self {
            Effect::Model { request, .. } => {
                format!("a request to model `{}`", request["model"].as_str().unwrap_or("?"))
            }
            Effect::Tool { name, args, .. } => format!("a call of tool '{name}' with {}", shown(args)),
            Effect::Value { source, args, .. } => format!("{source}({})", shown_args(args)),
        }
    }
}

/// A parallel block's `interleave` line.
#[derive(Debug)]
struct Interleaving {
    /// The order its branches' events came in.
    order: Vec<u32>,
    /// The step of its line (the last of the block's).
    step: u64,
    /// The ids its branches' threads had (none in a journal written before
    /// they were kept).
    threads: Vec<u32>,
    /// A pause or a terminate stopped it: its branches were interrupted, not
    /// finished, and a resumed run continues them.
    cut: bool,
}

/// A journal read into what it serves.
#[derive(Debug, Default)]
pub struct Recorded {
    pub(crate) meta: Option<Meta>,
    effects: HashMap<(Arc<str>, u32), Effect>,
    interleavings: HashMap<(Arc<str>, u32), Interleaving>,
    /// The highest thread id of a recorded block's branches.
    last_thread: u32,
    /// Every file change in the file, void or not, in the order they were
    /// made: undoing them all in reverse gives the files the run started with.
    pub(crate) all_changes: Vec<Change>,
    /// Blob hash → its bytes.
    pub(crate) blobs: HashMap<String, Arc<[u8]>>,
    /// Calls whose file changes the journal does not know, and why.
    pub(crate) unrecorded: Vec<String>,
    /// The changes of calls a crash cut off, by place, for the lines of
    /// their later attempts.
    cut_changes: HashMap<(Arc<str>, u32), Vec<Change>>,
    /// The work directory as the journal knows it: every whole-directory
    /// call's `tree` (how the directory differed when it started) and every
    /// change, in order. Such calls run one at a time and each one's `tool`
    /// line comes before the next call's `tool_start`, so when the journal
    /// holds a call's `tool_start` and no `tool` line, this was the directory
    /// when it started.
    pub(crate) view: std::collections::BTreeMap<String, State>,
    /// The whole-directory call whose `tool` line has not come yet.
    in_flight: Option<(Arc<str>, u32)>,
    /// The directory as each whole-directory call a crash cut off started from.
    cut_trees: HashMap<(Arc<str>, u32), std::collections::BTreeMap<String, State>>,
    max_step: u64,
    effects_per_thread: HashMap<Arc<str>, u32>,
    /// Decisions about calls in doubt, by the step of the call's `tool_start`.
    decisions: HashMap<u64, Decision>,
    /// The `tool_update`s of each place, for the tool lines that follow them.
    updates: HashMap<(Arc<str>, u32), Vec<crate::tools::Update>>,
    /// The recorded run reached its end (an `end` line): what it left
    /// unfinished was cancelled by the run itself, not cut off by a crash.
    ended: bool,
    /// Its last `end` line says it paused.
    paused: bool,
}

impl Recorded {
    /// How the recorded run started (its last `meta` line), if the journal says.
    pub fn meta(&self) -> Option<&Meta> {
        self.meta.as_ref()
    }

    /// The files the recorded run wrote and left, by path in order: each
    /// path whose last change leaves a regular file, with its bytes when the
    /// journal holds them (`None`: kept by hash only, past the journal's
    /// limits). A file it removed, a directory or a link is not listed.
    pub fn files_written(&self) -> Vec<(String, Option<Arc<[u8]>>)> {
        let mut last: std::collections::BTreeMap<&str, &State> = std::collections::BTreeMap::new();
        for change in &self.all_changes {
            last.insert(&change.path, &change.after);
        }
        last.into_iter()
            .filter_map(|(path, state)| match state {
                State::File { sha256, .. } => Some((path.to_string(), self.blobs.get(sha256).cloned())),
                _ => None,
            })
            .collect()
    }

    /// Reads journal `text`. Lines it does not know are skipped (MCP listings
    /// are read by the MCP hub); a line that is not JSON, or a journal of an
    /// older format, is an error naming the line.
    pub fn parse(text: &str) -> Result<Recorded, ParseError> {
        let mut recorded = Recorded::default();
        let mut threads: HashSet<Arc<str>> = HashSet::new();
        let mut intern = |name: &str| -> Arc<str> {
            match threads.get(name) {
                Some(thread) => thread.clone(),
                None => {
                    let thread: Arc<str> = name.into();
                    threads.insert(thread.clone());
                    thread
                }
            }
        };
        let mut format_checked = false;
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            if line.trim().is_empty() {
                continue;
            }
            let mut entry: Value =
                serde_json::from_str(line).map_err(|source| ParseError::NotJson { line: number, source })?;
            let kind = entry["kind"].as_str().unwrap_or_default().to_string();
            let bad = |what: &str| ParseError::BadLine { line: number, problem: what.to_string() };
            if !format_checked && kind != sr_mcp::MCP_TOOLS_KIND && kind != sr_mcp::MCP_NOTICE_KIND {
                format_checked = true;
                let format = entry["format"].as_u64().unwrap_or(1);
                if kind != META_KIND || format < JOURNAL_FORMAT {
                    return Err(ParseError::Older { format: if kind == META_KIND { format } else { 1 } });
                }
                if format > JOURNAL_FORMAT {
                    return Err(ParseError::Newer { format });
                }
            }
            let step = entry["step"].as_u64().unwrap_or(0);
            recorded.max_step = recorded.max_step.max(step);
            let at = || -> Result<(Arc<str>, u32), ParseError> {
                let thread = entry["at"].as_str().ok_or_else(|| bad("no `at`"))?;
                let n = entry["n"].as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(|| bad("no `n`"))?;
                Ok((thread.into(), n))
            };
            match kind.as_str() {
                META_KIND => {
                    // A new process: a call still in flight was cut off.
                    recorded.cut_in_flight();
                    // A resumed run's journal starts with its predecessor's
                    // meta and adds its own: the last one says how it started.
                    recorded.meta = Some(serde_json::from_value(entry).map_err(|e| bad(&e.to_string()))?);
                }
                sr_llm::LLM_KIND => {
                    let (thread, n) = at()?;
                    let request: ChatRequest =
                        serde_json::from_value(entry["request"].take()).map_err(|e| bad(&format!("request: {e}")))?;
                    let events =
                        serde_json::from_value(entry["events"].take()).map_err(|e| bad(&format!("events: {e}")))?;
                    let error = match entry["error"].take() {
                        Value::Null => None,
                        error => Some(serde_json::from_value(error).map_err(|e| bad(&format!("error: {e}")))?),
                    };
                    let cancelled = entry["cancelled"] == json!(true);
                    let request = sr_llm::normalize(&request);
                    recorded.insert(intern(&thread), n, Effect::Model { step, request, events, error, cancelled });
                }
                TOOL_START_KIND | TOOL_KIND => {
                    let (thread, n) = at()?;
                    let name = entry["name"].as_str().unwrap_or_default().to_string();
                    let args = entry["args"].take();
                    let outcome = match (kind.as_str(), entry.get("error").and_then(Value::as_str)) {
                        (TOOL_START_KIND, _) => None,
                        (_, Some(error)) => Some(Err(error.to_string())),
                        _ => Some(Ok(entry["result"].take())),
                    };
                    let changes: Vec<Change> = match entry["files"].take() {
                        Value::Null => Vec::new(),
                        files => serde_json::from_value(files).map_err(|e| bad(&format!("files: {e}")))?,
                    };
                    recorded.all_changes.extend(changes.iter().cloned());
                    super::files::see(&mut recorded.view, &changes);
                    let tree: Option<Vec<(String, State)>> = match entry["tree"].take() {
                        Value::Null => None,
                        tree => Some(serde_json::from_value(tree).map_err(|e| bad(&format!("tree: {e}")))?),
                    };
                    let before: Vec<(String, State)> = match entry["before"].take() {
                        Value::Null => Vec::new(),
                        before => serde_json::from_value(before).map_err(|e| bad(&format!("before: {e}")))?,
                    };
                    let unrecorded = entry["files_unrecorded"].as_str().map(|why| format!("tool '{name}': {why}"));
                    recorded.unrecorded.extend(unrecorded.clone());
                    let warnings = match entry["warnings"].take() {
                        Value::Null => Vec::new(),
                        warnings => serde_json::from_value(warnings).map_err(|e| bad(&format!("warnings: {e}")))?,
                    };
                    let key = entry["key"].as_str().map(str::to_string);
                    let thread = intern(&thread);
                    let place = (thread.clone(), n);
                    if let Some(tree) = tree {
                        for (path, state) in &tree {
                            super::files::set(&mut recorded.view, path, state);
                        }
                        recorded.in_flight = Some(place.clone());
                    } else if kind == TOOL_KIND && recorded.in_flight.as_ref() == Some(&place) {
                        recorded.in_flight = None;
                    }
                    let updates = recorded.updates.get(&place).cloned().unwrap_or_default();
                    // An earlier attempt's changes come first.
                    let changes = match recorded.cut_changes.get(&place) {
                        Some(cut) => cut.iter().cloned().chain(changes).collect(),
                        None => changes,
                    };
                    let effect =
                        Effect::Tool { step, name, args, outcome, changes, key, updates, before, unrecorded, warnings };
                    recorded.insert(thread, n, effect);
                }
                FILES_KIND => {
                    let (thread, n) = at()?;
                    let changes: Vec<Change> =
                        serde_json::from_value(entry["files"].take()).map_err(|e| bad(&format!("files: {e}")))?;
                    recorded.all_changes.extend(changes.iter().cloned());
                    super::files::see(&mut recorded.view, &changes);
                    let place = (intern(&thread), n);
                    if let Some(Effect::Tool { changes: made, .. }) = recorded.effects.get_mut(&place) {
                        made.extend(changes.iter().cloned());
                    }
                    recorded.cut_changes.entry(place).or_default().extend(changes);
                }
                TOOL_UPDATE_KIND => {
                    let (thread, n) = at()?;
                    let update: crate::tools::Update =
                        serde_json::from_value(entry["update"].take()).map_err(|e| bad(&format!("update: {e}")))?;
                    let place = (intern(&thread), n);
                    if let Some(Effect::Tool { updates, .. }) = recorded.effects.get_mut(&place) {
                        updates.push(update.clone());
                    }
                    recorded.updates.entry(place).or_default().push(update);
                }
                VALUE_KIND => {
                    let (thread, n) = at()?;
                    let source = entry["source"].as_str().unwrap_or_default().to_string();
                    let effect =
                        Effect::Value { step, source, args: entry["args"].take(), value: entry["value"].take() };
                    recorded.insert(intern(&thread), n, effect);
                }
                INTERLEAVE_KIND => {
                    let (thread, n) = at()?;
                    let order = super::interleave::expand(&entry["order"]).ok_or_else(|| bad("a bad `order`"))?;
                    let threads = match entry.get("threads") {
                        None => Vec::new(),
                        Some(ids) => ids
                            .as_array()
                            .and_then(|ids| ids.iter().map(|id| u32::try_from(id.as_u64()?).ok()).collect())
                            .ok_or_else(|| bad("bad `threads`"))?,
                    };
                    recorded.last_thread = threads.iter().copied().fold(recorded.last_thread, u32::max);
                    let cut = entry["cut"].as_bool().unwrap_or(false);
                    recorded.interleavings.insert((intern(&thread), n), Interleaving { order, step, threads, cut });
                }
                BLOB_KIND => {
                    let hash = entry["sha256"].as_str().ok_or_else(|| bad("a blob without `sha256`"))?.to_string();
                    let bytes = super::files::blob_bytes(&entry).ok_or_else(|| bad("a blob without content"))?;
                    recorded.blobs.insert(hash, bytes.into());
                }
                END_KIND => {
                    recorded.ended = true;
                    recorded.paused = entry["status"] == "paused";
                }
                ANSWER_KIND => {
                    let text = entry["text"].as_str().ok_or_else(|| bad("an answer without `text`"))?;
                    let meta = recorded.meta.as_mut().ok_or_else(|| bad("an answer before the `meta`"))?;
                    meta.answers.push(text.to_string());
                }
                IN_DOUBT_KIND => {
                    let of = entry["of"].as_u64().ok_or_else(|| bad("a decision without `of`"))?;
                    let decision = entry["decision"].as_str().unwrap_or_default();
                    recorded.decisions.insert(of, decision.parse().map_err(|e: NoDecision| bad(&e.to_string()))?);
                }
                FORK_KIND => match entry["from_step"].as_u64() {
                    Some(from) => recorded.void_from_step(from),
                    None => {
                        let (thread, n) = at()?;
                        recorded.void_fork(&thread, n);
                    }
                },
                _ => {}
            }
        }
        recorded.cut_in_flight();
        Ok(recorded)
    }

    /// The whole-directory call in flight, if any, was cut off: the
    /// directory it started from is kept for the run that resumes it.
    fn cut_in_flight(&mut self) {
        if let Some(place) = self.in_flight.take() {
            self.cut_trees.insert(place, self.view.clone());
        }
    }

    /// The directory the whole-directory call at `at`, cut off by a crash,
    /// started from.
    pub(crate) fn cut_tree(&self, at: &EffectAt) -> Option<&std::collections::BTreeMap<String, State>> {
        self.cut_trees.get(&(at.thread.clone(), at.n))
    }

    fn insert(&mut self, thread: Arc<str>, n: u32, effect: Effect) {
        let count = self.effects_per_thread.entry(thread.clone()).or_default();
        *count = (*count).max(n + 1);
        self.effects.insert((thread, n), effect);
    }

    /// Forgets what `thread` recorded from effect `n` on, and what the
    /// branches it started from there recorded.
    fn void_fork(&mut self, thread: &str, n: u32) {
        let gone = |t: &str, m: u32| (t == thread && m >= n) || descends(t, thread, n);
        self.effects.retain(|(t, m), _| !gone(t, *m));
        self.interleavings.retain(|(t, m), _| !gone(t, *m));
        self.updates.retain(|(t, m), _| !gone(t, *m));
        self.cut_changes.retain(|(t, m), _| !gone(t, *m));
        self.recount();
    }

    /// Forgets every effect recorded at step `from` or later.
    fn void_from_step(&mut self, from: u64) {
        self.effects.retain(|_, effect| effect.step() < from);
        // A block's line comes after its effects: one that ends at or after
        // the fork point runs again.
        self.interleavings.retain(|_, block| block.step < from);
        let effects = &self.effects;
        self.updates.retain(|place, _| effects.contains_key(place));
        self.cut_changes.retain(|place, _| effects.contains_key(place));
        self.recount();
    }

    fn recount(&mut self) {
        self.effects_per_thread.clear();
        for (thread, n) in self.effects.keys() {
            let count = self.effects_per_thread.entry(thread.clone()).or_default();
            *count = (*count).max(n + 1);
        }
    }

    pub(crate) fn effect(&self, at: &EffectAt) -> Option<&Effect> {
        self.effects.get(&(at.thread.clone(), at.n))
    }

    /// How many effects `thread` recorded.
    pub(crate) fn effects_of(&self, thread: &Arc<str>) -> u32 {
        self.effects_per_thread.get(thread).copied().unwrap_or(0)
    }

    pub(crate) fn interleaving(&self, at: &EffectAt) -> Option<&[u32]> {
        self.interleavings.get(&(at.thread.clone(), at.n)).map(|block| block.order.as_slice())
    }

    /// The thread ids the branches of the block at `at` had, if the journal keeps them.
    pub(crate) fn threads(&self, at: &EffectAt) -> Option<&[u32]> {
        let threads = &self.interleavings.get(&(at.thread.clone(), at.n))?.threads;
        (!threads.is_empty()).then_some(threads.as_slice())
    }

    pub(crate) fn last_thread(&self) -> u32 {
        self.last_thread
    }

    /// The recorded tool effects with file changes, of `block`'s branches (the
    /// threads it started and theirs), in the order they were made.
    pub(crate) fn changes_under(&self, block: &EffectAt) -> Vec<(u64, &[Change])> {
        let mut found: Vec<(u64, &[Change])> = self
            .effects
            .iter()
            .filter(|((thread, _), _)| in_block(thread, &block.thread, block.n))
            .filter_map(|(_, effect)| match effect {
                Effect::Tool { step, changes, .. } if !changes.is_empty() => Some((*step, changes.as_slice())),
                _ => None,
            })
            .collect();
        found.sort_by_key(|(step, _)| *step);
        found
    }

    /// The decision taken about the call in doubt whose `tool_start` was `step`.
    pub(crate) fn decision(&self, step: u64) -> Option<Decision> {
        self.decisions.get(&step).copied()
    }

    /// Whether a `parallel` block `thread` is a branch of (`main/3.1`:
    /// branch 1 of effect 3 of `main`), or of a block inside one, finished in
    /// the recorded run (its `interleave` line is journaled, and no pause or
    /// terminate cut it): a call of the branch that has no result was
    /// cancelled when the block ended, not cut off by a crash.
    pub(crate) fn block_finished(&self, thread: &str) -> bool {
        self.interleavings.iter().any(|((parent, n), block)| !block.cut && in_block(thread, parent, *n))
    }

    /// Whether the recorded run ended paused and `thread` is a branch of a
    /// block the pause cut (or of a block inside one): the branch waited
    /// there, at a call the pause let not start, to be cancelled.
    pub(crate) fn paused_in_block(&self, thread: &str) -> bool {
        self.paused && self.interleavings.iter().any(|((parent, n), block)| block.cut && in_block(thread, parent, *n))
    }

    /// Whether the block at `at` was stopped by a pause or a terminate.
    pub(crate) fn block_cut(&self, at: &EffectAt) -> bool {
        self.interleavings.get(&(at.thread.clone(), at.n)).is_some_and(|block| block.cut)
    }

    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    pub(crate) fn max_step(&self) -> u64 {
        self.max_step
    }

    pub(crate) fn blob_hashes(&self) -> HashSet<String> {
        self.blobs.keys().cloned().collect()
    }
}

/// Whether `thread` is a branch that `ancestor` started at its effect `from`
/// or later (`main/3.1/0.2` descends from `main` at 3 and from `main/3.1` at 0).
pub(crate) fn descends(thread: &str, ancestor: &str, from: u32) -> bool {
    let Some(rest) = thread.strip_prefix(ancestor).and_then(|rest| rest.strip_prefix('/')) else { return false };
    let block = rest.split('/').next().unwrap_or_default();
    let n = block.split('.').next().and_then(|n| n.parse::<u32>().ok());
    n.is_some_and(|n| n >= from)
}

/// Whether `thread` is a branch of the block `parent` started as its effect
/// `n`, or a branch of one of those.
pub(crate) fn in_block(thread: &str, parent: &str, n: u32) -> bool {
    let Some(rest) = thread.strip_prefix(parent).and_then(|rest| rest.strip_prefix('/')) else { return false };
    let block = rest.split('/').next().unwrap_or_default();
    block.split('.').next().and_then(|m| m.parse::<u32>().ok()) == Some(n)
}

/// A value as a divergence shows it: JSON, cut after 200 characters.
pub(crate) fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(200) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

/// Arguments as a call shows them: `1, "a"`.
pub(crate) fn shown_args(args: &Value) -> String {
    match args {
        Value::Array(items) => items.iter().map(shown).collect::<Vec<_>>().join(", "),
        other => shown(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branches_descend_from_the_block_that_started_them() {
        assert!(descends("main/3.1", "main", 3));
        assert!(descends("main/3.1/0.2", "main", 3));
        assert!(descends("main/3.1/0.2", "main/3.1", 0));
        assert!(!descends("main/2.1", "main", 3), "started before the fork point");
        assert!(!descends("main", "main", 0), "a thread is not its own branch");
        assert!(!descends("main2/3.1", "main", 0), "a prefix of the name is not an ancestor");
    }

    fn meta() -> String {
        Meta { invocation_id: "i".into(), ..Meta::new("w.sr", "go") }.to_entry().to_string()
    }

    #[test]
    fn later_lines_replace_earlier_ones_and_forks_void_what_followed() {
        let value = |at: &str, n: u32, step: u64, v: &str| {
            json!({"kind": "value", "at": at, "n": n, "step": step, "source": "uuid", "args": [], "value": v})
                .to_string()
        };
        let text = [
            meta(),
            value("main", 0, 1, "a"),
            value("main", 1, 2, "b"),
            value("main/1.0", 0, 3, "c"),
            value("main", 0, 4, "a2"),
            json!({"kind": "fork", "at": "main", "n": 1}).to_string(),
        ]
        .join("\n");
        let recorded = Recorded::parse(&text).unwrap();
        let at = |thread: &str, n| EffectAt { thread: thread.into(), n };
        let served = |thread: &str, n| match recorded.effect(&at(thread, n)) {
            Some(Effect::Value { value, .. }) => Some(value.clone()),
            _ => None,
        };
        assert_eq!(served("main", 0), Some(json!("a2")));
        assert_eq!(served("main", 1), None, "voided by the fork");
        assert_eq!(served("main/1.0", 0), None, "a branch started at the fork point");
        assert_eq!(recorded.effects_of(&"main".into()), 1);
        assert_eq!(recorded.max_step(), 4);
    }

    #[test]
    fn a_resumed_journal_says_how_its_last_run_started() {
        let resumed = Meta { input: "go".into(), answers: vec!["yes".into()], ..Meta::new("w.sr", "go") };
        let text = format!("{}\n{}", meta(), resumed.to_entry());
        assert_eq!(Recorded::parse(&text).unwrap().meta().map(|m| m.answers.clone()), Some(vec!["yes".to_string()]));
        assert_eq!(Recorded::parse("").unwrap().meta(), None);
    }

    #[test]
    fn the_files_written_are_each_path_s_last_regular_file_with_its_bytes() {
        let file = |sha: &str, kept: bool| json!({"is": "file", "sha256": sha, "size": 2, "kept": kept});
        let absent = json!({"is": "absent"});
        let change =
            |path: &str, before: &Value, after: &Value| json!({"path": path, "before": before, "after": after});
        let tool = |n: u32, files: Value| {
            json!({"kind": "tool", "at": "main", "n": n, "step": n + 1, "name": "t", "args": {}, "result": null, "files": files})
                .to_string()
        };
        let text = [
            meta(),
            tool(0, json!([change("b.txt", &absent, &file("h1", true)), change("gone", &absent, &file("h1", true))])),
            json!({"kind": "blob", "sha256": "h1", "text": "v1"}).to_string(),
            tool(
                1,
                json!([
                    change("b.txt", &file("h1", true), &file("h2", true)),
                    change("gone", &file("h1", true), &absent)
                ]),
            ),
            json!({"kind": "blob", "sha256": "h2", "base64": "AP8="}).to_string(),
            tool(2, json!([change("a/big", &absent, &file("h3", false)), change("d", &absent, &json!({"is": "dir"}))])),
        ]
        .join("\n");
        let written = Recorded::parse(&text).unwrap().files_written();
        let shown: Vec<(&str, Option<&[u8]>)> = written.iter().map(|(p, b)| (p.as_str(), b.as_deref())).collect();
        assert_eq!(shown, [("a/big", None), ("b.txt", Some(&[0u8, 255][..]))]);
    }

    #[test]
    fn old_formats_and_broken_lines_are_refused_with_their_line() {
        let old = r#"{"kind":"meta","invocation_id":"i","workload":"w","input":""}"#;
        let error = Recorded::parse(old).unwrap_err();
        assert!(matches!(error, ParseError::Older { format: 1 }), "{error}");
        assert!(error.to_string().contains("earlier version of sr"), "{error}");
        let error = Recorded::parse(&format!("{}\nnot json", meta())).unwrap_err();
        assert!(error.to_string().starts_with("line 2 of the journal is not JSON"), "{error}");
        let error = Recorded::parse(&format!("{}\n{{\"kind\":\"value\",\"n\":0}}", meta())).unwrap_err();
        assert_eq!(error.to_string(), "line 2 of the journal: no `at`");
    }
}
