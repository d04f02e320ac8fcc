//! The `judge` scorer: a model grades the output against a rubric and
//! answers with a score in 0..1 and a reason, both kept in the detail.

use std::sync::Arc;

use serde_json::{Value, json};
use sr_llm::{ChatRequest, ChatResponse, Message, Provider};

use super::{Score, structured, text_of};

/// Where a case's judge calls go: a provider, or why there is none.
pub type JudgeModel = Result<Arc<dyn Provider>, NoJudge>;

/// Why a case's judge calls have nowhere to go.
#[derive(Debug, thiserror::Error)]
pub enum NoJudge {
    /// No scorer of the case calls a model.
    #[error("the case has no judge")]
    NotAsked,
    /// The judge's recording could not be started (the journal's reason).
    #[error("{0}")]
    Record(sr_runtime::journal::JournalError),
    #[error(transparent)]
    Read(#[from] crate::case_error::CaseError),
    #[error("{}: {cause}", path.display())]
    BadRecording { path: std::path::PathBuf, cause: sr_runtime::journal::ParseError },
}

#[derive(Debug)]
pub struct Judge {
    pub rubric: String,
    /// `provider/model`, as a workload names models.
    pub model: String,
    /// The lowest passing score.
    pub min_score: f64,
}

const INSTRUCTION: &str = "You grade the output of an AI agent against a rubric. \
Answer with JSON only: {\"score\": a number from 0 (fails the rubric) to 1 (meets it fully), \
\"reason\": one sentence}.";

impl Judge {
    pub async fn score(&self, model: &JudgeModel, prompt: &str, output: &Value) -> Score {
        let failed = |detail: String| Score::new("judge", false, detail);
        let provider = match model {
            Ok(provider) => provider,
            Err(e) => return failed(format!("no judge: {e}")),
        };
        let response = match ChatResponse::collect(provider.chat(self.request(prompt, output))).await {
            Ok(response) => response,
            Err(e) => return failed(format!("the judge {} failed: {e}", self.model)),
        };
        match verdict(&response.text) {
            Ok((score, reason)) => Score {
                kind: "judge".to_string(),
                passed: score >= self.min_score,
                score,
                detail: format!("{score:.2} (pass at {:.2}): {reason}", self.min_score),
                findings: None,
            },
            Err(e) => failed(format!("the judge's answer {e}")),
        }
    }

    fn request(&self, prompt: &str, output: &Value) -> ChatRequest {
        let text = format!(
            "Rubric:\n{}\n\nThe task given to the agent:\n{prompt}\n\nThe agent's output:\n{}",
            self.rubric,
            text_of(output)
        );
        ChatRequest {
            system: Some(INSTRUCTION.to_string()),
            response_schema: Some(json!({
                "type": "object",
                "properties": {"score": {"type": "number"}, "reason": {"type": "string"}},
                "required": ["score", "reason"],
            })),
            temperature: Some(0.0),
            ..ChatRequest::new(self.model.clone(), vec![Message::user(text)])
        }
    }
}

/// The score and reason of a judge's answer.
fn verdict(text: &str) -> Result<(f64, String), String> {
    let answer = structured(&Value::String(text.to_string()));
    let score = answer.get("score").and_then(Value::as_f64).filter(|s| (0.0..=1.0).contains(s));
    let Some(score) = score else {
        let shown: String = text.chars().take(120).collect();
        return Err(format!("has no score in 0..1: {shown:?}"));
    };
    let reason = answer.get("reason").map(text_of).unwrap_or_default();
    Ok((score, reason.split_whitespace().collect::<Vec<_>>().join(" ")))
}
