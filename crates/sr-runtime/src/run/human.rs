//! `escalate to human`: the run asks a person and waits. A debugger answers
//! through the step hook; in a terminal the person answers at a prompt;
//! otherwise the run ends paused, and a later
//! `sr run --resume SESSION --input TEXT` supplies the answer.

use futures::future::BoxFuture;
use serde_json::Value;
use sr_hir::StmtId;

use crate::compile::BodySpec;
use crate::event::Payload;
use crate::hook::StepPoint;
use crate::run::{ErrorKind, RunError, Runtime, Thread};

/// Where answers to `escalate to human` come from.
pub trait Human: Send + Sync {
    /// The answer, or `None` when nobody can answer now (the run pauses).
    fn ask<'a>(&'a self, message: &'a str) -> BoxFuture<'a, Option<String>>;
}

/// Nobody answers: every escalation pauses the run.
pub struct Unattended;

impl Human for Unattended {
    fn ask<'a>(&'a self, _message: &'a str) -> BoxFuture<'a, Option<String>> {
        Box::pin(std::future::ready(None))
    }
}

/// A run's answers: first those it was given in advance (a resumed run's,
/// a replay's), in order, then those a person gives `live` (nobody, in a
/// replay). A live answer is journaled (an `answer` line) before the run
/// uses it, so that a resume or a replay of the run is given it too.
pub struct Answers {
    given: std::sync::Mutex<std::collections::VecDeque<String>>,
    live: Option<std::sync::Arc<dyn Human>>,
    journal: std::sync::Arc<crate::journal::Journal>,
}

impl Answers {
    pub fn new(
        given: Vec<String>,
        live: Option<std::sync::Arc<dyn Human>>,
        journal: std::sync::Arc<crate::journal::Journal>,
    ) -> Answers {
        Answers { given: std::sync::Mutex::new(given.into()), live, journal }
    }
}

impl Human for Answers {
    fn ask<'a>(&'a self, message: &'a str) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            let given = self.given.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).pop_front();
            if given.is_some() {
                return given;
            }
            let answer = self.live.as_ref()?.ask(message).await?;
            // Unjournaled, the answer would be lost to a resume: the run
            // pauses instead, and `--resume ID --input` gives it again.
            self.journal.answered(&answer).ok().map(|()| answer)
        })
    }
}

impl Runtime {
    /// The run pauses on `th`: no call starts from now on, and the
    /// `parallel` blocks `th` is in keep only its events; each block lets
    /// its other branches' calls in flight end before it cancels them
    /// (`journal::pausing`), so the resumed run serves their results.
    pub(crate) fn pause(&self, th: &Thread) {
        self.env.journal.pause_begun();
        th.emitter.pause_gates();
    }

    /// Asks a human (the step hook first, a debugger, then the run's
    /// `Human`); the answer is stored in `$human_input`.
    pub(crate) async fn escalate_to_human(
        &self,
        th: &mut Thread,
        spec: &BodySpec,
        id: StmtId,
        message: String,
    ) -> Result<(), RunError> {
        th.emitter.emit(Payload::HumanInputRequested { message: message.clone() });
        let step = th.step_at(
            &self.program,
            StepPoint::Statement { body: spec, stmt: id },
            Some(self.program.stmt_location(&spec.source, id)),
        );
        let answer = match self.env.hook.on_human(step, &message).await {
            Some(answer) => Some(answer),
            None => self.env.human.ask(&message).await,
        };
        match answer {
            Some(answer) => {
                th.vars.insert("human_input".to_string(), Value::String(answer.clone()));
                th.emitter
                    .emit(Payload::StateChange { variable: "human_input".to_string(), value: Value::String(answer) });
                Ok(())
            }
            None => {
                self.pause(th);
                Err(RunError::new(ErrorKind::Paused, format!("waiting for a human: {message}"), None))
            }
        }
    }
}
