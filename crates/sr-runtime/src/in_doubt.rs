//! Tool calls in doubt. A resumed run that meets a tool call its journal
//! shows started but not finished (the process died during it) cannot know
//! whether the call took effect. An idempotent tool (a file tool but
//! `append_to_file`, an MCP tool declared `with idempotent "true"`) is called
//! again with the same idempotency key; for any other, a [`Decider`] says what
//! to do, and the journal keeps its decision so that a later resume does not
//! ask again.

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The status of a run in its session while it waits for a decision about a
/// call in doubt.
pub const STATUS: &str = "in_doubt";

/// What to do with a call that may or may not have taken effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Call it again, with the same idempotency key.
    Retry,
    /// Do not call it again: the model gets a tool error saying so.
    Skip,
    /// The run fails.
    Fail,
}

impl Decision {
    pub const ALL: [Decision; 3] = [Decision::Retry, Decision::Skip, Decision::Fail];

    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Retry => "retry",
            Decision::Skip => "skip",
            Decision::Fail => "fail",
        }
    }
}

/// A text that names no [`Decision`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is no decision: give retry, skip or fail")]
pub struct NoDecision(pub String);

impl std::str::FromStr for Decision {
    type Err = NoDecision;

    fn from_str(text: &str) -> Result<Decision, NoDecision> {
        Decision::ALL.into_iter().find(|d| d.as_str() == text).ok_or_else(|| NoDecision(text.to_string()))
    }
}

/// A call in doubt, as it is put to whoever decides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Question {
    pub tool: String,
    pub args: Value,
    /// The key the call was made with, and is made with again on `retry`.
    pub idempotency_key: String,
}

impl Question {
    /// One line for a person.
    pub fn describe(&self) -> String {
        let args = self.args.to_string();
        let args = match args.char_indices().nth(200) {
            Some((end, _)) => format!("{}…", &args[..end]),
            None => args,
        };
        format!(
            "the call of tool '{}' with {args} (idempotency key {}) was cut off when the run was interrupted and \
             may have taken effect: decide retry, skip or fail",
            self.tool, self.idempotency_key
        )
    }
}

/// Who decides about a call in doubt.
pub trait Decider: Send + Sync {
    /// The decision, or `None` when nobody can decide now (the run stops in
    /// doubt and waits for one).
    fn decide<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, Option<Decision>>;
}

/// The same decision for every call (`sr run --in-doubt D`; `skip`, the
/// default, is what a resumed run did before it could ask).
pub struct Always(pub Decision);

impl Decider for Always {
    fn decide<'a>(&'a self, _question: &'a Question) -> BoxFuture<'a, Option<Decision>> {
        Box::pin(std::future::ready(Some(self.0)))
    }
}

/// The decider of a run nobody decides for (an evaluation, a debugger): each
/// call in doubt is skipped.
pub fn skip_all() -> std::sync::Arc<dyn Decider> {
    std::sync::Arc::new(Always(Decision::Skip))
}

/// One decision given in advance (a server's `/input`), for the first call
/// that asks; nobody decides for a later one.
pub struct Once(pub std::sync::Mutex<Option<Decision>>);

impl Once {
    pub fn new(decision: Option<Decision>) -> Once {
        Once(std::sync::Mutex::new(decision))
    }
}

impl Decider for Once {
    fn decide<'a>(&'a self, _question: &'a Question) -> BoxFuture<'a, Option<Decision>> {
        Box::pin(std::future::ready(self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_read_back_what_they_write_and_anything_else_is_named() {
        for decision in Decision::ALL {
            assert_eq!(decision.as_str().parse::<Decision>(), Ok(decision));
            assert_eq!(serde_json::to_value(decision).unwrap(), Value::String(decision.as_str().into()));
        }
        for bad in ["", "Retry", "retry ", "abort", "yes"] {
            let error = bad.parse::<Decision>().unwrap_err().to_string();
            assert!(error.contains("give retry, skip or fail") && error.contains(&format!("{bad:?}")), "{error}");
        }
    }

    #[tokio::test]
    async fn once_decides_the_first_question_only() {
        let question = Question { tool: "t".into(), args: Value::Null, idempotency_key: "k".into() };
        let once = Once::new(Some(Decision::Retry));
        assert_eq!(once.decide(&question).await, Some(Decision::Retry));
        assert_eq!(once.decide(&question).await, None);
        assert_eq!(Always(Decision::Fail).decide(&question).await, Some(Decision::Fail));
    }
}
