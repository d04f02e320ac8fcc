//! Answering `escalate to human` is an explicit action, never a side effect
//! of evaluating an expression (typing `$draft` in the debug console only
//! shows it): the console command `:answer TEXT` (a colon cannot begin an
//! expression of the language) or the custom request `streetraceAnswer`.
//! The answer is kept on the waiting thread, which gets it when it resumes;
//! `streetraceQuestion` events tell the client when a thread starts and
//! stops waiting, so that an editor can offer to answer.

use crate::debugger::{Debugger, dap_thread, thread_number};
use crate::protocol::{AnswerBody, EvaluateResponse};
use crate::request_error::{COMMAND, RequestError};

/// What a line typed in the debug console is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Console<'a> {
    /// An expression to evaluate.
    Expression(&'a str),
    /// `:answer TEXT`: the text, verbatim after one space.
    Answer(&'a str),
    /// Another `:word`, or `:answer` without text.
    Unknown(&'a str),
}

impl Console<'_> {
    pub fn read(line: &str) -> Console<'_> {
        let trimmed = line.trim_start();
        if !trimmed.starts_with(':') {
            return Console::Expression(line);
        }
        match trimmed.strip_prefix(COMMAND) {
            Some(rest) if rest.starts_with([' ', '\t']) && !rest.trim().is_empty() => Console::Answer(&rest[1..]),
            _ => Console::Unknown(trimmed),
        }
    }
}

impl Debugger {
    /// Records `text` as the answer of the thread that waits on `escalate to
    /// human`: `thread_id`'s, else the first waiting thread's.
    pub fn answer(&self, thread_id: Option<i64>, text: &str) -> Result<AnswerBody, RequestError> {
        let mut st = self.lock();
        let thread = match thread_id {
            Some(id) => thread_number(id).ok_or(RequestError::NoThread(id))?,
            None => {
                let asking = st.run.stopped.iter().find(|(_, s)| s.question.is_some()).map(|(t, _)| *t);
                asking.ok_or(RequestError::NoneAsking)?
            }
        };
        let stopped = st.run.stopped.get_mut(&thread).ok_or(RequestError::NotStopped(dap_thread(thread)))?;
        let question = stopped.question.clone().ok_or(RequestError::NotAsking(dap_thread(thread)))?;
        stopped.answer = Some(text.to_string());
        let quoted = serde_json::Value::String(text.to_string());
        self.client
            .output("console", format!("the answer to \"{question}\" is {quoted}; continue to give it to the run"));
        Ok(AnswerBody { thread_id: dap_thread(thread), question })
    }

    /// A console line that is not an expression: a command.
    pub fn console_command(
        &self,
        frame_thread: Option<i64>,
        command: Console<'_>,
    ) -> Result<EvaluateResponse, RequestError> {
        let text = match command {
            Console::Expression(_) => return Err(RequestError::NotConsoleCommand),
            Console::Unknown(word) => {
                let word = word.split_whitespace().next().unwrap_or(word);
                return Err(RequestError::UnknownConsoleCommand(word.to_string()));
            }
            Console::Answer(text) => text,
        };
        let body = self.answer(frame_thread, text)?;
        Ok(EvaluateResponse {
            result: format!("answered thread {}: \"{}\"", body.thread_id, body.question),
            kind: String::new(),
            variables_reference: 0,
            named_variables: None,
            indexed_variables: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::Expression;

    #[test]
    fn console_lines_are_expressions_unless_they_start_with_a_colon() {
        assert_eq!(Console::read("$draft"), Console::Expression("$draft"));
        assert_eq!(Console::read("\"yes\""), Console::Expression("\"yes\""));
        assert_eq!(Console::read(":answer  ship it "), Console::Answer(" ship it "));
        assert_eq!(Console::read("  :answer yes"), Console::Answer("yes"));
        assert_eq!(Console::read(":answer"), Console::Unknown(":answer"));
        assert_eq!(Console::read(":answer   "), Console::Unknown(":answer   "));
        assert_eq!(Console::read(":answered yes"), Console::Unknown(":answered yes"));
        assert_eq!(Console::read(":help"), Console::Unknown(":help"));
    }

    /// The command cannot be an expression: no text after a colon parses,
    /// whatever follows it (every keyword of the language, and expressions
    /// of every shape the evaluator's tests use, alone and after `answer`).
    #[test]
    fn no_expression_starts_with_a_colon() {
        let expressions =
            ["yes", "\"yes\"", "$x", "1", "1.5", "[1]", "{a: 1}", "(1)", "-1", "not $x", "$x.a + len($y)", "f a b", ""];
        let keywords = sr_syntax::KEYWORDS.iter().map(|(text, _, _)| *text);
        let mut tried = 0;
        for word in keywords.chain(["answer", ":answer"]) {
            for expression in expressions {
                for text in [format!(":{word} {expression}"), format!(":{expression}"), format!(" :{word}{expression}")]
                {
                    assert!(Expression::parse(&text).is_err(), "`{text}` parsed as an expression");
                    assert!(!matches!(Console::read(&text), Console::Expression(_)), "{text}");
                    tried += 1;
                }
            }
        }
        assert!(tried > 500, "{tried}");
    }
}
