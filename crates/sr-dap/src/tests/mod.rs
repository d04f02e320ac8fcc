//! Hook-level tests: the runtime runs a program under a scripted model with
//! the debugger as its step hook and event sink; each test plays the client
//! through the debugger's requests (no transport), one feature at a time.

/// The start of the test programs with a file-reading agent (`reader`): the
/// lines before their flows, so that their line numbers stay where the tests
/// expect them.
macro_rules! reader_header {
    () => {
        "\
streetrace v1

model main = openai/test

tool fs = builtin streetrace.fs_readonly

prompt reader_instruction: \"\"\"Read files.\"\"\"

agent reader:
    instruction reader_instruction
    tools fs

"
    };
}

mod breakpoints;
mod console;
mod failures;
mod human;
mod inspect;
mod stepping;
mod tool_steps;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use sr_hir::RootDatabase;
use sr_llm::Provider;
use sr_runtime::RunOptions;
use sr_runtime::compile::Compiled;
use sr_runtime::human::Unattended;
use sr_runtime::launch::{LaunchSpec, Models, launch};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::client::Client;
use crate::debugger::{Action, Debugger};
use crate::inspect::InspectError;
use crate::launch::Launch;
use crate::protocol::{
    Breakpoint, EvaluateArguments, FunctionBreakpoint, Outgoing, SetBreakpointsArguments,
    SetExceptionBreakpointsArguments, SetFunctionBreakpointsArguments, SetVariableArguments, SetVariableBody, Source,
    SourceBreakpoint, StackTraceArguments, Variable, VariablesArguments,
};
use crate::stepping::StepKind;

pub const MAIN: i64 = 1;

pub struct Harness {
    pub debugger: Arc<Debugger>,
    queue: UnboundedReceiver<Outgoing>,
    pub path: PathBuf,
    dir: PathBuf,
    program: Arc<Compiled>,
    provider: Arc<dyn Provider>,
    /// Output events seen so far: (category, text).
    pub output: Vec<(String, String)>,
    /// `streetraceQuestion` events seen so far: (thread, question).
    pub questions: Vec<(i64, Option<String>)>,
    /// The threads of `continued` events seen so far.
    pub continued: Vec<i64>,
}

impl Harness {
    pub fn new(source: &str, provider: impl Provider + 'static) -> Harness {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("sr-dap-hook-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("test.sr");
        std::fs::write(&path, source).unwrap();
        let program = match sr_runtime::compile::compile_path(&mut RootDatabase::default(), &path) {
            Ok(program) => program,
            Err(e) => panic!("the test program does not compile: {:#?}", e.diagnostics),
        };
        let (client, queue) = Client::channel();
        let debugger = Debugger::new(client);
        debugger.load(program.clone());
        Harness {
            debugger,
            queue,
            path,
            dir,
            program,
            provider: Arc::new(provider),
            output: Vec::new(),
            questions: Vec::new(),
            continued: Vec::new(),
        }
    }

    pub fn lines(&self, breakpoints: Vec<SourceBreakpoint>) -> Vec<Breakpoint> {
        let source = Source { path: Some(self.path.display().to_string()), ..Source::default() };
        let args = SetBreakpointsArguments { source, breakpoints: Some(breakpoints), ..Default::default() };
        self.debugger.set_breakpoints(args).unwrap()
    }

    pub fn functions(&self, names: &[&str]) -> Vec<Breakpoint> {
        let breakpoints = names.iter().map(|n| FunctionBreakpoint { name: n.to_string(), ..Default::default() });
        self.debugger.set_function_breakpoints(SetFunctionBreakpointsArguments { breakpoints: breakpoints.collect() })
    }

    pub fn exceptions(&self, filters: &[&str]) {
        let filters = filters.iter().map(|f| f.to_string()).collect();
        self.debugger.set_exception_breakpoints(SetExceptionBreakpointsArguments { filters, filter_options: None });
    }

    pub fn start(&self, stop_on_entry: bool) {
        let launched = launch(LaunchSpec {
            program: self.program.clone(),
            message: "hello".to_string(),
            work_dir: self.dir.clone(),
            read_only: false,
            storage: None,
            models: Models::Provider { provider: self.provider.clone(), record: None },
            options: RunOptions::default(),
            human: Arc::new(Unattended),
            in_doubt: sr_runtime::in_doubt::skip_all(),
        })
        .unwrap();
        let launch = Launch {
            launched,
            stop_on_entry,
            no_debug: false,
            timeline: None,
            temporary: false,
            travel: None,
            piece: None,
        };
        crate::run::spawn(self.debugger.clone(), launch);
    }

    /// The next event other than output (collected), within 10 s.
    async fn event(&mut self) -> (String, Value) {
        loop {
            let message = tokio::time::timeout(Duration::from_secs(10), self.queue.recv())
                .await
                .expect("no event within 10 s")
                .expect("the debugger is gone");
            if let Outgoing::Event(event) = message {
                let body = event.body().unwrap_or_default();
                match event.name() {
                    "output" => self.output.push((
                        body["category"].as_str().unwrap().to_string(),
                        body["output"].as_str().unwrap().to_string(),
                    )),
                    "streetraceQuestion" => self
                        .questions
                        .push((body["threadId"].as_i64().unwrap(), body["question"].as_str().map(str::to_string))),
                    "continued" => self.continued.push(body["threadId"].as_i64().unwrap()),
                    "thread" | "breakpoint" => {}
                    name => return (name.to_string(), body),
                }
            }
        }
    }

    /// The next stop's event body.
    pub async fn stopped_body(&mut self) -> Value {
        match self.event().await {
            (name, body) if name == "stopped" => body,
            (name, body) => panic!("expected a stop, got {name} {body}"),
        }
    }

    /// The next stop: (reason, thread).
    pub async fn stopped(&mut self) -> (String, i64) {
        match self.event().await {
            (name, body) if name == "stopped" => {
                (body["reason"].as_str().unwrap().to_string(), body["threadId"].as_i64().unwrap())
            }
            (name, body) => panic!("expected a stop, got {name} {body}"),
        }
    }

    /// The run ends (`exited`, then `terminated`); the exit code.
    pub async fn terminated(&mut self) -> i64 {
        let code = match self.event().await {
            (name, body) if name == "exited" => body["exitCode"].as_i64().unwrap(),
            (name, body) => panic!("expected the end, got {name} {body}"),
        };
        assert_eq!(self.event().await.0, "terminated");
        code
    }

    pub fn resume(&self, thread: i64, action: Action) {
        self.debugger.resume(Some(thread), action, false, || {}).unwrap();
    }

    /// `continue` with `singleThread`.
    pub fn resume_single(&self, thread: i64) {
        self.debugger.resume(Some(thread), Action::Continue, true, || {}).unwrap();
    }

    pub fn cont(&self) {
        self.resume(MAIN, Action::Continue);
    }

    pub fn step(&self, kind: StepKind) {
        self.resume(MAIN, Action::Step(kind));
    }

    /// The stack of a stopped thread: (frame name, line), innermost first.
    pub fn frames(&self, thread: i64) -> Vec<(String, i64)> {
        let args = StackTraceArguments { thread_id: thread, ..Default::default() };
        self.debugger.stack_trace(args).unwrap().0.into_iter().map(|f| (f.name, f.line)).collect()
    }

    pub fn frame_id(&self, thread: i64, index: usize) -> i64 {
        let args = StackTraceArguments { thread_id: thread, ..Default::default() };
        self.debugger.stack_trace(args).unwrap().0[index].id
    }

    /// The reference of a scope of a frame.
    pub fn scope(&self, frame: i64, name: &str) -> i64 {
        let scopes = self.debugger.scopes(frame).unwrap();
        scopes
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no scope {name} in {scopes:?}"))
            .variables_reference
    }

    pub fn children(&self, reference: i64) -> Vec<Variable> {
        self.debugger.variables(VariablesArguments { variables_reference: reference, ..Default::default() }).unwrap()
    }

    /// A variable of the top frame's "Variables" scope.
    pub fn var(&self, thread: i64, name: &str) -> Option<Variable> {
        let scope = self.scope(self.frame_id(thread, 0), "Variables");
        self.children(scope).into_iter().find(|v| v.name == name)
    }

    pub fn evaluate(&self, frame: Option<i64>, expression: &str) -> Result<String, InspectError> {
        self.evaluate_in(frame, expression, None)
    }

    /// Evaluates in a context (`repl`, `watch`, `hover`, `clipboard`).
    pub fn evaluate_in(
        &self,
        frame: Option<i64>,
        expression: &str,
        context: Option<&str>,
    ) -> Result<String, InspectError> {
        let context = context.map(str::to_string);
        let args = EvaluateArguments { expression: expression.to_string(), frame_id: frame, context };
        self.debugger.evaluate(args).map(|r| r.result)
    }

    pub fn set(&self, reference: i64, name: &str, value: &str) -> Result<SetVariableBody, InspectError> {
        let args =
            SetVariableArguments { variables_reference: reference, name: name.to_string(), value: value.to_string() };
        self.debugger.set_variable(args)
    }

    pub fn output(&self, category: &str) -> String {
        self.output.iter().filter(|(c, _)| c == category).map(|(_, t)| t.as_str()).collect()
    }
}

pub fn line(line: i64) -> SourceBreakpoint {
    SourceBreakpoint { line, ..Default::default() }
}
