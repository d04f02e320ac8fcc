//! The journal: every value a run observes from outside its program — model
//! replies, tool results, `uuid()`, `now()` and random values, the order in
//! which parallel branches' events interleave, the files its tools change —
//! recorded under a key the program's own control flow decides: the thread
//! (`main`, or `main/3.1` for branch 1 of the `parallel` block that was
//! effect 3 of `main`) and the effect's number on that thread. Since a thread
//! runs its statements in order, a run that is served the same values makes
//! the same effects under the same keys, whatever the timing of its branches.
//!
//! A journal is one JSON-lines file (the cassette format of `sr-llm`, whose
//! `llm` lines this module writes with its own keys): `meta` first, then
//! `llm`, `tool_start`/`tool`, `value`, `interleave`, `blob`, `answer` and
//! `fork` lines in the order they happened. A later line with the same key
//! replaces an earlier one (a resumed run's journal is its predecessor's
//! followed by what is new), and a `fork` line voids what the forked thread,
//! and the branches it started, recorded from the fork point on.
//!
//! How a run uses its journal is its [`Mode`]: a live run records; a replay
//! serves everything and fails at the first effect the journal does not have;
//! a resumed run and a run going back in time serve what the journal has and
//! go live where a thread's journal ends. In every serving mode an effect that
//! differs from the recorded one stops the run with a [`Divergence`] naming
//! the first difference: a run never goes live by accident. Going live on
//! purpose is a fork: [`Journal::fork`] for a thread, or a `fork` line with a
//! `from_step` for a whole run (`sr run --resume ID --from STEP`).

mod code;
mod entry;
mod error;
mod files;
pub(crate) mod interleave;
mod listing;
mod model;
mod parked;
mod pausing;
mod siblings;
pub mod times;
mod tool;
mod torn;
mod workspace;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use serde_json::{Value, json};
use sr_llm::Cassette;

use crate::in_doubt::{Always, Decider, Decision as InDoubt, Question};

pub(crate) use entry::Effect;
pub use entry::Recorded;
pub use entry::{JOURNAL_FORMAT, Meta};
pub use error::{JournalError, ParseError};
pub use listing::steps;
pub use model::JournaledProvider;
pub use tool::ToolStop;
pub use torn::cut_torn;
pub(crate) use torn::torn_warning;
pub use workspace::{ENTRIES_VAR, FILE_BYTES_VAR, Limits, RUN_BYTES_VAR, RestoreError, Workspace};

/// The name a coding agent's step has in the journal (its
/// `tool_start` and `tool` lines).
pub(crate) const CODE_STEP: &str = "code";

/// What the journal is for in this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Everything is live; the journal records (when it has a file).
    Live,
    /// Everything is served; an effect the journal lacks is a divergence.
    /// Files the recorded tools changed are changed again.
    Replay,
    /// A run continued after it was interrupted or paused: what the journal
    /// has is served, and a thread goes live where its journal ends. The work
    /// directory is live already: files are not touched.
    Resume,
    /// A run going back in time in its own recording (the debugger): served
    /// like a resumed run, and the work directory is first put back as it
    /// was when the run started, then moved forward with each served tool.
    Travel,
}

/// Where an effect happens: a thread and the effect's number on it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EffectAt {
    pub thread: Arc<str>,
    pub n: u32,
}

impl std::fmt::Display for EffectAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}#{}", self.thread, self.n)
    }
}

/// The run asked for something other than what its journal recorded at that
/// point, while the journal still had the recorded answer to give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence(pub String);

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A run's journal: what it was served from, and where it records.
pub struct Journal {
    mode: Mode,
    recorded: Recorded,
    writer: Option<Writer>,
    /// The step number of the next new entry: one more than any recorded.
    next_step: AtomicU64,
    /// Threads that went live on purpose, and from which effect on.
    forks: Mutex<HashMap<Arc<str>, u32>>,
    /// The work directory, for capturing and restoring the files tools change.
    workspace: Option<Workspace>,
    /// The run's invocation id, the start of its calls' idempotency keys.
    invocation: String,
    /// Who decides about a call a crash cut off, of a tool not idempotent.
    decider: Arc<dyn Decider>,
    /// The call in doubt nobody decided about: the run stopped there.
    undecided: Mutex<Option<Question>>,
    /// What the tool calls at each place must tell the run about their
    /// files (a limit passed), until the run takes it.
    warnings: Mutex<HashMap<EffectAt, Vec<String>>>,
    /// Threads of finished `parallel` blocks that reached an effect the
    /// recording lacks: the recorded run cancelled them before it.
    cut_short: Mutex<Vec<Arc<str>>>,
    /// The `parallel` blocks under way ([`siblings`]).
    blocks: siblings::Blocks,
    /// Live calls in flight, and whether the run pauses ([`pausing`]).
    calls: pausing::Count,
    /// Told when a thread waits at a served call to be cancelled
    /// ([`Journal::parked`]); weak, as the hook may hold the journal.
    parked_to: OnceLock<Weak<dyn crate::hook::StepHook>>,
    /// The threads waiting so ([`parked`]).
    parked: parked::Threads,
}

/// Where new entries go: the journal file (and its mirror, `--record`).
struct Writer {
    cassette: Arc<Cassette>,
    /// Blobs already in the file, by hash, so each is written once.
    blobs: Mutex<std::collections::HashSet<String>>,
}

impl Journal {
    /// A journal that records nothing: every effect is live.
    pub fn unrecorded() -> Journal {
        Journal::new(Mode::Live, Recorded::default(), None, None)
    }

    /// A journal of model exchanges made outside any run (an evaluation's
    /// judge), recorded to a new file of its own at `path`.
    pub fn recording_exchanges(path: &std::path::Path) -> Result<Journal, JournalError> {
        let cassette = Cassette::create(path)
            .map_err(|source| JournalError::New { path: path.to_path_buf(), source: Box::new(source) })?;
        Journal::recording(Arc::new(cassette), &Meta::new("", ""), None)
    }

    /// A live run recorded to `cassette`, which gets `meta` as its first line.
    pub fn recording(
        cassette: Arc<Cassette>,
        meta: &Meta,
        workspace: Option<Workspace>,
    ) -> Result<Journal, JournalError> {
        cassette.append(&meta.to_entry()).map_err(|e| JournalError::Write(Box::new(e)))?;
        let mut journal = Journal::new(Mode::Live, Recorded::default(), Some(cassette), workspace);
        // Its calls' idempotency keys start with the run's id, as a launched run's do.
        journal.invocation.clone_from(&meta.invocation_id);
        Ok(journal)
    }

    /// A journal in `mode` that serves `recorded` and appends to `cassette`.
    pub fn new(
        mode: Mode,
        recorded: Recorded,
        cassette: Option<Arc<Cassette>>,
        workspace: Option<Workspace>,
    ) -> Journal {
        let writer = cassette.map(|cassette| Writer { blobs: Mutex::new(recorded.blob_hashes()), cassette });
        if let Some(workspace) = &workspace {
            workspace.know(&recorded.view);
        }
        Journal {
            mode,
            next_step: AtomicU64::new(recorded.max_step() + 1),
            invocation: recorded.meta.as_ref().map(|m| m.invocation_id.clone()).unwrap_or_default(),
            recorded,
            writer,
            forks: Mutex::new(HashMap::new()),
            cut_short: Mutex::new(Vec::new()),
            blocks: Default::default(),
            calls: pausing::count(),
            workspace,
            decider: Arc::new(Always(InDoubt::Skip)),
            undecided: Mutex::new(None),
            warnings: Mutex::new(HashMap::new()),
            parked_to: OnceLock::new(),
            parked: parked::threads(),
        }
    }

    /// `hook` is told of each thread that waits at a served call to be
    /// cancelled ([`crate::hook::StepHook::on_parked`]); the first hook given stays.
    pub fn report_parked_to(&self, hook: &Arc<dyn crate::hook::StepHook>) {
        let _ = self.parked_to.set(Arc::downgrade(hook));
    }

    /// The journal of run `invocation_id`, with `decider` deciding about calls
    /// in doubt (by default each is skipped: the model is told it was cut off).
    pub fn deciding(mut self, invocation_id: &str, decider: Arc<dyn Decider>) -> Journal {
        self.invocation = invocation_id.to_string();
        self.decider = decider;
        self
    }

    /// What the tool call at `at` had to say about its files (a file past the
    /// journal's limits, a FIFO not recorded): the run emits each as a
    /// warning. A served call says what the recorded one said.
    pub fn take_warnings(&self, at: &EffectAt) -> Vec<String> {
        self.warnings.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(at).unwrap_or_default()
    }

    fn warn(&self, at: &EffectAt, warnings: Vec<String>) {
        if !warnings.is_empty() {
            self.warnings.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(at.clone(), warnings);
        }
    }

    /// The call in doubt the run stopped at because nobody decided about it.
    pub fn undecided(&self) -> Option<Question> {
        self.undecided.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// How the recorded run started, if the journal says.
    pub fn meta(&self) -> Option<&Meta> {
        self.recorded.meta.as_ref()
    }

    /// A person answered an `escalate to human` with `text` (answers given
    /// in advance are in the `meta`).
    pub fn answered(&self, text: &str) -> Result<(), JournalError> {
        self.write(&json!({"kind": entry::ANSWER_KIND, "text": text}))
    }

    /// The run ended with `status`: what it left unfinished it cancelled.
    pub fn finish(&self, status: crate::event::RunStatus) -> Result<(), JournalError> {
        self.write(&json!({"kind": entry::END_KIND, "status": status}))
    }

    /// `thread` goes live from effect `n` on (its recorded entries from there,
    /// and those of branches it started from there, are void), and the
    /// journal says so. A debugger's edit makes a fork. A live run has nothing
    /// to fork from, and a replay never goes live: there an edit that changes
    /// what the run asks for is a divergence.
    pub fn fork(&self, thread: &Arc<str>, n: u32) -> Result<(), JournalError> {
        let mut forks = self.forks.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let already = forks.get(thread).is_some_and(|&at| at <= n);
        if already || matches!(self.mode, Mode::Live | Mode::Replay) {
            return Ok(());
        }
        forks.insert(thread.clone(), n);
        drop(forks);
        self.write(&json!({"kind": entry::FORK_KIND, "at": &**thread, "n": n}))
    }

    /// Whether the effect at `at` is served from the journal, and with what.
    fn decide(&self, at: &EffectAt) -> Decision<'_> {
        if self.mode == Mode::Live || self.forked(at) {
            return Decision::Live;
        }
        match self.recorded.effect(at) {
            Some(effect) => Decision::Serve(effect),
            _ if self.mode == Mode::Replay => Decision::Missing,
            // A branch of a block that finished in the recording never goes
            // live on resume: what it did not record, it never did.
            _ if self.mode == Mode::Resume && self.recorded.block_finished(&at.thread) => Decision::Missing,
            _ => Decision::Live,
        }
    }

    /// Whether `at`'s thread, or a thread that started it, forked at or before it.
    fn forked(&self, at: &EffectAt) -> bool {
        let forks = self.forks.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if forks.is_empty() {
            return false;
        }
        if forks.get(&at.thread).is_some_and(|&from| at.n >= from) {
            return true;
        }
        forks.iter().any(|(thread, &from)| entry::descends(&at.thread, thread, from))
    }

    /// The number the next new entry gets.
    fn take_step(&self) -> u64 {
        self.next_step.fetch_add(1, Ordering::Relaxed)
    }

    fn write(&self, entry: &Value) -> Result<(), JournalError> {
        match &self.writer {
            Some(writer) => writer.cassette.append(entry).map_err(|e| JournalError::Write(Box::new(e))),
            None => Ok(()),
        }
    }

    fn writes(&self) -> bool {
        self.writer.is_some()
    }

    /// Whether a thread went live on purpose (a fork): what the run does
    /// from then on is not the recorded run's.
    fn went_live(&self) -> bool {
        !self.forks.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).is_empty()
    }

    /// A value only the world knows (`uuid()`, `now()`, a random number):
    /// served from the journal, or computed by `live` and recorded.
    pub fn value(
        &self,
        at: &EffectAt,
        source: &str,
        args: &[Value],
        live: impl FnOnce() -> Result<Value, String>,
    ) -> Result<Result<Value, String>, Divergence> {
        let args = Value::Array(args.to_vec());
        match self.decide(at) {
            Decision::Serve(Effect::Value { source: recorded, args: recorded_args, value, .. })
                if recorded == source && *recorded_args == args =>
            {
                Ok(Ok(value.clone()))
            }
            Decision::Serve(other) => Err(Divergence(format!(
                "{source}({}) was called where the journal recorded {}",
                entry::shown_args(&args),
                other.describe()
            ))),
            Decision::Missing => Err(self.missing(at, &format!("{source}()"))),
            Decision::Live => {
                let value = live();
                if let Ok(value) = &value
                    && self.writes()
                {
                    let entry = json!({
                        "kind": entry::VALUE_KIND, "at": &*at.thread, "n": at.n, "step": self.take_step(),
                        "source": source, "args": args, "value": value,
                    });
                    if let Err(e) = self.write(&entry) {
                        return Ok(Err(e.to_string()));
                    }
                }
                Ok(value)
            }
        }
    }

    /// The divergence of a replay that reached an effect its recording lacks.
    fn missing(&self, at: &EffectAt, what: &str) -> Divergence {
        if self.recorded.block_finished(&at.thread) || self.recorded.paused_in_block(&at.thread) {
            self.cut_short.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(at.thread.clone());
        }
        let recorded = self.recorded.effects_of(&at.thread);
        match recorded {
            0 => Divergence(format!(
                "the recording has nothing for {what} here: it recorded no effect of thread {}",
                at.thread
            )),
            n => Divergence(format!(
                "the recording has nothing for {what} here: thread {} recorded {n} effect(s) and this is its effect {}",
                at.thread,
                at.n + 1
            )),
        }
    }

    /// Whether `thread` (a `parallel` branch), or a branch inside it, diverged
    /// only by reaching an effect the recording lacks although its block
    /// finished there: a sibling's failure cancelled it before that effect,
    /// and cancels it again when the branch waits for it. Also a branch of a
    /// block the recorded run's pause cut: the pause cancels it again.
    pub fn cut_short(&self, thread: &str) -> bool {
        let cut = self.cut_short.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        cut.iter().any(|t| t.strip_prefix(thread).is_some_and(|rest| rest.is_empty() || rest.starts_with('/')))
    }

    /// The order in which the branches of the parallel block at `at` emitted
    /// their events, to emit them in again: in a replay, and in a resumed run
    /// (so that what an earlier process journaled, and the events' `seq`
    /// numbers, never change meaning), when nothing under the block went live
    /// on purpose. The debugger going back in time lets events out as they
    /// come: a branch it stops must not hold back the others'.
    pub fn interleaving(&self, at: &EffectAt) -> Option<Vec<u32>> {
        if !matches!(self.mode, Mode::Replay | Mode::Resume) {
            return None;
        }
        self.recorded_interleaving(at)
    }

    /// The thread ids the branches of the parallel block at `at` had, to
    /// give them again where its order is served ([`Journal::interleaving`]):
    /// the events' `branch:ID` paths are the recorded ones, so that `sr
    /// serve`'s time travel follows a replay's branches by the stored events.
    pub fn branch_threads(&self, at: &EffectAt) -> Option<Vec<u32>> {
        self.interleaving(at)?;
        self.recorded.threads(at).map(<[u32]>::to_vec)
    }

    /// The highest thread id [`Journal::branch_threads`] can give: new
    /// threads get higher ones, so that no two threads share an id.
    pub fn last_served_thread(&self) -> u32 {
        match self.mode {
            Mode::Replay | Mode::Resume => self.recorded.last_thread(),
            _ => 0,
        }
    }

    /// The block's recorded order, unless something under it went live on purpose.
    fn recorded_interleaving(&self, at: &EffectAt) -> Option<Vec<u32>> {
        if self.mode == Mode::Live || self.forked_under(at) {
            return None;
        }
        self.recorded.interleaving(at).map(<[u32]>::to_vec)
    }

    /// Whether `at`, or a branch of the block at `at`, went live on purpose.
    fn forked_under(&self, at: &EffectAt) -> bool {
        if self.forked(at) {
            return true;
        }
        let forks = self.forks.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        forks.keys().any(|thread| entry::in_block(thread, &at.thread, at.n))
    }

    /// Records the order in which the block's branches emitted their events,
    /// their `threads`' ids, and whether a pause or a terminate `cut` the
    /// block short, unless the journal has them already: an earlier line is
    /// never written again. A block an earlier process's pause cut is
    /// recorded again when it ends here, with its whole order (what the
    /// earlier line held comes first), and the later line is the one a
    /// journal serves.
    pub fn record_interleaving(
        &self,
        at: &EffectAt,
        order: &[u32],
        threads: &[u32],
        cut: bool,
    ) -> Result<(), JournalError> {
        let recorded = self.recorded_interleaving(at).is_some() && !self.recorded.block_cut(at);
        // A block whose branches emitted nothing is recorded too: a replay
        // must know it ended there (a branch that reached an effect the
        // recording lacks was cancelled by a sibling's failure).
        if !self.writes() || self.mode == Mode::Replay || recorded {
            return Ok(());
        }
        let mut entry = json!({
            "kind": entry::INTERLEAVE_KIND, "at": &*at.thread, "n": at.n, "step": self.take_step(),
            "order": interleave::compress(order), "threads": threads,
        });
        if cut {
            entry["cut"] = json!(true);
        }
        self.write(&entry)
    }

    /// After a parallel block of a replay, its branches' file changes are made
    /// again in the order the recorded run made them, so that two branches
    /// writing one file leave what they left then.
    pub fn settle_block(&self, at: &EffectAt) -> Result<(), JournalError> {
        match (&self.workspace, self.mode) {
            (Some(workspace), Mode::Replay) => Ok(workspace.settle(&self.recorded, at)?),
            _ => Ok(()),
        }
    }

    /// Makes every file change the journal holds again, in order: a run
    /// continued on a machine whose work directory is new (`sr serve`'s
    /// replicas) goes on with the files it left.
    pub fn rebuild_files(&self) -> Result<(), RestoreError> {
        match (&self.workspace, self.mode) {
            (Some(workspace), Mode::Resume) => workspace.redo(&self.recorded, &self.recorded.all_changes),
            _ => Ok(()),
        }
    }

    /// Puts the work directory back as it was when the recorded run started
    /// (a run going back in time starts there).
    pub fn rewind_files(&self) -> Result<(), RestoreError> {
        match (&self.workspace, self.mode) {
            (Some(workspace), Mode::Travel) => workspace.rewind(&self.recorded),
            _ => Ok(()),
        }
    }
}

/// Where the journal said an effect comes from.
enum Decision<'a> {
    Serve(&'a Effect),
    Live,
    /// A replay reached an effect its recording does not have.
    Missing,
}
