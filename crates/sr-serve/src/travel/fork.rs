//! Forks: a new run, in a new session, that replays another run's journal up
//! to a point (`Mode::Travel`: every recorded reply and result is served, no
//! model or tool is called) and goes live there, with the model's reply
//! replaced or variables edited. Its plan is kept in the store, written
//! before the run is queued, so whichever replica claims it (after a crash
//! too) starts it as a fork, from the original's journal in the store; once started,
//! the fork has a journal of its own and continues from it like any run, its
//! variable edits made again at the point (they are not in the journal). The
//! original's answers to `escalate to human` before the point are the fork's
//! own from the start (its journal keeps them, as a resumed run's keeps its
//! answers), so a fork that pauses or crashes resumes with them, and a
//! question after the point is the fork's to ask.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sr_api::travel::ForkedFrom;
use sr_runtime::hook::{Control, Step, StepHook, StepPoint};
use sr_runtime::launch::{LaunchError, LaunchSpec, Launched, launch_continuing_answered};

use super::moment::{Point, count_point};
use crate::locked;
use crate::store::{Store, StoreError};

/// Why a fork's plan, or the journal it replays, cannot be kept or read.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("{0}")]
    Encode(serde_json::Error),
    #[error("cannot store the fork's plan: {0}")]
    Save(#[source] StoreError),
    #[error("cannot read the fork's plan: {0}")]
    Read(#[source] StoreError),
    #[error("the fork's plan is damaged: {0}")]
    Damaged(#[source] serde_json::Error),
    #[error("cannot read the original's journal: {0}")]
    Journal(#[source] StoreError),
    #[error("the journal of run {run} (attempt {attempt}) is not in the store")]
    NoJournal { run: String, attempt: i64 },
}

/// What a fork does: where it goes live, and with what.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The run it forks from, and the event.
    pub from_run: String,
    pub at: u64,
    /// The original's session and the attempt whose journal (in the store)
    /// is replayed up to the point.
    pub from_session: String,
    pub from_attempt: i64,
    /// Where it goes live; `None`: the original had no point after the
    /// event, and the fork replays it to its end.
    pub point: Option<Point>,
    /// The original's answers to `escalate to human` before the point.
    #[serde(default)]
    pub answers: Vec<String>,
    pub reply: Option<String>,
    pub set: Map<String, Value>,
}

impl Plan {
    /// What the fork was forked from, as the API shows it.
    pub fn origin(&self) -> ForkedFrom {
        ForkedFrom { run: self.from_run.clone(), at: self.at, reply: self.reply.clone(), set: self.set.clone() }
    }
}

/// What run `run` was forked from; `None` for a run that is not a fork, or
/// whose plan cannot be read (logged).
pub async fn origin(store: &Store, run: &str) -> Option<ForkedFrom> {
    match find(store, run).await? {
        Ok(plan) => Some(plan.origin()),
        Err(error) => {
            tracing::warn!(run, %error, "a fork's origin is not shown");
            None
        }
    }
}

/// The origins of those of `runs` that are forks, by run, read in one query.
pub async fn origins(store: &Store, runs: &[String]) -> HashMap<String, ForkedFrom> {
    let plans = match store.plans(runs).await {
        Ok(plans) => plans,
        Err(error) => {
            tracing::warn!(%error, "the forks' origins are not shown");
            return HashMap::new();
        }
    };
    let read = |(run, text): (String, String)| match serde_json::from_str::<Plan>(&text) {
        Ok(plan) => Some((run, plan.origin())),
        Err(error) => {
            tracing::error!(run, %error, "a fork's plan is damaged");
            None
        }
    };
    plans.into_iter().filter_map(read).collect()
}

/// Keeps the plan of run `run` in the store.
pub async fn save(store: &Store, run: &str, plan: &Plan) -> Result<(), PlanError> {
    let text = serde_json::to_string(plan).map_err(PlanError::Encode)?;
    store.save_plan(run, &text).await.map_err(PlanError::Save)
}

/// Forgets the plan of a run that was not queued after all.
pub async fn discard(store: &Store, run: &str) {
    if let Err(error) = store.discard_plan(run).await {
        tracing::warn!(run, %error, "cannot forget the plan of a fork that was not queued");
    }
}

/// The plan of run `run`, if it is a fork.
pub async fn find(store: &Store, run: &str) -> Option<Result<Plan, PlanError>> {
    let text = match store.plan(run).await {
        Ok(text) => text?,
        Err(e) => return Some(Err(PlanError::Read(e))),
    };
    Some(serde_json::from_str(&text).map_err(|e| {
        tracing::error!(run, error = %e, "a fork's plan is damaged");
        PlanError::Damaged(e)
    }))
}

/// The original's journal a fork replays, from the store.
pub async fn journal(store: &Store, plan: &Plan) -> Result<String, PlanError> {
    let record = store.record(&plan.from_session).await.map_err(PlanError::Journal)?;
    record
        .journal_text(plan.from_attempt)
        .ok_or_else(|| PlanError::NoJournal { run: plan.from_run.clone(), attempt: plan.from_attempt })
}

/// Launches the fork `spec` describes (its own session and work directory)
/// going back in time in the original's `journal`, and the hook that makes it
/// go live at the plan's point.
pub fn launch(spec: LaunchSpec, plan: &Plan, journal: String) -> Result<(Launched, Arc<dyn StepHook>), LaunchError> {
    let launched = launch_continuing_answered(spec, journal, plan.answers.clone())?;
    Ok((launched, Arc::new(Forking::new(plan, false))))
}

/// The hook of a fork that started before and resumes from its own journal:
/// it edits the variables again at the plan's point, since the edit is not in
/// the journal and without it the fork would go on with the original's values.
/// The replaced reply is in the journal already.
pub fn resuming(plan: &Plan) -> Arc<dyn StepHook> {
    Arc::new(Forking::new(plan, true))
}

/// At the plan's point, edits the variables, replaces the reply (given at
/// the point's model call, the step before its reply) and forks;
/// when the point is in a `parallel` branch, the threads around it fork at
/// their next step too (after the block), since what they do next depends on
/// what the branch does now. The other branches are served on.
struct Forking {
    point: Option<Point>,
    /// The threads around the point's branch that have not forked yet.
    around: Mutex<Vec<String>>,
    reply: Option<String>,
    set: Map<String, Value>,
    points: Mutex<HashMap<String, u64>>,
    forked: AtomicBool,
    /// The reply was given at the point's model call, before it was sent.
    given: AtomicBool,
    /// The fork is resumed from its own journal: at the point, the edits only.
    resuming: bool,
}

impl Forking {
    fn new(plan: &Plan, resuming: bool) -> Forking {
        Forking {
            point: plan.point.clone(),
            around: Mutex::new(plan.point.iter().flat_map(|p| around(&p.thread)).collect()),
            reply: plan.reply.clone(),
            set: plan.set.clone(),
            points: Mutex::default(),
            forked: AtomicBool::new(false),
            given: AtomicBool::new(false),
            resuming,
        }
    }
}

impl StepHook for Forking {
    fn on_step<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Control> {
        let control = match &self.point {
            Some(point) if !self.forked.load(Ordering::SeqCst) => {
                let n = count_point(&self.points, step.thread_key);
                let mine = step.thread_key == point.thread;
                if let (Some(text), StepPoint::ModelCall { .. }, false) = (&self.reply, step.point, self.resuming)
                    && mine
                    && n + 1 == point.n
                {
                    // The call whose reply the point is: it is not served,
                    // so the replaced reply is never streamed.
                    self.given.store(true, Ordering::SeqCst);
                    Control::Reply(Box::new(reply(text)))
                } else if mine && n == point.n {
                    self.forked.store(true, Ordering::SeqCst);
                    for (name, value) in &self.set {
                        step.vars.insert(name.clone(), value.clone());
                    }
                    match (&self.reply, step.point) {
                        _ if self.resuming || self.given.load(Ordering::SeqCst) => Control::Continue,
                        (Some(text), StepPoint::ModelReply { .. }) => Control::Reply(Box::new(reply(text))),
                        _ => Control::Fork,
                    }
                } else {
                    Control::Continue
                }
            }
            _ if self.resuming || !self.forked.load(Ordering::SeqCst) => Control::Continue,
            _ => {
                let mut around = locked(&self.around);
                match around.iter().position(|t| t == step.thread_key) {
                    Some(i) => {
                        around.remove(i);
                        Control::Fork
                    }
                    None => Control::Continue,
                }
            }
        };
        Box::pin(std::future::ready(control))
    }
}

/// The model's reply a fork gives instead of the recorded one.
fn reply(text: &str) -> sr_llm::ChatResponse {
    sr_llm::ChatResponse {
        text: text.to_string(),
        tool_calls: Vec::new(),
        usage: sr_llm::Usage::default(),
        finish_reason: sr_llm::FinishReason::Stop,
    }
}

/// The threads a thread runs inside of, innermost first: `main/3.1/2.0` is a
/// branch of `main/3.1`, a branch of `main`.
fn around(thread: &str) -> Vec<String> {
    let mut around = Vec::new();
    let mut rest = thread;
    while let Some((parent, _)) = rest.rsplit_once('/') {
        around.push(parent.to_string());
        rest = parent;
    }
    around
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_branch_runs_inside_its_parents() {
        assert_eq!(around("main/3.1/2.0"), ["main/3.1", "main"]);
        assert_eq!(around("main/0.4"), ["main"]);
        assert!(around("main").is_empty());
    }

    #[tokio::test]
    async fn a_plan_is_kept_whole_and_read_back() {
        let dir = std::env::temp_dir().join(format!("sr-serve-fork-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let store = Store::open(&dir.join("serve.db")).unwrap();
        assert!(find(&store, "r").await.is_none(), "no plan: an ordinary run");
        let mut set = Map::new();
        set.insert("draft".to_string(), Value::from("edited"));
        let plan = Plan {
            from_run: "o".into(),
            at: 7,
            from_session: "s".into(),
            from_attempt: 1,
            point: Some(Point { thread: "main".into(), n: 4, kind: "model_reply".into(), name: String::new() }),
            answers: vec!["ship it".into()],
            reply: Some("injected".into()),
            set,
        };
        save(&store, "r", &plan).await.unwrap();
        assert_eq!(find(&store, "r").await.unwrap().unwrap(), plan);
        let error = journal(&store, &plan).await.unwrap_err();
        assert!(matches!(&error, PlanError::NoJournal { run, attempt: 1 } if run == "o"), "{error}");
        assert_eq!(error.to_string(), "the journal of run o (attempt 1) is not in the store");
        store.save_plan("bad", "{").await.unwrap();
        let error = find(&store, "bad").await.unwrap().unwrap_err();
        assert!(matches!(error, PlanError::Damaged(_)), "{error}");
        assert!(error.to_string().starts_with("the fork's plan is damaged: "), "{error}");
        discard(&store, "r").await;
        assert!(find(&store, "r").await.is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
