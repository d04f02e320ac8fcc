//! Tool functions in flows: `TOOL.FUNCTION(args)` in a flow statement's
//! expression. Each call is a tool step made by the same code as a model's
//! tool call (`Runtime::tool_call`): the step hook, `tool_call`/`tool_result`
//! events, `on tool-call`/`on tool-result` handlers, the jail, and the tool
//! gate (live, recorded, replayed or resumed).

use serde_json::{Map, Value};
use std::sync::Arc;

use sr_hir::tool_functions::{EXECUTOR, STATE, ToolFunction, ToolKind};
use sr_hir::{ExprId, StmtId};
use sr_llm::ToolCall;

use super::agent::Callable;
use super::executor::CodeRun;
use crate::compile::BodySpec;
use crate::eval::{Evaluator, ToolArgs, ToolRequest, ToolTape};
use crate::event::Payload;
use crate::run::{ErrorKind, FlowFunction, RunError, Runtime, Thread};
use crate::tools::{Tool, builtin_tools, file_function, flow_value};
use crate::value::display;

impl Runtime {
    /// Evaluates expression `e` of statement `stmt`, making the tool function
    /// calls it reaches, in order, each once.
    pub(crate) async fn eval_in_flow(
        &self,
        th: &mut Thread,
        spec: &BodySpec,
        stmt: StmtId,
        e: ExprId,
    ) -> Result<Value, RunError> {
        let mut results = Vec::new();
        let mut values = Vec::new();
        loop {
            // In a block of its own: the tape refers to the values, and
            // neither lives across the tool call below.
            let (outcome, request) = {
                let journaled = super::values::StatementValues::new(self, th, values);
                let tape = ToolTape::new(results, &journaled);
                let outcome = Evaluator { body: &spec.body, vars: &th.vars, item: None, tools: Some(&tape) }.eval(e);
                let (request, served) = tape.into_parts();
                results = served;
                values = journaled.into_values().map_err(|d| {
                    RunError::new(
                        ErrorKind::Diverged,
                        format!("the run diverged from its journal: {d}"),
                        Some(self.program.stmt_location(&spec.source, stmt)),
                    )
                })?;
                (outcome, request)
            };
            let Some(request) = request else {
                return outcome
                    .map_err(|e| RunError::failed(e.0, Some(self.program.stmt_location(&spec.source, stmt))));
            };
            // Boxed: the call's future (handlers, agents) stays out of every
            // statement's future, which recursive flows nest deeply.
            // The expression's own call (`fs.write_file(…)`) gives its value:
            // it is not evaluated again (its arguments would be, for nothing,
            // after the call changed the variables).
            let whole = request.expr == e;
            let value = Box::pin(self.flow_tool_call(th, spec, stmt, request, results.len())).await?;
            if whole {
                return Ok(value);
            }
            results.push(value);
        }
    }

    /// Makes call number `n` of a statement; its value is what the function
    /// gives a flow, and a failure is the statement's.
    async fn flow_tool_call(
        &self,
        th: &mut Thread,
        spec: &BodySpec,
        stmt: StmtId,
        request: ToolRequest,
        n: usize,
    ) -> Result<Value, RunError> {
        // Only failures need the whole location; a loop of calls does not pay for it.
        let location = || Some(self.program.stmt_location(&spec.source, stmt));
        let ToolRequest { tool, function, args, .. } = request;
        let fail = |message: String| RunError::failed(format!("{tool}.{function}(): {message}"), location());
        let kind = self.program.tools.get(tool.as_str()).map(|data| ToolKind::of(&tool, Some(data)));
        let (declared, callable) = match kind {
            Some(ToolKind::State) => match self.state_spec(th, &function) {
                Some(declared) => (Arc::new(declared), Callable::State),
                None => {
                    return Err(fail(format!("tool '{tool}' has no function '{function}'; it has: {}", names(STATE))));
                }
            },
            _ => {
                let (declared, found) = self.flow_function(th, &tool, &function).await.map_err(fail)?;
                (declared, Callable::Tool(found))
            }
        };
        let arguments = bind(&declared.parameters, args).map_err(fail)?;
        let (line, column) = self.program.stmt_line_column(&spec.source, stmt);
        let id = format!("{}:{line}:{column}#{n}", spec.name);
        let call = ToolCall::new(id, declared.name.clone(), arguments);
        let callables = [(declared.name.clone(), callable)];
        let result = self.tool_call(th, spec.name.as_str(), &call, &callables).await.map_err(|e| e.at(location()))?;
        // A failure names the arguments it was given.
        let failed =
            |message: String| RunError::failed(format!("{tool}.{function}({}): {message}", call.arguments), location());
        if result.is_error {
            return Err(failed(display(&result.content)));
        }
        let value = match kind {
            Some(ToolKind::Fs | ToolKind::FsReadonly) => flow_value(&function, result.content).map_err(failed)?,
            _ => result.content,
        };
        th.last_result = Some(value.clone());
        Ok(value)
    }
}

impl Runtime {
    /// Function `function` of tool or executor `tool`, and how it is declared:
    /// found and described once per run, as a loop may call it thousands of
    /// times.
    async fn flow_function(&self, th: &Thread, tool: &str, function: &str) -> Result<FlowFunction, String> {
        let key = format!("{tool}.{function}");
        if let Some(found) = self.flow_functions.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(&key) {
            return Ok(found.clone());
        }
        let found: Arc<dyn Tool> = match self.program.tools.get(tool) {
            Some(data) => self.tool_function(th, tool, data, ToolKind::of(tool, Some(data)), function).await?,
            None => self.executor_function(tool, function)?,
        };
        let found = (Arc::new(found.spec()), found);
        self.flow_functions.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(key, found.clone());
        Ok(found)
    }

    /// `EXECUTOR.run`: code run in the executor's sandbox (`run::executor`).
    fn executor_function(&self, name: &str, function: &str) -> Result<Arc<dyn Tool>, String> {
        let Some(executor) = self.program.executors.get(name) else {
            return Err(format!(
                "there is no tool or executor named '{name}'; declare it, e.g. `tool {name} = builtin streetrace.fs`"
            ));
        };
        if !EXECUTOR.iter().any(|f| f.name == function) {
            return Err(format!("executor '{name}' has no function '{function}'; it has: {}", names(EXECUTOR)));
        }
        Ok(Arc::new(CodeRun { executor: executor.clone(), allow_unsandboxed: self.env.options.allow_unsandboxed }))
    }

    /// Function `function` of a builtin or MCP tool.
    async fn tool_function(
        &self,
        th: &Thread,
        tool: &str,
        data: &sr_hir::ToolData,
        kind: ToolKind,
        function: &str,
    ) -> Result<Arc<dyn Tool>, String> {
        if let Some(found) = file_function(kind, function, &self.env.jail) {
            return Ok(found);
        }
        let tools = match kind {
            ToolKind::Mcp => {
                let (tools, warning) = self.mcp_tools(th, tool).await;
                if let Some(message) = warning {
                    th.emitter.emit(Payload::Warning { message });
                }
                tools
            }
            _ => builtin_tools(tool, Some(data), &self.env.jail, &self.env.options),
        };
        // MCP servers' tools are named `server__tool`; a `-` in the name is
        // written `_` in a flow (`get_sum` for `get-sum`).
        let qualified = format!("{tool}__{function}");
        let named = |t: &&Arc<dyn Tool>| {
            let name = t.spec().name;
            name == function || name.replace('-', "_") == qualified
        };
        if let Some(found) = tools.iter().find(named) {
            return Ok(found.clone());
        }
        let names: Vec<String> = tools.iter().map(|t| t.spec().name).collect();
        Err(match names.is_empty() {
            true => format!("tool '{tool}' gives no functions"),
            false => format!("tool '{tool}' has no function '{function}'; it has: {}", names.join(", ")),
        })
    }
}

fn names(functions: &[ToolFunction]) -> String {
    functions.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
}

/// The arguments object of a call, by the function's JSON schema: positional
/// arguments bind to the required parameters, then the others, in the order
/// the schema lists them; named ones must be parameters; required ones must
/// be given.
fn bind(parameters: &Value, args: ToolArgs) -> Result<Value, String> {
    let required: Vec<&str> =
        parameters.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let listed: Vec<&str> = parameters
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .collect();
    let order: Vec<&str> = listed
        .iter()
        .filter(|p| required.contains(p))
        .chain(listed.iter().filter(|p| !required.contains(p)))
        .copied()
        .collect();
    let fields = match args {
        ToolArgs::Positional(values) => {
            if values.len() > order.len() {
                return Err(format!(
                    "takes at most {} arguments ({}), {} given",
                    order.len(),
                    order.join(", "),
                    values.len()
                ));
            }
            order.iter().map(|p| p.to_string()).zip(values).collect::<Map<String, Value>>()
        }
        ToolArgs::Named(fields) => {
            // A schema that lists no properties says nothing about names.
            if let Some(key) = fields.keys().find(|k| !listed.is_empty() && !listed.contains(&k.as_str())) {
                return Err(format!("no parameter named '{key}' (it has: {})", order.join(", ")));
            }
            fields
        }
    };
    let missing: Vec<&str> = required.iter().filter(|p| !fields.contains_key(**p)).copied().collect();
    if !missing.is_empty() {
        return Err(format!("missing {}", missing.join(", ")));
    }
    Ok(Value::Object(fields))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn arguments_bind_required_first_in_schema_order() {
        let schema = json!({"properties": {"a": {}, "b": {}, "c": {}}, "required": ["c"]});
        let positional = |v: Vec<Value>| bind(&schema, ToolArgs::Positional(v));
        assert_eq!(positional(vec![json!(1), json!(2)]).unwrap(), json!({"c": 1, "a": 2}));
        assert_eq!(positional(vec![]).unwrap_err(), "missing c");
        assert_eq!(positional(vec![json!(1); 4]).unwrap_err(), "takes at most 3 arguments (c, a, b), 4 given");
        let named = |v: Value| bind(&schema, ToolArgs::Named(v.as_object().unwrap().clone()));
        assert_eq!(named(json!({"b": 1, "c": 2})).unwrap(), json!({"b": 1, "c": 2}));
        assert_eq!(named(json!({"c": 1, "zz": 2})).unwrap_err(), "no parameter named 'zz' (it has: c, a, b)");
        assert_eq!(named(json!({"a": 1})).unwrap_err(), "missing c");
        // A schema without properties takes any names.
        assert_eq!(bind(&json!({}), ToolArgs::Named(Map::new())).unwrap(), json!({}));
    }
}
