//! The flow interpreter: walks the HIR of flows and handlers statement by
//! statement, calling the step hook before each one.

use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use serde_json::{Value, json};
use sr_hir::{OnEscalate, Place, RunStmt, Stmt, StmtId};

use crate::compile::BodySpec;
use crate::event::Payload;
use crate::hook::{Control, Failure, Frame, FrameKind, StepPoint};
use crate::run::conversation;
use crate::run::{EffectAt, ErrorKind, RunError, Runtime, Thread};
use crate::value::{self, display};

/// How a block ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Signal {
    Next,
    Return(Value),
    /// `continue` or `on escalate continue`: the next loop iteration.
    Continue,
    /// `break`: the end of the innermost loop.
    Break,
    /// `exit_loop()` of `streetrace.state`: the end of the innermost loop, or
    /// of the flow (and then of its caller's loop) when it is in none.
    ExitLoop,
    /// `retry step`: run the statements an `on failure:` block guards again.
    Retry(String),
}

/// `on failure:` guards the statements before it in the same body, up to the
/// previous `on failure:`.
fn segments(spec: &BodySpec, stmts: &[StmtId]) -> Vec<(Vec<StmtId>, Option<Vec<StmtId>>)> {
    let mut out = Vec::new();
    let mut current = Vec::new();
    for &id in stmts {
        if let Stmt::OnFailure { body } = &spec.body.stmts[id] {
            out.push((std::mem::take(&mut current), Some(body.clone())));
        } else {
            current.push(id);
        }
    }
    out.push((current, None));
    out
}

/// How often `retry step` may re-run guarded statements.
const MAX_RETRIES: u32 = 3;
/// How deep flows may run flows (`flow main: run main` stops here).
pub(crate) const MAX_FLOW_DEPTH: usize = 32;

impl Runtime {
    /// Runs flow `name` on the thread; its value is what the flow returns.
    pub(crate) async fn run_flow(&self, th: &mut Thread, name: &str) -> Result<Value, RunError> {
        let spec = self
            .program
            .flows
            .get(name)
            .cloned()
            .ok_or_else(|| RunError::failed(format!("flow '{name}' does not exist"), None))?;
        let depth = th.frames.iter().filter(|f| f.kind == FrameKind::Flow).count();
        if depth >= MAX_FLOW_DEPTH {
            let cycle: Vec<&str> =
                th.frames.iter().filter(|f| f.kind == FrameKind::Flow).map(|f| f.name.as_str()).take(4).collect();
            return Err(RunError::failed(
                format!(
                    "flows run flows more than {MAX_FLOW_DEPTH} levels deep (at '{name}'; the chain starts {} …): \
                     is a flow running itself?",
                    cycle.join(" → ")
                ),
                None,
            ));
        }
        let outer = th.enter(format!("flow:{name}"));
        th.frames.push(Frame {
            kind: FrameKind::Flow,
            name: name.to_string(),
            body: Some(spec.clone()),
            stmt: None,
            location: None,
            last_exchange: None,
        });
        th.emitter.emit(Payload::FlowStarted { flow: name.to_string() });
        let caller_last = th.last_result.take();
        let outcome = self.exec_block(th, &spec, &spec.body.root).await;
        let last = std::mem::replace(&mut th.last_result, caller_last);
        th.frames.pop();
        let result = match outcome {
            Ok(Signal::Return(value)) => Ok(value),
            // Without `return`, the value of the last model or tool step.
            Ok(Signal::Next | Signal::Continue) => Ok(last.unwrap_or(Value::Null)),
            Ok(Signal::Break) => Err(RunError::failed("`break` outside a loop", None)),
            Ok(Signal::ExitLoop) => {
                th.exit_loop = true;
                Ok(last.unwrap_or(Value::Null))
            }
            Ok(Signal::Retry(message)) => {
                Err(RunError::failed(format!("retry step outside `on failure:`: {message}"), None))
            }
            Err(e) => Err(e),
        };
        let (value, error) = match &result {
            Ok(value) => (value.clone(), None),
            Err(e) => (Value::Null, Some(e.to_string())),
        };
        th.emitter.emit(Payload::FlowFinished { flow: name.to_string(), result: value, error });
        th.leave(outer);
        result
    }

    /// Runs a handler body (on a thread whose variables are the run's).
    pub(crate) async fn run_handler_body(&self, th: &mut Thread, spec: &BodySpec) -> Result<Signal, RunError> {
        th.frames.push(Frame {
            kind: FrameKind::Handler,
            name: spec.name.to_string(),
            body: Some(spec.clone()),
            stmt: None,
            location: None,
            last_exchange: None,
        });
        let outcome = self.exec_block(th, spec, &spec.body.root).await;
        th.frames.pop();
        outcome
    }

    /// Runs a block. Not boxed: the recursion through nested blocks is boxed
    /// once per statement, in `exec_stmt_here`.
    pub(crate) async fn exec_block(
        &self,
        th: &mut Thread,
        spec: &BodySpec,
        stmts: &[StmtId],
    ) -> Result<Signal, RunError> {
        // Most blocks have no `on failure`: they run as they are, without
        // splitting them into guarded segments.
        if !stmts.iter().any(|&id| matches!(spec.body.stmts[id], Stmt::OnFailure { .. })) {
            return self.exec_seq(th, spec, stmts).await;
        }
        for (guarded, failure) in segments(spec, stmts) {
            let mut attempts = 0;
            loop {
                let guard = u32::from(failure.is_some());
                th.guarded += guard;
                let outcome = self.exec_seq(th, spec, &guarded).await;
                th.guarded -= guard;
                let Some(failure) = &failure else {
                    match outcome? {
                        Signal::Next => break,
                        other => return Ok(other),
                    }
                };
                match outcome {
                    Ok(Signal::Next) => break,
                    Ok(other) => return Ok(other),
                    Err(error) if error.kind == ErrorKind::Failed => {
                        th.failure_reported = false;
                        th.vars.insert("error".to_string(), Value::String(error.message.clone()));
                        match Box::pin(self.exec_block(th, spec, failure)).await? {
                            Signal::Retry(_) if attempts < MAX_RETRIES => attempts += 1,
                            Signal::Retry(message) => {
                                return Err(RunError::failed(
                                    format!("gave up after {MAX_RETRIES} retries: {message}"),
                                    error.location,
                                ));
                            }
                            Signal::Next => break,
                            other => return Ok(other),
                        }
                    }
                    Err(error) => return Err(error),
                }
            }
        }
        Ok(Signal::Next)
    }

    async fn exec_seq(&self, th: &mut Thread, spec: &BodySpec, stmts: &[StmtId]) -> Result<Signal, RunError> {
        for &id in stmts {
            match self.exec_stmt(th, spec, id).await? {
                Signal::Next if std::mem::take(&mut th.exit_loop) => return Ok(Signal::ExitLoop),
                Signal::Next => {}
                other => return Ok(other),
            }
        }
        Ok(Signal::Next)
    }

    /// Calls the hook for a statement; the frame's statement and location are set first.
    async fn before_statement(&self, th: &mut Thread, spec: &BodySpec, id: StmtId) -> Result<(), RunError> {
        let location = self.program.stmt_location(&spec.source, id);
        if let Some(frame) = th.frames.last_mut() {
            frame.stmt = Some(id);
            frame.location = Some(location.clone());
        }
        th.failure_reported = false;
        let step = th.step_at(&self.program, StepPoint::Statement { body: spec, stmt: id }, Some(location));
        let control = self.env.hook.on_step(step).await;
        self.obey(th, control).map(drop)
    }

    /// Runs a statement; a failure is reported to the hook at the innermost
    /// statement it comes from.
    async fn exec_stmt(&self, th: &mut Thread, spec: &BodySpec, id: StmtId) -> Result<Signal, RunError> {
        let outcome = self.exec_stmt_here(th, spec, id).await;
        if let Err(error) = &outcome {
            self.report_failure(th, StepPoint::Statement { body: spec, stmt: id }, error).await?;
        }
        outcome
    }

    /// Tells the hook of a failure, once per failure (not again at each
    /// statement it unwinds through); `Err` when the hook ends the run.
    pub(crate) async fn report_failure(
        &self,
        th: &mut Thread,
        point: StepPoint<'_>,
        error: &RunError,
    ) -> Result<(), RunError> {
        let reported = matches!(error.kind, ErrorKind::Failed | ErrorKind::Diverged);
        if !reported || std::mem::replace(&mut th.failure_reported, true) {
            return Ok(());
        }
        let failure = Failure { message: &error.message, caught: th.guarded > 0 && error.kind == ErrorKind::Failed };
        let step = th.step_at(&self.program, point, error.location.clone());
        let control = self.env.hook.on_failure(step, failure).await;
        self.obey(th, control).map(drop)
    }

    /// What the hook's answer means for the thread: `Err` when it ends the
    /// run; a fork (an edit) makes the thread's later effects live.
    pub(crate) fn obey(&self, th: &Thread, control: Control) -> Result<Control, RunError> {
        match control {
            Control::Terminate => Err(RunError::new(ErrorKind::Terminated, "the run was terminated", None)),
            Control::Fork | Control::Replace(_) => {
                let n = th.effects.load(std::sync::atomic::Ordering::Relaxed);
                if let Err(message) = self.env.journal.fork(&th.key, n) {
                    th.emitter.emit(Payload::Warning { message: message.to_string() });
                }
                Ok(control)
            }
            other => Ok(other),
        }
    }

    fn exec_stmt_here<'a>(
        &'a self,
        th: &'a mut Thread,
        spec: &'a BodySpec,
        id: StmtId,
    ) -> BoxFuture<'a, Result<Signal, RunError>> {
        async move {
            let stmt = &spec.body.stmts[id];
            if matches!(stmt, Stmt::OnFailure { .. }) {
                return Ok(Signal::Next);
            }
            self.before_statement(th, spec, id).await?;
            let at = || Some(self.program.stmt_location(&spec.source, id));
            match stmt {
                Stmt::Assign { target, value } => {
                    let value = self.eval_in_flow(th, spec, id, *value).await?;
                    self.assign(th, target, value).map_err(|m| RunError::failed(m, at()))?;
                }
                Stmt::Run(run) => return self.exec_run(th, spec, id, run).await,
                Stmt::Call(call) => {
                    let input = match call.input {
                        Some(e) => Some(self.eval_in_flow(th, spec, id, e).await?),
                        None => None,
                    };
                    let model = call.model.as_ref().map(|m| m.name.to_string());
                    let value = self.call_llm(th, &call.prompt.name, input, model).await.map_err(|e| e.at(at()))?;
                    th.last_result = Some(value.clone());
                    if let Some(target) = &call.target {
                        self.assign(th, target, value).map_err(|m| RunError::failed(m, at()))?;
                    }
                }
                Stmt::Return(value) => return Ok(Signal::Return(self.eval_in_flow(th, spec, id, *value).await?)),
                Stmt::For { var, iterable, body } => {
                    let items = value::iterate(&self.eval_in_flow(th, spec, id, *iterable).await?)
                        .map_err(|e| RunError::failed(e.0, at()))?;
                    for item in items {
                        self.assign(th, var, item).map_err(|m| RunError::failed(m, at()))?;
                        match self.exec_block(th, spec, body).await? {
                            Signal::Next | Signal::Continue => {}
                            Signal::Break | Signal::ExitLoop => break,
                            other => return Ok(other),
                        }
                    }
                }
                Stmt::Loop { max, body } => {
                    let mut count = 0u64;
                    while max.is_none_or(|max| count < max) {
                        count += 1;
                        match self.exec_block(th, spec, body).await? {
                            Signal::Next | Signal::Continue => {}
                            Signal::Break | Signal::ExitLoop => break,
                            other => return Ok(other),
                        }
                    }
                }
                Stmt::Parallel { body } => self.exec_parallel(th, spec, body).await?,
                Stmt::Match { scrutinee, arms, otherwise } => {
                    let value = self.eval_in_flow(th, spec, id, *scrutinee).await?;
                    // String patterns match strings only, as Python's `match`.
                    let arm = arms
                        .iter()
                        .find(|(pattern, _)| value.as_str() == Some(pattern.as_str()))
                        .map(|(_, s)| *s)
                        .or(*otherwise);
                    if let Some(arm) = arm {
                        return self.exec_stmt(th, spec, arm).await;
                    }
                }
                Stmt::If { condition, body, .. } => {
                    if value::truthy(&self.eval_in_flow(th, spec, id, *condition).await?) {
                        return self.exec_block(th, spec, body).await;
                    }
                }
                Stmt::Push { value, role, target } => {
                    let value = self.eval_in_flow(th, spec, id, *value).await?;
                    let value = match role {
                        Some(role) => json!({"role": role.as_str(), "content": value}),
                        None => value,
                    };
                    let list = th.vars.get_mut(target.name.as_str()).ok_or_else(|| {
                        RunError::failed(format!("`push … to ${}`: the variable is not defined", target.name), at())
                    })?;
                    let mut slot = list;
                    for field in &target.fields {
                        slot = slot
                            .get_mut(field.as_str())
                            .ok_or_else(|| RunError::failed(format!("no field '{field}'"), at()))?;
                    }
                    match slot {
                        Value::Array(items) => items.push(value),
                        other => {
                            return Err(RunError::failed(
                                format!("`push` needs a list, ${} is a {}", target.name, value::type_name(other)),
                                at(),
                            ));
                        }
                    }
                }
                Stmt::Escalate { message } => {
                    let message = message.clone().unwrap_or_else(|| "The workflow needs a human decision.".to_string());
                    return self
                        .escalate_to_human(th, spec, id, message)
                        .await
                        .map_err(|e| e.at(at()))
                        .map(|_| Signal::Next);
                }
                Stmt::Log(e) => {
                    let message = display(&self.eval_in_flow(th, spec, id, *e).await?);
                    th.emitter.emit(Payload::Log { message });
                }
                Stmt::Notify(e) => {
                    let message = display(&self.eval_in_flow(th, spec, id, *e).await?);
                    th.emitter.emit(Payload::Notify { message });
                }
                Stmt::Expr(e) => {
                    self.eval_in_flow(th, spec, id, *e).await?;
                }
                Stmt::Continue => return Ok(Signal::Continue),
                Stmt::Break => return Ok(Signal::Break),
                Stmt::Abort => return Err(RunError::new(ErrorKind::Aborted, "Flow aborted", at())),
                Stmt::RetryStep(e) => return Ok(Signal::Retry(display(&self.eval_in_flow(th, spec, id, *e).await?))),
                Stmt::Mask { .. } | Stmt::Block { .. } | Stmt::Warn { .. } | Stmt::RetryWith { .. } => {
                    return self.exec_guardrail(th, spec, id);
                }
                Stmt::OnFailure { .. } => {}
                Stmt::Missing => return Err(RunError::failed("this statement has a syntax error", at())),
            }
            Ok(Signal::Next)
        }
        .boxed()
    }

    /// Assigns a variable or a field of one, and reports the change.
    pub(crate) fn assign(&self, th: &mut Thread, target: &Place, value: Value) -> Result<(), String> {
        if target.fields.is_empty() {
            th.vars.insert(target.name.to_string(), value.clone());
        } else {
            let base = th
                .vars
                .get_mut(target.name.as_str())
                .ok_or_else(|| format!("variable '${}' is not defined", target.name))?;
            let fields: Vec<String> = target.fields.iter().map(|f| f.to_string()).collect();
            value::set_path(base, &fields, value.clone()).map_err(|e| e.0)?;
        }
        let mut variable = target.name.to_string();
        for field in &target.fields {
            variable.push('.');
            variable.push_str(field.as_str());
        }
        th.emitter.emit(Payload::StateChange { variable, value });
        Ok(())
    }

    async fn exec_run(&self, th: &mut Thread, spec: &BodySpec, id: StmtId, run: &RunStmt) -> Result<Signal, RunError> {
        let at = || Some(self.program.stmt_location(&spec.source, id));
        let input = match run.input {
            Some(e) => Some(self.eval_in_flow(th, spec, id, e).await?),
            None => None,
        };
        if !run.agent {
            let value = self.run_flow(th, &run.callee.name).await.map_err(|e| e.at(at()))?;
            if let Some(target) = &run.target {
                self.assign(th, target, value).map_err(|m| RunError::failed(m, at()))?;
            }
            return Ok(Signal::Next);
        }
        let history = match &run.history {
            Some(place) => Some(th.vars.get(place.name.as_str()).cloned().unwrap_or(Value::Array(Vec::new()))),
            None => None,
        };
        let result = self.run_agent_in_flow(th, &run.callee.name, input, history).await.map_err(|e| e.at(at()))?;
        th.last_result = Some(result.clone());
        conversation::add_reply(th, &run.callee.name, &result);

        // Escalation is checked before the result is assigned, so that
        // `on escalate return $previous` returns the previous value.
        if let Some(action) = &run.on_escalate
            && let Some((op, expected)) = self.escalation_triggered(&run.callee.name, &result)
        {
            th.emitter.emit(Payload::Escalation {
                agent_name: run.callee.name.to_string(),
                result: result.clone(),
                condition_op: op,
                condition_value: expected,
            });
            match action {
                OnEscalate::Return(value) => return Ok(Signal::Return(self.eval_in_flow(th, spec, id, *value).await?)),
                OnEscalate::Abort => return Err(RunError::new(ErrorKind::Aborted, "Escalation triggered abort", at())),
                OnEscalate::Continue => {
                    self.store_agent_result(th, run, result).map_err(|m| RunError::failed(m, at()))?;
                    return Ok(Signal::Continue);
                }
            }
        }
        self.store_agent_result(th, run, result).map_err(|m| RunError::failed(m, at()))?;
        Ok(Signal::Next)
    }

    /// Assigns an agent's result to the target, or to the agent's `produces`.
    fn store_agent_result(&self, th: &mut Thread, run: &RunStmt, result: Value) -> Result<(), String> {
        match &run.target {
            Some(target) => self.assign(th, target, result),
            None => {
                let produces = self.program.agents.get(&run.callee.name).and_then(|a| a.data.produces.as_ref());
                match produces {
                    Some(p) => {
                        self.assign(th, &Place { name: p.name.clone(), fields: Vec::new(), part: p.part }, result)
                    }
                    None => Ok(()),
                }
            }
        }
    }

    /// Runs `agent` from a flow: input from `with`, else the agent's `prompt`
    /// (a variable or a prompt), else the user's input.
    async fn run_agent_in_flow(
        &self,
        th: &mut Thread,
        agent: &str,
        input: Option<Value>,
        history: Option<Value>,
    ) -> Result<Value, RunError> {
        let spec = self
            .program
            .agents
            .get(agent)
            .ok_or_else(|| RunError::failed(format!("agent '{agent}' does not exist"), None))?;
        let input = match input {
            Some(value) => display(&value),
            None => match &spec.data.prompt {
                Some(prompt) => match th.vars.get(prompt.name.as_str()) {
                    Some(value) => display(value),
                    None => crate::eval::render_prompt(&prompt.name, &self.program.prompts, &th.vars, 0)
                        .map_err(|e| RunError::failed(e.0, None))?,
                },
                None => th.vars.get("input_prompt").map(display).unwrap_or_default(),
            },
        };
        let history =
            history.map(|h| super::agent::history_messages(&conversation::for_agent(h, agent))).unwrap_or_default();
        self.run_agent(th, agent, input, history).await
    }

    /// Whether the agent's instruction prompt has an `escalate if` that the
    /// result meets; returns the operator and value for the event.
    fn escalation_triggered(&self, agent: &str, result: &Value) -> Option<(String, String)> {
        let instruction = self.program.agents.get(agent)?.data.instruction.as_ref()?;
        let escalation = self.program.prompts.get(&instruction.name)?.escalation.as_ref()?;
        let text = display(result);
        let expected = Value::String(escalation.value.clone());
        let (triggered, op) = match escalation.op {
            sr_hir::EscalationOp::Normalized => (value::similar(result, &expected), "~"),
            sr_hir::EscalationOp::Equals => (text == escalation.value, "=="),
            sr_hir::EscalationOp::NotEquals => (text != escalation.value, "!="),
            sr_hir::EscalationOp::Contains => (text.contains(&escalation.value), "contains"),
        };
        triggered.then(|| (op.to_string(), escalation.value.clone()))
    }

    /// The branches' outcome: the first failure cancels the others at once
    /// (in a served run once they have emitted what the recorded run's did
    /// before it cancelled them: `gate`'s recorded order); a pause lets
    /// their calls in flight end first (`journal::pausing`: they start no
    /// other), so that no call is cut off but by a crash, and in a served run
    /// lets them emit what the recorded run's did before its pause.
    async fn join_branches<T>(
        &self,
        block: &EffectAt,
        gate: &crate::event::Gate,
        branches: impl Iterator<Item = BoxFuture<'_, Result<T, RunError>>>,
    ) -> Result<(), RunError> {
        let mut running: FuturesUnordered<_> =
            (0u32..).zip(branches).map(|(index, branch)| branch.map(move |outcome| (index, outcome))).collect();
        let mut under_way: Vec<u32> = (0..running.len() as u32).collect();
        let paused = loop {
            let Some((index, outcome)) = running.next().await else { return Ok(()) };
            under_way.retain(|&i| i != index);
            match outcome {
                Ok(_) => {}
                Err(e) if e.kind == ErrorKind::Paused => break e,
                Err(e) if e.kind == ErrorKind::Terminated => return Err(e),
                Err(e) => {
                    gate.fail(index);
                    self.siblings_catch_up(block, gate, &mut running, under_way).await;
                    return Err(e);
                }
            }
        };
        // Already begun where the branch paused (`Runtime::pause`); what the
        // other branches do now ends with the pause.
        self.env.journal.pause_begun();
        let drain = async { while running.next().await.is_some() {} };
        let ended = async { tokio::join!(self.env.journal.calls_ended(), gate.caught_up()) };
        tokio::select! {
            _ = ended => {}
            () = drain => {}
        }
        Err(paused)
    }

    /// After a branch failed: a replay's other branches (`under_way`) go on
    /// until they have emitted what the recorded run's did before the failure
    /// cancelled them (`gate`'s recorded order), or have ended, or wait where
    /// the recorded run cancelled them (parked: they have nothing more to
    /// emit). Caught up first: a live run's branches are not polled again
    /// (one could pause the run, see `Runtime::pause`).
    async fn siblings_catch_up<F: std::future::Future<Output = (u32, O)> + Unpin, O>(
        &self,
        block: &EffectAt,
        gate: &crate::event::Gate,
        running: &mut FuturesUnordered<F>,
        mut under_way: Vec<u32>,
    ) {
        let branches = format!("{}/{}.", block.thread, block.n);
        loop {
            let waiting = under_way.clone();
            tokio::select! {
                biased;
                () = gate.caught_up() => return,
                () = self.env.journal.all_parked(&branches, &waiting) => return,
                ended = running.next() => match ended {
                    Some((index, _)) => under_way.retain(|&i| i != index),
                    None => return,
                },
            }
        }
    }

    /// `parallel do`: every statement is a branch on its own thread with a copy
    /// of the variables; branches run concurrently, their assignments are merged
    /// in branch order, and the first failure cancels the others.
    ///
    /// The block is an effect of the thread: its branches are named after it
    /// in the journal, which also keeps the order their events came in (a
    /// replay emits them in that order, and makes their file changes again in
    /// the order the recorded run made them).
    async fn exec_parallel(&self, th: &mut Thread, spec: &BodySpec, body: &[StmtId]) -> Result<(), RunError> {
        let before = th.vars.clone();
        let turns = conversation::len(&before);
        let block = th.next_effect();
        let gate = crate::event::Gate::new(body.len(), self.env.journal.interleaving(&block));
        // A served block's branches get the thread ids they had.
        let recorded = self.env.journal.branch_threads(&block).filter(|ids| ids.len() == body.len());
        th.reserve_threads(self.env.journal.last_served_thread());
        let mut branches: Vec<Thread> = (0..body.len())
            .map(|index| {
                th.branch(&block, index as u32, &gate, recorded.as_ref().and_then(|ids| ids.get(index).copied()))
            })
            .collect();
        let parent = th.id;
        // How many branches ended well or wait to be cancelled (below, and
        // at a call the recorded run cancelled: `Journal::siblings_settled`).
        let settled_tx = std::sync::Arc::new(tokio::sync::watch::channel(0usize).0);
        let _under_way = self.env.journal.block_under_way(&block, (settled_tx.clone(), body.len()));
        let settled_tx = &settled_tx;
        let futures = branches.iter_mut().zip(body).map(|(branch, &stmt)| {
            async move {
                self.env.hook.on_thread(branch.id, parent, true);
                let outcome = self.exec_stmt(branch, spec, stmt).await;
                let outcome = match outcome {
                    // The recorded run's block cancelled this branch before the
                    // effect it reached (a sibling failed, or the run paused):
                    // it waits for the sibling's failure or the pause to cancel
                    // it again. Should every other branch end without failing,
                    // it is a divergence after all.
                    Err(e) if e.kind == ErrorKind::Diverged && self.env.journal.cut_short(&branch.key) => {
                        let mut settled = settled_tx.subscribe();
                        settled_tx.send_modify(|n| *n += 1);
                        // Parked: time travel takes its next step elsewhere.
                        let parked = self.env.journal.parked::<()>(&branch.key);
                        tokio::select! {
                            () = parked => {}
                            _ = settled.wait_for(|&n| n == body.len()) => {}
                        }
                        Err(e)
                    }
                    Ok(signal) => {
                        settled_tx.send_modify(|n| *n += 1);
                        Ok(signal)
                    }
                    failed => failed,
                };
                self.env.hook.on_thread(branch.id, parent, false);
                outcome
            }
            .boxed()
        });
        let joined = self.join_branches(&block, &gate, futures).await;
        th.emitter.release(gate.finish());
        let threads: Vec<u32> = branches.iter().map(|b| b.id).collect();
        let cut = matches!(&joined, Err(e) if matches!(e.kind, ErrorKind::Paused | ErrorKind::Terminated));
        let settled = self.env.journal.record_interleaving(&block, &gate.order(), &threads, cut);
        // A block cut short (time travel stops a replay at its moment) keeps
        // the files its branches' served tools made so far: settling would
        // make every change the branches recorded, later ones too.
        let settled = settled.and_then(|()| if cut { Ok(()) } else { self.env.journal.settle_block(&block) });
        // A branch's failure was reported on the branch.
        th.failure_reported |= branches.iter().any(|b| b.failure_reported);
        joined?;
        settled.map_err(|e| RunError::failed(e.to_string(), None))?;
        // Each branch's replies join the conversation, in branch order.
        let replies: Option<Vec<Vec<Value>>> =
            turns.map(|n| branches.iter().map(|b| conversation::added(&b.vars, n)).collect());
        for branch in branches {
            if branch.last_result.is_some() {
                th.last_result = branch.last_result;
            }
            th.exit_loop |= branch.exit_loop;
            for (name, value) in branch.vars {
                if before.get(&name) != Some(&value) {
                    th.vars.insert(name, value);
                }
            }
        }
        if let (Some(n), Some(replies)) = (turns, replies) {
            conversation::merge_branches(th, n, &replies);
        }
        Ok(())
    }
}
