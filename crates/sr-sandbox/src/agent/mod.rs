//! The ReAct loop over code: ask the model, run the Python in its reply, show it what
//! happened, until it calls `final_answer` (or replies with no code: a plain-text
//! answer) or runs out of iterations or of patience with consecutive errors.

mod extract;
mod prompt;

use std::fmt;

use serde_json::Value;

use crate::{BoxFuture, Event, Outcome, SandboxError, Session, SessionConfig, StepReport};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    fn new(role: Role, content: impl Into<String>) -> Message {
        Message { role, content: content.into() }
    }
}

/// The model seam: given the conversation so far (system prompt first), the next
/// reply, which should contain a ```python block.
pub trait CodeModel: Send + Sync {
    fn next<'a>(&'a self, transcript: &'a [Message]) -> BoxFuture<'a, Result<String, ModelError>>;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError(pub String);

/// Where the loop's steps run: a [`Session`], or whatever stands in for one
/// (the runtime's journal, which serves a recorded step without running it).
pub trait Steps: Send {
    fn config(&self) -> &SessionConfig;
    /// The tool functions' signatures and docstrings, for the system prompt.
    fn tool_signatures(&self) -> String;
    fn run<'a>(
        &'a mut self,
        code: &'a str,
        events: &'a mut (dyn FnMut(Event) + Send),
    ) -> BoxFuture<'a, Result<StepReport, SandboxError>>;
}

impl Steps for Session {
    fn config(&self) -> &SessionConfig {
        Session::config(self)
    }

    fn tool_signatures(&self) -> String {
        Session::tool_signatures(self)
    }

    fn run<'a>(
        &'a mut self,
        code: &'a str,
        events: &'a mut (dyn FnMut(Event) + Send),
    ) -> BoxFuture<'a, Result<StepReport, SandboxError>> {
        Box::pin(Session::run(self, code, events))
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ModelError {}

#[derive(Debug, Clone)]
pub struct CodeAgent {
    /// The agent's own instruction, put before the coding rules in the system prompt.
    pub instructions: String,
    pub max_iterations: u32,
    /// The run stops after this many errors in a row (steps that fail, or empty
    /// replies).
    pub max_consecutive_errors: u32,
    /// Worked examples, shown after the coding rules.
    pub examples: String,
}

impl Default for CodeAgent {
    fn default() -> CodeAgent {
        CodeAgent {
            instructions: String::new(),
            max_iterations: 20,
            max_consecutive_errors: 3,
            examples: String::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub value: Value,
    pub iterations: u32,
    pub transcript: Vec<Message>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AgentError {
    Model(ModelError),
    Sandbox(SandboxError),
    /// `errors` consecutive errors; `last` is what the model was told about the last.
    TooManyErrors {
        errors: u32,
        last: String,
    },
    MaxIterations {
        iterations: u32,
    },
}

impl fmt::Display for AgentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentError::Model(error) => write!(f, "the model failed: {error}"),
            AgentError::Sandbox(error) => write!(f, "the sandbox failed: {error}"),
            AgentError::TooManyErrors { errors, last } => write!(f, "{errors} errors in a row; the last:\n{last}"),
            AgentError::MaxIterations { iterations } => write!(f, "no final answer after {iterations} iterations"),
        }
    }
}

impl std::error::Error for AgentError {}

impl CodeAgent {
    /// Works on `task` in `session` until the model calls `final_answer`.
    pub async fn run(
        &self,
        session: &mut dyn Steps,
        model: &dyn CodeModel,
        task: &str,
        events: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Answer, AgentError> {
        let mut transcript = vec![
            Message::new(Role::System, prompt::system(&self.instructions, &self.examples, session)),
            Message::new(Role::User, task),
        ];
        let mut errors = 0;
        for iteration in 1..=self.max_iterations {
            let reply = model.next(&transcript).await.map_err(AgentError::Model)?;
            events(Event::Reply { iteration, text: reply.clone() });
            let code = extract::code(&reply);
            let plain = reply.trim().to_string();
            transcript.push(Message::new(Role::Assistant, reply));
            let (observation, failed) = match code {
                None if plain.is_empty() => (prompt::NO_CODE.to_string(), true),
                // A reply without code is the answer, in plain text.
                None => return Ok(Answer { value: Value::String(plain), iterations: iteration, transcript }),
                Some(code) => {
                    let report = session.run(&code, events).await.map_err(AgentError::Sandbox)?;
                    if let Outcome::FinalAnswer { value } = report.outcome {
                        return Ok(Answer { value, iterations: iteration, transcript });
                    }
                    (prompt::observation(&report, session.config().stateless), report.outcome.is_error())
                }
            };
            errors = if failed { errors + 1 } else { 0 };
            if errors >= self.max_consecutive_errors {
                return Err(AgentError::TooManyErrors { errors, last: observation });
            }
            transcript.push(Message::new(Role::User, observation));
        }
        Err(AgentError::MaxIterations { iterations: self.max_iterations })
    }
}
