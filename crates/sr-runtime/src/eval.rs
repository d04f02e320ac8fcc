//! Evaluation of HIR expressions and `${…}` templates against the variables of
//! a run. Evaluation is synchronous: a tool function call (`fs.read_file(x)`)
//! is served from a [`ToolTape`]; when the tape has no result for it yet,
//! evaluation stops with the call as the tape's request, the interpreter makes
//! the call and evaluates the expression again with one more result.

use std::cell::{Cell, RefCell};

use indexmap::IndexMap;
use serde_json::{Map, Value};
use sr_hir::{BinaryOp, Body, Expr, ExprId, Interpolation, Literal, PromptData, Template, TemplatePart, UnaryOp};

use crate::value::{self, ValueError, display};

/// The variables of a run: one flat namespace shared by every flow of the run,
/// as upstream's runtime has it.
pub type Vars = IndexMap<String, Value>;

/// What evaluation can fail with; the interpreter adds the location.
pub type EvalResult<T> = Result<T, ValueError>;

/// Evaluates expressions of one body.
#[derive(Clone, Copy)]
pub struct Evaluator<'a> {
    pub body: &'a Body,
    pub vars: &'a Vars,
    /// The current item inside `filter … where` (what `.field` reads).
    pub item: Option<&'a Value>,
    /// Results of tool function calls and nondeterministic values; without
    /// a tape tools cannot be called, and `uuid()` and friends are computed
    /// afresh (a debugger's console).
    pub tools: Option<&'a ToolTape<'a>>,
}

/// A tool function call an expression makes: `TOOL.FUNCTION(args)`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRequest {
    /// The call expression.
    pub expr: ExprId,
    pub tool: String,
    pub function: String,
    pub args: ToolArgs,
}

/// Positional arguments, or the fields of the one object literal given.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolArgs {
    Positional(Vec<Value>),
    Named(Map<String, Value>),
}

/// The results of an expression's tool calls so far, in the order evaluation
/// reaches them (arguments before the call they are passed to), which is the
/// same in every evaluation that is served the same results; and where the
/// values of its nondeterministic functions (`uuid()`, `now()`, …) come from.
#[derive(Default)]
pub struct ToolTape<'a> {
    results: Vec<Value>,
    next: Cell<usize>,
    request: RefCell<Option<ToolRequest>>,
    values: Option<&'a dyn Values>,
    /// Tool functions cannot be called here (a guardrail's condition).
    no_tools: bool,
}

/// Gives the values of `sr_hir::stdlib::NONDETERMINISTIC` functions: a run
/// takes them from its journal, the same value each time one statement's
/// expression is evaluated again.
pub trait Values {
    fn value(&self, function: &str, args: &[Value]) -> EvalResult<Value>;
}

impl<'a> ToolTape<'a> {
    pub fn new(results: Vec<Value>, values: &'a dyn Values) -> ToolTape<'a> {
        ToolTape { results, values: Some(values), ..ToolTape::default() }
    }

    /// Values only: a tool function call is an error.
    pub fn values_only(values: &'a dyn Values) -> ToolTape<'a> {
        ToolTape { values: Some(values), no_tools: true, ..ToolTape::default() }
    }

    /// The call evaluation stopped at, and the results so far.
    pub fn into_parts(self) -> (Option<ToolRequest>, Vec<Value>) {
        (self.request.into_inner(), self.results)
    }

    fn serve(&self, request: ToolRequest) -> EvalResult<Value> {
        if self.no_tools {
            return Err(ValueError(format!(
                "{}.{}() calls a tool: tool functions are called by flow statements only",
                request.tool, request.function
            )));
        }
        let n = self.next.get();
        self.next.set(n + 1);
        if let Some(value) = self.results.get(n) {
            return Ok(value.clone());
        }
        let message = format!("{}.{}() has not run yet", request.tool, request.function);
        *self.request.borrow_mut() = Some(request);
        Err(ValueError(message))
    }
}

impl Evaluator<'_> {
    pub fn eval(&self, id: ExprId) -> EvalResult<Value> {
        match &self.body.exprs[id] {
            Expr::Missing => Err(ValueError("the expression has a syntax error".into())),
            Expr::Literal(lit) => Ok(literal(lit)),
            Expr::Template(template) => Ok(Value::String(render_flow_template(template, self.vars)?)),
            Expr::Var { name, .. } => variable(self.vars, name).cloned(),
            Expr::Field { base, field } => {
                let base = self.eval(*base)?;
                value::field(&base, field).cloned()
            }
            Expr::ItemField(path) => {
                let mut current = self
                    .item
                    .ok_or_else(|| ValueError("`.field` is only meaningful inside `filter … where`".into()))?;
                for segment in path {
                    current = value::field(current, segment)?;
                }
                Ok(current.clone())
            }
            Expr::List(items) => Ok(Value::Array(items.iter().map(|&i| self.eval(i)).collect::<EvalResult<_>>()?)),
            Expr::Object(entries) => {
                let mut map = Map::new();
                for (key, value) in entries {
                    map.insert(key.to_string(), self.eval(*value)?);
                }
                Ok(Value::Object(map))
            }
            Expr::Unary { op: UnaryOp::Not, operand } => Ok(Value::Bool(!value::truthy(&self.eval(*operand)?))),
            Expr::Unary { op: UnaryOp::Neg, operand } => value::neg(&self.eval(*operand)?),
            Expr::Binary { op, lhs, rhs } => self.binary(*op, *lhs, *rhs),
            Expr::Filter { list, condition } => {
                let list = self.eval(*list)?;
                let mut kept = Vec::new();
                for item in value::iterate(&list)? {
                    let inner = Evaluator { item: Some(&item), ..*self };
                    if value::truthy(&inner.eval(*condition)?) {
                        kept.push(item);
                    }
                }
                Ok(Value::Array(kept))
            }
            Expr::Call { function, args } if let Some((tool, name)) = function.split_once('.') => {
                let tape = self.tools.ok_or_else(|| {
                    ValueError(format!("{function}() calls a tool: tool functions are called by flow statements only"))
                })?;
                let args = match args[..] {
                    [single] if let Expr::Object(_) = &self.body.exprs[single] => match self.eval(single)? {
                        Value::Object(fields) => ToolArgs::Named(fields),
                        _ => unreachable!("an object literal evaluates to an object"),
                    },
                    _ => ToolArgs::Positional(args.iter().map(|&a| self.eval(a)).collect::<EvalResult<_>>()?),
                };
                tape.serve(ToolRequest { expr: id, tool: tool.to_string(), function: name.to_string(), args })
            }
            Expr::Call { function, args } => {
                let args = args.iter().map(|&a| self.eval(a)).collect::<EvalResult<Vec<_>>>()?;
                match self.tools.and_then(|tape| tape.values) {
                    Some(values) if sr_hir::stdlib::NONDETERMINISTIC.contains(&function.as_str()) => {
                        values.value(function, &args)
                    }
                    _ => crate::stdlib::call(function, &args),
                }
            }
            Expr::MethodCall { method, .. } => {
                Err(ValueError(format!("methods cannot be called on values (`.{method}(…)`)")))
            }
            Expr::InitialPrompt => Ok(self.vars.get("input_prompt").cloned().unwrap_or(Value::Null)),
        }
    }

    fn binary(&self, op: BinaryOp, lhs: ExprId, rhs: ExprId) -> EvalResult<Value> {
        // `and`/`or` short-circuit and return an operand, as Python's.
        match op {
            BinaryOp::And => {
                let left = self.eval(lhs)?;
                return if value::truthy(&left) { self.eval(rhs) } else { Ok(left) };
            }
            BinaryOp::Or => {
                let left = self.eval(lhs)?;
                return if value::truthy(&left) { Ok(left) } else { self.eval(rhs) };
            }
            _ => {}
        }
        let (a, b) = (self.eval(lhs)?, self.eval(rhs)?);
        Ok(match op {
            BinaryOp::Eq => Value::Bool(value::equals(&a, &b)),
            BinaryOp::NotEq => Value::Bool(!value::equals(&a, &b)),
            BinaryOp::Lt | BinaryOp::Gt | BinaryOp::LtEq | BinaryOp::GtEq => {
                Value::Bool(value::compare(&a, &b, op.text())?)
            }
            BinaryOp::Contains => Value::Bool(value::contains(&a, &b)?),
            BinaryOp::Similar => Value::Bool(value::similar(&a, &b)),
            BinaryOp::Add => value::add(&a, &b)?,
            BinaryOp::Sub => value::sub(&a, &b)?,
            BinaryOp::Mul => value::mul(&a, &b)?,
            BinaryOp::Div => value::div(&a, &b)?,
            BinaryOp::Rem => value::rem(&a, &b)?,
            BinaryOp::And | BinaryOp::Or => unreachable!(),
        })
    }
}

pub fn literal(lit: &Literal) -> Value {
    match lit {
        Literal::String(s) => Value::String(s.clone()),
        Literal::Int(i) => Value::from(*i),
        Literal::Float(text) => {
            text.parse::<f64>().ok().and_then(serde_json::Number::from_f64).map_or(Value::Null, Value::Number)
        }
        Literal::Bool(b) => Value::Bool(*b),
        Literal::Null => Value::Null,
    }
}

fn variable<'v>(vars: &'v Vars, name: &str) -> EvalResult<&'v Value> {
    vars.get(name).ok_or_else(|| ValueError(format!("variable '${name}' is not defined")))
}

/// A string in a flow: `${x}` reads the variable (undefined is an error),
/// `${a.b}` its field, `${f(x)}` a function of it; values render as
/// upstream's (`True`, lists and objects as JSON).
pub fn render_flow_template(template: &Template, vars: &Vars) -> EvalResult<String> {
    let mut out = String::new();
    for part in &template.parts {
        match part {
            TemplatePart::Text(text) => out.push_str(text),
            TemplatePart::Interpolation(i) => {
                let mut current = variable(vars, &i.path[0])?.clone();
                for field in &i.path[1..] {
                    current = value::field(&current, field)?.clone();
                }
                let value = match &i.function {
                    Some(function) => crate::stdlib::call(function, &[current])?,
                    None => current,
                };
                out.push_str(&display(&value));
            }
        }
    }
    Ok(out)
}

/// Renders a prompt body as upstream's `ctx.resolve`: a variable first, else
/// another prompt (composition, rendered recursively), else an error; fields of
/// missing or non-object values render empty; strings holding JSON are read as
/// JSON before walking fields.
pub fn render_prompt(
    name: &str,
    prompts: &IndexMap<sr_hir::Name, PromptData>,
    vars: &Vars,
    depth: u32,
) -> EvalResult<String> {
    let prompt = prompts.get(name).ok_or_else(|| ValueError(format!("prompt '{name}' is not defined")))?;
    let body = prompt.body.as_ref().ok_or_else(|| ValueError(format!("prompt '{name}' has no body")))?;
    if depth > 16 {
        return Err(ValueError(format!("prompt '{name}' includes itself")));
    }
    let mut out = String::new();
    for part in &body.template.parts {
        match part {
            TemplatePart::Text(text) => out.push_str(text),
            TemplatePart::Interpolation(i) => out.push_str(&resolve_in_prompt(i, prompts, vars, depth)?),
        }
    }
    Ok(out)
}

fn resolve_in_prompt(
    i: &Interpolation,
    prompts: &IndexMap<sr_hir::Name, PromptData>,
    vars: &Vars,
    depth: u32,
) -> EvalResult<String> {
    let base = &i.path[0];
    let value = match vars.get(base.as_str()) {
        Some(value) => value.clone(),
        None if prompts.contains_key(base) => Value::String(render_prompt(base, prompts, vars, depth + 1)?),
        None => {
            return Err(ValueError(format!(
                "undefined variable '${base}' in prompt interpolation; assign it in a flow or define a prompt named '{base}'"
            )));
        }
    };
    let mut current = Some(value);
    for field in &i.path[1..] {
        current = current.and_then(|v| {
            let v = match v {
                Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
                other => other,
            };
            v.get(field.as_str()).cloned()
        });
    }
    let value = match (&i.function, current) {
        (_, None) | (_, Some(Value::Null)) if i.path.len() > 1 => return Ok(String::new()),
        (Some(function), Some(v)) => crate::stdlib::call(function, &[v])?,
        (None, Some(v)) => v,
        (_, None) => Value::Null,
    };
    Ok(display(&value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use sr_hir::{RootDatabase, Stmt, body, file_items};

    /// Evaluates `return EXPR` written in DSL syntax.
    fn eval(expr: &str, vars: &[(&str, Value)]) -> EvalResult<Value> {
        let mut db = RootDatabase::default();
        let file = db.set_file("/t.sr", format!("flow f:\n    return {expr}\n"));
        let item = file_items(&db, file)[0];
        let body = body(&db, item);
        let Stmt::Return(e) = &body.stmts[body.root[0]] else { panic!("not a return") };
        let vars: Vars = vars.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        Evaluator { body: &body, vars: &vars, item: None, tools: None }.eval(*e)
    }

    #[test]
    fn arithmetic_logic_and_precedence() {
        assert_eq!(eval("1 + 2 * 3 - 4 / 2", &[]).unwrap(), json!(5.0));
        assert_eq!(eval("not 1 == 2 and (true or false)", &[]).unwrap(), json!(true));
        assert_eq!(eval("-(2 + 3)", &[]).unwrap(), json!(-5));
        assert_eq!(eval("$x or \"default\"", &[("x", json!(""))]).unwrap(), json!("default"));
    }

    #[test]
    fn variables_fields_and_lists() {
        let vars = [("r", json!({"a": {"b": 2}})), ("l", json!([1]))];
        assert_eq!(eval("$r.a.b + 1", &vars).unwrap(), json!(3));
        assert_eq!(eval("$l + [2] + 3", &vars).unwrap(), json!([1, 2, 3]));
        assert_eq!(eval("$r.a contains \"b\"", &vars).unwrap(), json!(true));
        assert!(eval("$r.zz", &vars).unwrap_err().0.contains("no field 'zz'"));
        assert!(eval("$missing", &vars).unwrap_err().0.contains("'$missing' is not defined"));
    }

    #[test]
    fn filter_reads_item_fields() {
        let vars = [("f", json!([{"s": 1, "n": "a"}, {"s": 9, "n": "b"}])), ("min", json!(5))];
        assert_eq!(eval("filter $f where .s > $min", &vars).unwrap(), json!([{"s": 9, "n": "b"}]));
    }

    #[test]
    fn functions_and_templates() {
        let vars = [("items", json!([3, 1, 2])), ("ok", json!(true)), ("o", json!({"k": [1]}))];
        assert_eq!(eval("len($items) + min($items) + max($items)", &vars).unwrap(), json!(7));
        assert_eq!(eval("sorted($items)", &vars).unwrap(), json!([1, 2, 3]));
        assert_eq!(eval("\"n=${len(items)} ok=${ok} o=${o}\"", &vars).unwrap(), json!(r#"n=3 ok=True o={"k":[1]}"#));
        assert!(eval("\"${nope}\"", &vars).is_err());
        assert!(eval("nope(1)", &vars).unwrap_err().0.contains("unknown function"));
    }

    /// Without a tape (the debugger's evaluation) a tool function is not called.
    #[test]
    fn tool_functions_need_a_tape() {
        let error = eval("fs.read_file(\"a\")", &[]).unwrap_err().0;
        assert_eq!(error, "fs.read_file() calls a tool: tool functions are called by flow statements only");
    }
}
