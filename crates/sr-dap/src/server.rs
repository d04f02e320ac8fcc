//! The session: reads requests in order, answers each (an unknown or broken
//! one, or a message meant as a request without a `type`, `seq` or
//! `command`, with an error response), and drives the configuration sequence:
//! `initialize` → `launch` (the program compiles) → `initialized` event →
//! breakpoints → `configurationDone` → the run starts.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncWrite};
use tokio::sync::oneshot;

use crate::client::Client;
use crate::debugger::{Action, Debugger};
use crate::exceptions::ExceptionKind;
use crate::forks::Piece;
use crate::launch::{self, Launch, LaunchError};
use crate::protocol::{
    BreakpointLocationsBody, BreakpointsBody, Capabilities, Command, ContinueBody, Event, LaunchArguments, NotARequest,
    Outgoing, Request, Response, RestartArguments, ScopesBody, StackTraceBody, ThreadArguments, ThreadsBody,
    VariablesBody,
};
use crate::request_error::RequestError;
use crate::run::{self, Running};
use crate::source::Positions;
use crate::stepping::StepKind;
use crate::timeline::Archive;
use crate::travel::{Back, Travel};
use sr_wire::Incoming;

/// How long a terminated run may take to reach its next point before it is aborted.
const TERMINATE_GRACE: Duration = Duration::from_secs(2);

/// Serves one debug session over `input` and `output` until `disconnect`
/// or the end of input.
pub async fn serve<R, W>(input: R, mut output: W)
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (client, mut queue) = Client::channel();
    let (stop, mut stopped) = oneshot::channel::<()>();
    let writer = tokio::spawn(async move {
        let mut seq = 0;
        let mut write = async |message: Outgoing| {
            seq += 1;
            sr_wire::write(&mut output, &wire(seq, message)).await
        };
        loop {
            tokio::select! {
                biased;
                Some(message) = queue.recv() => {
                    if write(message).await.is_err() {
                        return;
                    }
                }
                _ = &mut stopped => break,
            }
        }
        // What was queued before the session ended still goes out.
        while let Ok(message) = queue.try_recv() {
            if write(message).await.is_err() {
                return;
            }
        }
    });
    let mut session = Session::new(client);
    let mut input = sr_wire::Reader::new(input);
    loop {
        match input.read().await {
            Ok(Some(Incoming::Message(message))) => {
                if !session.handle(message).await {
                    break;
                }
            }
            Ok(Some(Incoming::Malformed { reason, .. })) => eprintln!("sr-dap: skipped a message: {reason}"),
            Ok(None) => break,
            Err(e) => {
                eprintln!("sr-dap: cannot read the client: {e}");
                break;
            }
        }
    }
    session.stop_run(Ending::Heard).await;
    for file in session.temporary.iter().map(PathBuf::as_path).chain(session.archive.file()) {
        let _ = std::fs::remove_file(file);
    }
    let _ = stop.send(());
    let _ = writer.await;
}

/// A message as it goes on the wire: `seq` and `type` first, then its fields.
fn wire(seq: i64, message: Outgoing) -> Value {
    match message {
        Outgoing::Response(r) => {
            let mut value = json!({"seq": seq, "type": "response"});
            if let (Some(out), Ok(Value::Object(fields))) = (value.as_object_mut(), serde_json::to_value(r)) {
                out.extend(fields);
            }
            value
        }
        Outgoing::Event(event) => match event.body() {
            Some(body) => json!({"seq": seq, "type": "event", "event": event.name(), "body": body}),
            None => json!({"seq": seq, "type": "event", "event": event.name()}),
        },
    }
}

struct Session {
    debugger: Arc<Debugger>,
    client: Client,
    /// The launch configuration, kept for restarts.
    arguments: Option<LaunchArguments>,
    /// Compiled and waiting for `configurationDone`.
    ready: Option<Launch>,
    configured: bool,
    running: Option<Running>,
    /// The recording of the launch's runs, to go back in time in.
    timeline: Option<PathBuf>,
    /// Temporary recordings, removed when the session ends.
    temporary: Vec<PathBuf>,
    /// The journal the current run records to, and how much of it it was
    /// served (the rest goes to the archive when it ends).
    recording: Option<(PathBuf, u64)>,
    /// The file changes of every run of the launch (see `timeline`).
    archive: Archive,
}

impl Session {
    fn new(client: Client) -> Session {
        Session {
            debugger: Debugger::new(client.clone()),
            client,
            arguments: None,
            ready: None,
            configured: false,
            running: None,
            timeline: None,
            temporary: Vec::new(),
            recording: None,
            archive: Archive::default(),
        }
    }

    /// Handles one message; false when the session is over.
    async fn handle(&mut self, message: Value) -> bool {
        let mut request = match Request::from_message(message) {
            Ok(request) => request,
            Err(NotARequest::Skip(reason)) => {
                eprintln!("sr-dap: skipped a message: {reason}");
                return true;
            }
            Err(NotARequest::Answer { seq, command, message }) => {
                eprintln!("sr-dap: refused a message: {message}");
                self.client.respond(Response {
                    request_seq: seq,
                    success: false,
                    command,
                    message: Some(message),
                    body: None,
                });
                return true;
            }
        };
        let command = match Command::parse(&request.command, std::mem::take(&mut request.arguments)) {
            Ok(command) => command,
            Err(message) => {
                self.refuse(&request, message);
                return true;
            }
        };
        match command {
            Command::Initialize(args) => {
                self.debugger.set_positions(Positions {
                    line_base: if args.lines_start_at1.unwrap_or(true) { 1 } else { 0 },
                    column_base: if args.columns_start_at1.unwrap_or(true) { 1 } else { 0 },
                });
                self.answer(&request, capabilities());
            }
            Command::Launch(args) => self.launch(&request, args),
            Command::Attach => self.refuse(&request, "attach is not supported; use launch"),
            Command::ConfigurationDone => {
                self.configured = true;
                self.answer(&request, ());
                self.start();
            }
            Command::SetBreakpoints(args) => {
                let result = self.debugger.set_breakpoints(args).map(|breakpoints| BreakpointsBody { breakpoints });
                self.respond(&request, result);
            }
            Command::SetFunctionBreakpoints(args) => {
                let breakpoints = self.debugger.set_function_breakpoints(args);
                self.answer(&request, BreakpointsBody { breakpoints });
            }
            Command::SetExceptionBreakpoints(args) => {
                let breakpoints = self.debugger.set_exception_breakpoints(args);
                self.answer(&request, BreakpointsBody { breakpoints });
            }
            Command::BreakpointLocations(args) => {
                let breakpoints = self.debugger.breakpoint_locations(args);
                self.answer(&request, BreakpointLocationsBody { breakpoints });
            }
            Command::DataBreakpointInfo(args) => self.answer(&request, self.debugger.data_breakpoint_info(args)),
            Command::SetDataBreakpoints(args) => {
                let breakpoints = self.debugger.lock().breakpoints.set_data(args.breakpoints);
                self.answer(&request, BreakpointsBody { breakpoints });
            }
            Command::Continue(args) => self.resume(&request, args, Action::Continue),
            Command::Next(args) => self.resume(&request, args, Action::Step(StepKind::Over)),
            Command::StepIn(args) => self.resume(&request, args, Action::Step(StepKind::In)),
            Command::StepOut(args) => self.resume(&request, args, Action::Step(StepKind::Out)),
            Command::StepBack(args) => self.go_back(&request, args.thread_id, Back::Step).await,
            Command::ReverseContinue(args) => self.go_back(&request, args.thread_id, Back::Continue).await,
            Command::RestartFrame(args) => self.go_back(&request, None, Back::Frame(args.frame_id)).await,
            Command::RunLiveFrom(args) => {
                let result = self.debugger.run_live_from(args.thread_id);
                self.respond(&request, result);
            }
            Command::Forks => self.answer(&request, self.debugger.forks()),
            Command::SwitchFork(args) => {
                let planned = args
                    .id
                    .ok_or(RequestError::Missing {
                        command: "streetraceSwitchFork",
                        field: "id",
                        what: "a fork of streetraceForks",
                    })
                    .and_then(|id| self.debugger.switch_plan(id));
                match planned {
                    Ok((to, travel)) => self.travel(&request, travel, Some(to)).await,
                    Err(e) => self.refuse(&request, e),
                }
            }
            Command::Pause(_) => {
                self.debugger.pause();
                self.answer(&request, ());
            }
            Command::Threads => self.answer(&request, ThreadsBody { threads: self.debugger.threads() }),
            Command::StackTrace(args) => {
                let result = self
                    .debugger
                    .stack_trace(args)
                    .map(|(stack_frames, total_frames)| StackTraceBody { stack_frames, total_frames });
                self.respond(&request, result);
            }
            Command::Scopes(args) => {
                let result = self.debugger.scopes(args.frame_id).map(|scopes| ScopesBody { scopes });
                self.respond(&request, result);
            }
            Command::Variables(args) => {
                let result = self.debugger.variables(args).map(|variables| VariablesBody { variables });
                self.respond(&request, result);
            }
            Command::Evaluate(args) => {
                let result = self.debugger.evaluate(args);
                self.respond(&request, result);
            }
            Command::SetVariable(args) => {
                let result = self.debugger.set_variable(args);
                self.respond(&request, result);
            }
            Command::Answer(args) => {
                let result = match &args.text {
                    Some(text) => self.debugger.answer(args.thread_id, text),
                    None => {
                        Err(RequestError::Missing { command: "streetraceAnswer", field: "text", what: "the answer" })
                    }
                };
                self.respond(&request, result);
            }
            Command::ExceptionInfo(args) => {
                let result = self.debugger.exception_info(args.thread_id);
                self.respond(&request, result);
            }
            Command::Terminate => {
                self.answer(&request, ());
                self.stop_run(Ending::Heard).await;
            }
            Command::Restart(args) => self.restart(&request, args).await,
            Command::Disconnect => {
                self.stop_run(Ending::Heard).await;
                self.answer(&request, ());
                return false;
            }
        }
        true
    }

    /// Answers `request` with `body`.
    fn answer<T: Serialize>(&self, request: &Request, body: T) {
        self.respond(request, Ok::<T, &str>(body));
    }

    /// Refuses `request`: the error's text is the response's message.
    fn refuse(&self, request: &Request, error: impl std::fmt::Display) {
        self.respond(request, Err::<(), _>(error));
    }

    /// Answers `request` with `result`'s body, or refuses it with its error's text.
    fn respond<T: Serialize, E: std::fmt::Display>(&self, request: &Request, result: Result<T, E>) {
        let (success, message, body) = match result {
            Ok(body) => (true, None, serde_json::to_value(body).ok().filter(|b| !b.is_null())),
            Err(message) => (false, Some(message.to_string()), None),
        };
        self.client.respond(Response {
            request_seq: request.seq,
            success,
            command: request.command.clone(),
            message,
            body,
        });
    }

    fn launch(&mut self, request: &Request, args: LaunchArguments) {
        if self.arguments.is_some() {
            return self.refuse(request, "the program is already launched");
        }
        match launch::prepare(&args) {
            Ok(launch) => {
                self.debugger.load(launch.launched.program().clone());
                self.arguments = Some(args);
                self.keep_timeline(&launch);
                self.ready = Some(launch);
                self.answer(request, ());
                self.client.event(Event::Initialized);
                self.start();
            }
            Err(error) => self.fail(request, error),
        }
    }

    /// Starts the run once the program is launched and configured.
    fn start(&mut self) {
        if !self.configured || self.running.is_some() {
            return;
        }
        if let Some(launch) = self.ready.take() {
            self.running = Some(run::spawn(self.debugger.clone(), launch));
        }
    }

    fn resume(&mut self, request: &Request, args: ThreadArguments, action: Action) {
        let single = args.single_thread.unwrap_or(false);
        let body = match action {
            Action::Continue => serde_json::to_value(ContinueBody { all_threads_continued: !single }).ok(),
            Action::Step(_) => None,
        };
        let client = self.client.clone();
        let ack = || {
            client.respond(Response {
                request_seq: request.seq,
                success: true,
                command: request.command.clone(),
                message: None,
                body,
            })
        };
        if let Err(e) = self.debugger.resume(args.thread_id, action, single, ack) {
            self.refuse(request, e);
        }
    }

    /// Runs the program again from the start (with the configuration the
    /// client sends, else the first one), keeping the breakpoints.
    async fn restart(&mut self, request: &Request, args: RestartArguments) {
        let args = args.arguments.or(self.arguments.clone());
        let Some(args) = args else {
            return self.refuse(request, "nothing was launched yet");
        };
        self.stop_run(Ending::Replaced).await;
        match launch::prepare(&args) {
            Ok(launch) => {
                self.debugger.load(launch.launched.program().clone());
                self.arguments = Some(args);
                self.keep_timeline(&launch);
                self.answer(request, ());
                self.running = Some(run::spawn(self.debugger.clone(), launch));
            }
            Err(error) => self.fail(request, error),
        }
    }

    /// Keeps a new launch's (or restart's) recording; the archive of the
    /// runs before it is forgotten.
    fn keep_timeline(&mut self, launch: &Launch) {
        self.timeline.clone_from(&launch.timeline);
        if let (true, Some(file)) = (launch.temporary, &launch.timeline) {
            self.temporary.push(file.clone());
        }
        if let Some(file) = std::mem::take(&mut self.archive).file() {
            let _ = std::fs::remove_file(file);
        }
        self.recording = launch.piece.as_ref().map(|piece| (piece.file.clone(), 0));
    }

    /// Goes back in time: the run is replaced by a silent replay of its
    /// recording that brings the thread to the point `back` leads to and
    /// every other thread to where it is (see `travel`).
    async fn go_back(&mut self, request: &Request, thread_id: Option<i64>, back: Back) {
        if self.arguments.is_none() || self.timeline.is_none() {
            return self.refuse(request, "this run has no recording to go back in");
        }
        match self.debugger.travel_target(thread_id, back) {
            Ok(travel) => self.travel(request, travel, None).await,
            Err(e) => self.refuse(request, e),
        }
    }

    /// Replaces the run by one that travels as `travel` plans, in branch
    /// `to` (default: the current one). A launch that replays a recording
    /// replays it again; a live one is served its branch's journal after
    /// the archive of every run's file changes (see `timeline`), and goes
    /// live only where the branch's recording ends or it forks.
    async fn travel(&mut self, request: &Request, travel: Travel, to: Option<usize>) {
        let (Some(arguments), Some(_)) = (self.arguments.clone(), &self.timeline) else {
            return self.refuse(request, "this run has no recording to go back in");
        };
        let offline = arguments.replay.is_some();
        let again = LaunchArguments { stop_on_entry: Some(false), ..arguments };
        self.stop_run(Ending::WentBack(travel.held())).await;
        if let Some((file, served)) = self.recording.take()
            && let Err(e) = self.archive.absorb(&file, served)
        {
            return self.fail(request, LaunchError::new(e.to_string()));
        }
        let branch = {
            let mut st = self.debugger.lock();
            if let Some(to) = to {
                st.forks.current = to;
            }
            st.forks.current().journal.clone()
        };
        let prepared = match (offline, branch) {
            (true, _) => launch::prepare(&again).map(|launch| (launch, 0, 0)),
            (false, None) => Err(LaunchError::new("this run has no recording to go back in")),
            (false, Some(branch)) => {
                self.archive.compose(&branch).map_err(|e| LaunchError::new(e.to_string())).and_then(|(text, skip)| {
                    let served = text.len() as u64;
                    launch::prepare_continuing(&again, text).map(|launch| (launch, skip, served))
                })
            }
        };
        match prepared {
            Ok((mut launch, skip, served)) => {
                launch.travel = Some(travel);
                if !offline {
                    launch.piece = launch.timeline.clone().map(|file| Piece { file, skip });
                }
                self.timeline.clone_from(&launch.timeline);
                self.prune();
                if let (true, Some(file)) = (launch.temporary, &launch.timeline) {
                    self.temporary.push(file.clone());
                }
                self.recording = launch.piece.as_ref().map(|piece| (piece.file.clone(), served));
                self.answer(request, ());
                self.running = Some(run::spawn(self.debugger.clone(), launch));
            }
            Err(error) => self.fail(request, error),
        }
    }

    /// Removes the temporary recordings no fork's journal is in any more
    /// (each travel writes the journal it serves anew; the archive keeps
    /// their file changes).
    fn prune(&mut self) {
        let kept: BTreeSet<PathBuf> = {
            let st = self.debugger.lock();
            st.forks.branches.iter().filter_map(|b| Some(b.journal.as_ref()?.file.clone())).collect()
        };
        self.temporary.retain(|file| {
            let keep = kept.contains(file);
            if !keep {
                let _ = std::fs::remove_file(file);
            }
            keep
        });
    }

    /// A launch that failed: diagnostics in the console, an error response,
    /// and the session ends.
    fn fail(&self, request: &Request, error: LaunchError) {
        let positions = self.debugger.lock().positions;
        for mut diagnostic in error.diagnostics {
            diagnostic.line = diagnostic.line.map(|l| positions.line_out(l as u32));
            diagnostic.column = diagnostic.column.map(|c| positions.column_out(c as u32));
            self.client.event(Event::Output(diagnostic));
        }
        self.client.output("stderr", error.message.clone());
        self.refuse(request, error.message);
        self.client.event(Event::Terminated);
    }

    /// Ends the run, if any, as `ending` says.
    async fn stop_run(&mut self, ending: Ending) {
        let Some(mut running) = self.running.take() else { return };
        if ending != Ending::Heard {
            self.debugger.supersede();
        }
        let held = match ending {
            Ending::WentBack(held) => held,
            Ending::Heard | Ending::Replaced => BTreeSet::new(),
        };
        self.debugger.terminate(&held);
        if tokio::time::timeout(TERMINATE_GRACE, &mut running.task).await.is_err() {
            running.task.abort();
            let _ = running.task.await;
            self.debugger.end_run(running.generation, None);
        }
    }
}

/// How a run ends, and what the client hears of it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ending {
    /// Terminated: `exited` and `terminated`.
    Heard,
    /// Replaced by a restart: nothing of its end.
    Replaced,
    /// Replaced by a replay going back in time, which stops these threads
    /// again: nothing, not even that they no longer wait for an answer.
    WentBack(BTreeSet<u32>),
}

fn capabilities() -> Capabilities {
    Capabilities {
        supports_configuration_done_request: true,
        supports_function_breakpoints: true,
        supports_conditional_breakpoints: true,
        supports_hit_conditional_breakpoints: true,
        supports_evaluate_for_hovers: true,
        exception_breakpoint_filters: ExceptionKind::filters(),
        supports_set_variable: true,
        supports_restart_request: true,
        supports_exception_info_request: true,
        supports_log_points: true,
        supports_terminate_request: true,
        supports_breakpoint_locations_request: true,
        supports_delayed_stack_trace_loading: true,
        supports_single_thread_execution_requests: true,
        supports_data_breakpoints: true,
        supports_step_back: true,
        supports_restart_frame: true,
        supports_clipboard_context: true,
    }
}
