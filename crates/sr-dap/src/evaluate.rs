//! DSL expressions typed by the user (debug console, watches, hovers,
//! breakpoint conditions, logpoints, new values of variables), parsed on
//! their own and evaluated against a thread's variables with the runtime's
//! own evaluator, so they mean exactly what they mean in a flow.

use std::sync::Arc;

use serde_json::Value;
use sr_hir::{Body, ExprId, RootDatabase, Stmt, body, file_items};
use sr_runtime::eval::{Evaluator, Vars};
use sr_runtime::value::display;

/// Why typed text is not an expression, or its value could not be had.
/// The text quoted is at most 60 characters of what was typed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpressionError {
    #[error("the expression is empty")]
    Empty,
    #[error("an expression is one line")]
    MultiLine,
    /// The parser's first error.
    #[error("cannot read `{text}`: {message}")]
    Syntax { text: String, message: String },
    #[error("cannot read `{0}`")]
    Unreadable(String),
    #[error("`{0}` is not an expression")]
    NotExpression(String),
    /// The runtime's evaluator refused it.
    #[error("{0}")]
    Eval(String),
    /// A new value that is neither: why it is not an expression.
    #[error("{0}; it is not JSON either")]
    NeitherDslNorJson(Box<ExpressionError>),
    #[error("unclosed `{{` in the log message `{0}`")]
    UnclosedBrace(String),
    #[error("unmatched `}}` in the log message `{0}` (write `}}}}`)")]
    UnmatchedBrace(String),
}

/// A parsed expression, ready to evaluate any number of times.
#[derive(Debug, Clone)]
pub struct Expression {
    body: Arc<Body>,
    expr: ExprId,
}

impl Expression {
    /// Parses one expression, as it would be written after `return` in a flow.
    pub fn parse(text: &str) -> Result<Expression, ExpressionError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ExpressionError::Empty);
        }
        if text.contains(['\n', '\r']) {
            return Err(ExpressionError::MultiLine);
        }
        let source = format!("flow __eval__:\n    return {text}\n");
        if let Some(error) = sr_syntax::parse(&source).errors().first() {
            return Err(ExpressionError::Syntax { text: shortened(text), message: error.message().clone() });
        }
        let mut db = RootDatabase::default();
        let file = db.set_file("/__eval__.sr", source);
        let item = *file_items(&db, file).first().ok_or_else(|| ExpressionError::Unreadable(shortened(text)))?;
        let body = body(&db, item);
        if let [only] = body.root.as_slice()
            && let Stmt::Return(expr) = body.stmts[*only]
        {
            return Ok(Expression { expr, body });
        }
        Err(ExpressionError::NotExpression(shortened(text)))
    }

    pub fn eval(&self, vars: &Vars) -> Result<Value, ExpressionError> {
        Evaluator { body: &self.body, vars, item: None, tools: None }
            .eval(self.expr)
            .map_err(|e| ExpressionError::Eval(e.0))
    }
}

/// At most 60 characters of `text`, for messages that quote it.
fn shortened(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// A new value for a variable: a DSL expression evaluated against the
/// thread's variables, else JSON.
pub fn parse_value(text: &str, vars: &Vars) -> Result<Value, ExpressionError> {
    match Expression::parse(text).and_then(|e| e.eval(vars)) {
        Ok(value) => Ok(value),
        Err(dsl) => serde_json::from_str(text).map_err(|_| ExpressionError::NeitherDslNorJson(Box::new(dsl))),
    }
}

/// A logpoint's message: text with `{expression}` holes; `{{` and `}}` are
/// literal braces.
#[derive(Debug, Clone)]
pub struct LogMessage {
    parts: Vec<Part>,
}

#[derive(Debug, Clone)]
enum Part {
    Text(String),
    Expr(Expression),
}

impl LogMessage {
    pub fn parse(text: &str) -> Result<LogMessage, ExpressionError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    literal.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    literal.push('}');
                }
                '{' => {
                    // Up to the matching brace: expressions may hold objects.
                    let mut depth = 1;
                    let mut inner = String::new();
                    for c in chars.by_ref() {
                        match c {
                            '{' => depth += 1,
                            '}' => depth -= 1,
                            _ => {}
                        }
                        if depth == 0 {
                            break;
                        }
                        inner.push(c);
                    }
                    if depth != 0 {
                        return Err(ExpressionError::UnclosedBrace(shortened(text)));
                    }
                    if !literal.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut literal)));
                    }
                    parts.push(Part::Expr(Expression::parse(&inner)?));
                }
                '}' => return Err(ExpressionError::UnmatchedBrace(shortened(text))),
                c => literal.push(c),
            }
        }
        if !literal.is_empty() {
            parts.push(Part::Text(literal));
        }
        Ok(LogMessage { parts })
    }

    /// The message with each hole replaced by its value as a flow's `${…}`
    /// would show it; a failing expression shows its error instead.
    pub fn render(&self, vars: &Vars) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Expr(expr) => match expr.eval(vars) {
                    Ok(value) => out.push_str(&display(&value)),
                    Err(e) => out.push_str(&format!("<error: {e}>")),
                },
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars() -> Vars {
        [("n".to_string(), json!(2)), ("r".to_string(), json!({"a": [1, 2]}))].into_iter().collect()
    }

    #[test]
    fn expressions_evaluate_as_in_a_flow() {
        let eval = |text: &str| Expression::parse(text).and_then(|e| e.eval(&vars())).map_err(|e| e.to_string());
        assert_eq!(eval("$n * 3 + len($r.a)"), Ok(json!(8)));
        assert_eq!(eval("\"n=${n}\""), Ok(json!("n=2")));
        assert_eq!(eval("n"), Ok(json!(2)), "a bare word is a variable");
        assert_eq!(eval("$missing"), Err("variable '$missing' is not defined".to_string()));
        assert!(eval("1 +").unwrap_err().starts_with("cannot read `1 +`"));
        assert!(eval("").is_err());
        assert!(eval("1\n    log 2").is_err());
    }

    /// Conditions, `evaluate` and `setVariable` text comes from the client:
    /// nesting deeper than the parser's limit is an error, not a stack overflow.
    #[test]
    fn deeply_nested_text_is_refused() {
        for (open, close) in [("(", ")"), ("[", "]"), ("{a: ", "}"), ("-", ""), ("not ", "")] {
            let text = format!("{}1{}", open.repeat(20_000), close.repeat(20_000));
            let error = Expression::parse(&text).err().unwrap_or_else(|| panic!("{open}: parsed")).to_string();
            assert!(error.len() < 300, "{open}: the error repeats the text: {}", &error[..300]);
            assert!(error.contains("nested more than 256 levels"), "{open}: {error}");
            assert!(parse_value(&text, &vars()).is_err(), "{open}");
        }
        let chain = vec!["1"; 20_000].join(" + ");
        assert!(Expression::parse(&chain).unwrap_err().to_string().contains("nested more than 256 levels"));
        assert!(LogMessage::parse(&format!("x={{{}1{}}}", "(".repeat(20_000), ")".repeat(20_000))).is_err());
    }

    #[test]
    fn new_values_are_dsl_or_json() {
        assert_eq!(parse_value("$n + 1", &vars()), Ok(json!(3)));
        assert_eq!(parse_value("{\"k\": [1, null]}", &vars()), Ok(json!({"k": [1, null]})));
        assert_eq!(parse_value("\"text\"", &vars()), Ok(json!("text")));
        assert!(parse_value("$nope", &vars()).unwrap_err().to_string().contains("not JSON either"));
    }

    #[test]
    fn log_messages_interpolate_expressions() {
        let message = LogMessage::parse("n={$n} twice={$n * 2} {{literal}} {$gone}").unwrap();
        assert_eq!(message.render(&vars()), "n=2 twice=4 {literal} <error: variable '$gone' is not defined>");
        assert_eq!(LogMessage::parse("r={$r}").unwrap().render(&vars()), r#"r={"a":[1,2]}"#);
        assert!(LogMessage::parse("open {$n").is_err());
        assert!(LogMessage::parse("close }").is_err());
        assert!(LogMessage::parse("bad {1 +}").is_err());
    }
}
