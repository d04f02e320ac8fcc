//! The system prompt, and the observations the model reads after each step.

use std::fmt::Write;

use super::Steps;
use crate::{Outcome, StepReport};

pub(crate) const NO_CODE: &str = "Your reply was empty, so nothing ran. Reply with Python code in one ```python \
                                  block, and call final_answer(...) when you are done.";

pub(crate) fn system(instructions: &str, examples: &str, session: &dyn Steps) -> String {
    let config = session.config();
    let policy = &config.policy;
    let modules: Vec<String> = policy.patterns().iter().map(ToString::to_string).collect();
    let imports = if modules.is_empty() { "nothing".to_string() } else { modules.join(", ") };
    let blocked = if policy.allows_open() {
        "`exec`, `eval`, `compile` and `__import__`"
    } else {
        "`exec`, `eval`, `compile`, `__import__` and `open`"
    };
    let mut prompt = String::new();
    if !instructions.trim().is_empty() {
        prompt.push_str(instructions.trim());
        prompt.push_str("\n\n");
    }
    let _ = write!(
        prompt,
        "You work by writing Python. Reply with one ```python block to run code; a reply without one is taken as \
         your final answer, in plain text. {memory} After each step you see what it printed, the value of its last \
         line if that is an expression, or its error.\n\n\
         Rules:\n\
         - Call `final_answer(value)` to finish; `value` may be text or JSON-like data (str, numbers, lists, dicts). \
         Nothing after it runs.\n\
         - Use `print()` to look at intermediate results; each step keeps at most {output} bytes of output.\n\
         - A failed tool call raises `ToolError`; catch it to try something else.\n\
         - You can import only: {imports}. There is no network and nothing can be installed.\n\
         - {blocked} are not available.\n\
         - A step may run for {seconds} seconds.\n",
        memory = if config.stateless {
            "Each step runs in a fresh interpreter: nothing a step defines or imports is there in the next."
        } else {
            "It runs in a persistent interpreter: variables, functions and imports stay defined from one step to the \
             next."
        },
        output = config.max_output_bytes,
        seconds = config.step_timeout.as_secs_f64(),
    );
    let tools = session.tool_signatures();
    if tools.is_empty() {
        prompt.push_str("\nThere are no tools; use Python alone.\n");
    } else {
        let _ = write!(prompt, "\nThe tools are Python functions, already defined:\n\n```python\n{tools}```\n");
    }
    if !examples.trim().is_empty() {
        let _ = write!(prompt, "\nExamples of the work:\n\n{}\n", examples.trim());
    }
    prompt
}

/// What the model reads about a step it wrote; `stateless`: no state carries
/// over, so a restart restores none.
pub(crate) fn observation(report: &StepReport, stateless: bool) -> String {
    let restored = match stateless {
        true => "",
        false => " State from the steps before it was restored.",
    };
    let mut text = String::new();
    if !report.stdout.is_empty() {
        let _ = write!(text, "Output:\n{}", report.stdout);
        if !report.stdout.ends_with('\n') {
            text.push('\n');
        }
    }
    if !report.stderr.is_empty() {
        let _ = write!(text, "Errors:\n{}", report.stderr);
        if !report.stderr.ends_with('\n') {
            text.push('\n');
        }
    }
    if report.truncated > 0 {
        let _ = writeln!(text, "[{} more bytes of output were cut]", report.truncated);
    }
    let _ = match &report.outcome {
        Outcome::Success { result: Some(result) } => writeln!(text, "Result: {result}"),
        Outcome::Success { result: None } if text.is_empty() => writeln!(text, "The code ran and printed nothing."),
        Outcome::Success { result: None } | Outcome::FinalAnswer { .. } => Ok(()),
        Outcome::SyntaxError { message, line, column } => match (line, column) {
            (Some(line), Some(column)) => writeln!(text, "SyntaxError at line {line}, column {column}: {message}"),
            _ => writeln!(text, "SyntaxError: {message}"),
        },
        Outcome::PolicyViolation { message, violations } if !violations.is_empty() => {
            writeln!(text, "The code was not run; it breaks the sandbox rules:\n{message}")
        }
        Outcome::PolicyViolation { message, .. } => {
            writeln!(text, "Not allowed in the sandbox: {}", message.trim_end())
        }
        Outcome::RuntimeError { traceback, .. } => write!(text, "{traceback}"),
        Outcome::Timeout { limit, restarted } => {
            let _ = write!(text, "The step was stopped after {} seconds.", limit.as_secs_f64());
            if *restarted {
                let _ = write!(text, " The interpreter was restarted.{restored}");
            }
            writeln!(text)
        }
        Outcome::ToolError { tool, message } => writeln!(text, "ToolError from {tool}: {message}"),
        Outcome::Crashed { reason } => {
            writeln!(text, "The interpreter crashed ({reason}). It was restarted.{restored}")
        }
    };
    text
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use expect_test::expect;

    use super::*;

    fn report(outcome: Outcome, stdout: &str) -> StepReport {
        StepReport {
            step: 1,
            outcome,
            stdout: stdout.to_string(),
            stderr: String::new(),
            truncated: 0,
            tool_calls: Vec::new(),
            duration: Duration::ZERO,
        }
    }

    #[test]
    fn observations() {
        let ok = report(Outcome::Success { result: Some("42".into()) }, "hello");
        expect![[r#"
            Output:
            hello
            Result: 42
        "#]]
        .assert_eq(&observation(&ok, false));

        let silent = report(Outcome::Success { result: None }, "");
        expect![[r#"
            The code ran and printed nothing.
        "#]]
        .assert_eq(&observation(&silent, false));

        let mut cut = report(Outcome::Timeout { limit: Duration::from_millis(1500), restarted: true }, "partial\n");
        cut.truncated = 10;
        expect![[r#"
            Output:
            partial
            [10 more bytes of output were cut]
            The step was stopped after 1.5 seconds. The interpreter was restarted. State from the steps before it was restored.
        "#]]
        .assert_eq(&observation(&cut, false));
        assert!(observation(&cut, true).ends_with("The interpreter was restarted.\n"));
    }
}
