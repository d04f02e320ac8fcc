//! Requests that look at (and setVariable, change) a stopped thread: stack
//! trace, scopes, variables, evaluate, exception info.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use sr_runtime::value::{display, type_name};

use crate::answer::Console;
use crate::debugger::{Debugger, State, Stopped, dap_thread, thread_number};
use crate::evaluate::{Expression, parse_value};
use crate::protocol::{
    DataBreakpointInfoArguments, DataBreakpointInfoBody, EvaluateArguments, EvaluateResponse, ExceptionInfoResponse,
    Scope, SetVariableArguments, SetVariableBody, StackFrame, StackTraceArguments, Variable, VariablesArguments,
};
pub(crate) use crate::request_error::InspectError;
use crate::snapshot::Call;
use crate::travel::{At, Back, Held, Quiet, Travel, is_future};
use crate::variables::{
    self, Container, Handle, Key, Node, Root, child_expression, counts, is_container, page, preview,
};

impl Debugger {
    pub fn stack_trace(&self, args: StackTraceArguments) -> Result<(Vec<StackFrame>, usize), InspectError> {
        let st = self.lock();
        let stopped = stopped(&st, args.thread_id)?;
        let total = stopped.frames.len();
        let frames = page(stopped.frames.iter().collect(), args.start_frame, args.levels);
        let frames = frames
            .into_iter()
            .map(|f| StackFrame {
                id: f.id,
                name: f.name.clone(),
                source: f.file.and_then(|file| st.loaded.as_ref()?.source(file)),
                line: st.positions.line_out(f.line),
                column: st.positions.column_out(f.column),
                presentation_hint: f.subtle.then(|| "subtle".to_string()),
            })
            .collect();
        Ok((frames, total))
    }

    pub fn scopes(&self, frame_id: i64) -> Result<Vec<Scope>, InspectError> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let Some(Handle::Frame { thread, index }) = st.run.handles.get(frame_id).cloned() else {
            return Err(InspectError::NoFrame(frame_id));
        };
        let stopped = st.run.stopped.get(&thread).ok_or(InspectError::MovedOn)?;
        let frame = stopped.frames.get(index).ok_or(InspectError::MovedOn)?;
        let mut scopes = Vec::new();
        for spec in &frame.scopes {
            let (named, indexed) = match &spec.root {
                Root::Vars => (Some(stopped.snapshot.vars.len() as i64), None),
                Root::Call => stopped.snapshot.call.as_ref().map_or((None, None), |c| counts(&c.details)),
                Root::Value(value) => counts(value),
            };
            let reference =
                st.run.handles.add(Handle::Node(Node { thread, root: spec.root.clone(), path: Vec::new() }));
            scopes.push(Scope {
                name: spec.name.to_string(),
                presentation_hint: spec.hint.map(str::to_string),
                variables_reference: reference,
                named_variables: named,
                indexed_variables: indexed,
                expensive: false,
            });
        }
        Ok(scopes)
    }

    pub fn variables(&self, args: VariablesArguments) -> Result<Vec<Variable>, InspectError> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let node = node(st, args.variables_reference)?;
        let stopped = st.run.stopped.get(&node.thread).ok_or(InspectError::MovedOn)?;
        let container = match &node.root {
            Root::Vars => Container::Vars(&stopped.snapshot.vars),
            Root::Call => Container::Value(&stopped.snapshot.call.as_ref().ok_or(InspectError::CallGone)?.details),
            Root::Value(value) => Container::Value(value),
        };
        let container = container.walk(&node.path).ok_or(InspectError::ValueGone)?;
        let parent = path_expression(&node.path);
        let entries = page(container.entries(args.filter.as_deref()), args.start, args.count);
        let handles = &mut st.run.handles;
        Ok(entries
            .into_iter()
            .map(|(key, value)| {
                let evaluate_name = match node.root {
                    Root::Vars if node.path.is_empty() => child_expression(None, &key),
                    Root::Vars => parent.as_deref().and_then(|p| child_expression(Some(p), &key)),
                    Root::Call | Root::Value(_) => None,
                };
                let mut path = node.path.clone();
                path.push(key.clone());
                let child = Node { thread: node.thread, root: node.root.clone(), path };
                variables::variable(&key, &value, evaluate_name, || handles.add(Handle::Node(child)))
            })
            .collect())
    }

    /// Evaluates a DSL expression against the variables of the frame's
    /// thread (all frames of a thread share one namespace); without a frame,
    /// against the thread waiting for a human, else the first stopped one.
    /// In `clipboard` context the result is the whole value, unabridged.
    /// Evaluating never answers `escalate to human`: in the debug console
    /// (`repl`), `:answer TEXT` does (see `answer`).
    pub fn evaluate(&self, args: EvaluateArguments) -> Result<EvaluateResponse, InspectError> {
        if args.context.as_deref() == Some("repl") {
            let line = Console::read(&args.expression);
            if !matches!(line, Console::Expression(_)) {
                let thread = match args.frame_id {
                    Some(id) => Some(self.frame_thread(id)?),
                    None => None,
                };
                let asking = thread.filter(|t| self.lock().run.stopped.get(t).is_some_and(|s| s.question.is_some()));
                return self
                    .console_command(asking.map(dap_thread), line)
                    .map_err(|e| InspectError::Console(Box::new(e)));
            }
        }
        let mut guard = self.lock();
        let st = &mut *guard;
        let thread = match args.frame_id {
            Some(id) => match st.run.handles.get(id) {
                Some(Handle::Frame { thread, .. }) => *thread,
                _ => return Err(InspectError::NoFrame(id)),
            },
            None => {
                let asking = st.run.stopped.iter().find(|(_, s)| s.question.is_some()).map(|(t, _)| *t);
                asking.or(st.run.stopped.keys().next().copied()).ok_or(InspectError::NoStoppedThread)?
            }
        };
        let stopped = st.run.stopped.get(&thread).ok_or(InspectError::NoStoppedThread)?;
        let value = Expression::parse(&args.expression)
            .and_then(|e| e.eval(&stopped.snapshot.vars))
            .map_err(InspectError::Expression)?;
        let (named, indexed) = counts(&value);
        let reference = if is_container(&value) {
            st.run.handles.add(Handle::Node(Node { thread, root: Root::Value(Arc::new(value.clone())), path: vec![] }))
        } else {
            0
        };
        // Copy Value (`clipboard`) gets the whole value; elsewhere long values are cut.
        let result = if args.context.as_deref() == Some("clipboard") { display(&value) } else { preview(&value) };
        Ok(EvaluateResponse {
            result,
            kind: type_name(&value).to_string(),
            variables_reference: reference,
            named_variables: named,
            indexed_variables: indexed,
        })
    }

    /// Sets a variable (or a field or item of one) of a stopped thread, or a
    /// part of the model call it is about to make (which must stay a valid
    /// request); the value is a DSL expression or JSON. The thread gets it
    /// when it resumes.
    pub fn set_variable(&self, args: SetVariableArguments) -> Result<SetVariableBody, InspectError> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let node = node(st, args.variables_reference)?;
        let stopped = st.run.stopped.get_mut(&node.thread).ok_or(InspectError::MovedOn)?;
        let snapshot = &mut stopped.snapshot;
        let value = parse_value(&args.value, &snapshot.vars).map_err(InspectError::Expression)?;
        let container = match &node.root {
            Root::Vars => {
                variables::set(&mut snapshot.vars, &node.path, &args.name, value.clone())
                    .map_err(InspectError::Edit)?;
                stopped.edited = true;
                let name = match node.path.first() {
                    Some(Key::Field(name)) => name.clone(),
                    _ => args.name.clone(),
                };
                stopped.edited_names.insert(name);
                Container::Vars(&snapshot.vars)
            }
            Root::Call => {
                let call = snapshot.call.as_mut().and_then(|c| Some((c.editable?, c)));
                let (kind, call) = call.ok_or(InspectError::CallNotEditable)?;
                let mut details = call.details.clone();
                variables::set_in(&mut details, &node.path, &args.name, value.clone()).map_err(InspectError::Edit)?;
                Call::parse(kind, &details).map_err(InspectError::Edit)?;
                call.details = details;
                call.edited = true;
                Container::Value(&call.details)
            }
            Root::Value(_) => return Err(InspectError::NotEditable),
        };
        let key = match container.walk(&node.path) {
            Some(Container::Value(Value::Array(_))) => {
                let index = args.name.trim_matches(['[', ']']).parse().map_err(|_| InspectError::NotAnIndex)?;
                Key::Index(index)
            }
            _ => Key::Field(args.name.clone()),
        };
        let (named, indexed) = counts(&value);
        let reference = if is_container(&value) {
            let mut path = node.path.clone();
            path.push(key);
            st.run.handles.add(Handle::Node(Node { thread: node.thread, root: node.root.clone(), path }))
        } else {
            0
        };
        Ok(SetVariableBody {
            value: preview(&value),
            kind: type_name(&value).to_string(),
            variables_reference: reference,
            named_variables: named,
            indexed_variables: indexed,
        })
    }

    /// A data breakpoint can watch a variable of a *Variables* scope (not a
    /// field of one, nor a value in another scope).
    pub fn data_breakpoint_info(&self, args: DataBreakpointInfoArguments) -> DataBreakpointInfoBody {
        let st = self.lock();
        let on_variables = match args.variables_reference.and_then(|r| st.run.handles.get(r)) {
            Some(Handle::Node(Node { root: Root::Vars, path, .. })) => path.is_empty(),
            _ => false,
        };
        let name = args.name.trim_start_matches('$');
        match on_variables {
            true => DataBreakpointInfoBody {
                data_id: Some(name.to_string()),
                description: format!("${name} is assigned"),
                access_types: Some(vec!["write".to_string()]),
                can_persist: true,
            },
            false => DataBreakpointInfoBody {
                data_id: None,
                description: "only variables of the Variables scope can be watched".to_string(),
                access_types: None,
                can_persist: false,
            },
        }
    }

    pub fn exception_info(&self, thread_id: i64) -> Result<ExceptionInfoResponse, InspectError> {
        let st = self.lock();
        let exception = stopped(&st, thread_id)?.exception.as_ref().ok_or(InspectError::NoException)?;
        Ok(ExceptionInfoResponse {
            exception_id: exception.kind.id().to_string(),
            description: exception.description.clone(),
            break_mode: if exception.unhandled { "unhandled" } else { "always" }.to_string(),
        })
    }
}

impl Debugger {
    /// The runtime thread of a frame id.
    fn frame_thread(&self, id: i64) -> Result<u32, InspectError> {
        match self.lock().run.handles.get(id) {
            Some(Handle::Frame { thread, .. }) => Ok(*thread),
            _ => Err(InspectError::NoFrame(id)),
        }
    }

    /// The plan to go back from where stopped thread `thread_id` is (the
    /// frame's thread for [`Back::Frame`]): that thread to the point `back`
    /// leads to, every other thread to where it is.
    pub fn travel_target(&self, thread_id: Option<i64>, back: Back) -> Result<Travel, InspectError> {
        let st = self.lock();
        let (thread, to, reason) = destination(&st, thread_id, &back)?;
        let lineage: HashMap<u32, u64> = match back {
            Back::To { lineage, .. } => lineage.into_iter().collect(),
            _ => HashMap::new(),
        };
        let mut travel = Travel::default();
        let mut targets = HashMap::from([(thread, At { point: to, inside: false })]);
        let others = st.run.stopped.iter().filter(|(t, _)| **t != thread && !lineage.contains_key(t));
        targets.extend(others.map(|(t, s)| (*t, s.at)));
        targets.extend(lineage.iter().map(|(t, point)| (*t, At { point: *point, inside: true })));
        let known = std::iter::once(0).chain(st.run.threads.iter().copied()).chain(st.run.ended.iter().copied());
        for t in known.filter(|t| !is_future(*t, &st.run.born, &targets)) {
            travel.known.insert(t);
            let quiet = match st.run.stopped.get(&t) {
                _ if t == thread => Quiet::Stop { point: to, reason },
                _ if lineage.contains_key(&t) => Quiet::Run { point: lineage[&t] },
                Some(stopped) => Quiet::Hold {
                    at: stopped.at,
                    held: Box::new(Held {
                        stopped: stopped.event.clone(),
                        exception: stopped.exception.clone(),
                        answer: stopped.answer.clone(),
                        edited: stopped
                            .edited
                            .then(|| (stopped.snapshot.vars.clone(), stopped.edited_names.iter().cloned().collect())),
                        live: stopped.live,
                    }),
                },
                None if st.run.ended.contains(&t) => Quiet::Ended,
                None => match st.run.points.get(&t) {
                    Some(&point) => {
                        if let Some(step) = st.run.stepping.get(&t) {
                            travel.stepping.insert(t, *step);
                        }
                        Quiet::Run { point }
                    }
                    // Before its first point: nothing to bring back.
                    None => continue,
                },
            };
            travel.plan.insert(t, quiet);
        }
        // Going to a fork, the thread and its ancestors may be ones the run
        // has not started.
        travel.plan.entry(thread).or_insert(Quiet::Stop { point: to, reason });
        for (t, point) in lineage {
            travel.plan.entry(t).or_insert(Quiet::Run { point });
        }
        Ok(travel)
    }
}

/// The thread that goes back, the point it goes to and the reason it stops there.
fn destination(st: &State, thread_id: Option<i64>, back: &Back) -> Result<(u32, u64, &'static str), InspectError> {
    let here = || -> Result<(u32, &Stopped), InspectError> {
        let thread = thread_id.and_then(thread_number).ok_or(InspectError::NoThreadId)?;
        let stopped = st.run.stopped.get(&thread).ok_or(InspectError::NotStopped(dap_thread(thread)))?;
        Ok((thread, stopped))
    };
    match back {
        Back::Step => {
            let (thread, stopped) = here()?;
            // Stopped inside a point (a failure, a question): back to before it.
            match stopped.at.point - u64::from(!stopped.at.inside) {
                0 if thread == 0 => Err(InspectError::FirstPoint),
                0 => Err(InspectError::FirstPointOfBranch(thread)),
                to => Ok((thread, to, "step")),
            }
        }
        Back::Continue => {
            let (thread, stopped) = here()?;
            let at = stopped.at;
            let earlier = |(t, p): &&(u32, u64)| *t == thread && (*p < at.point || at.inside && *p == at.point);
            Ok(match st.breakpoint_stops.iter().filter(earlier).map(|(_, p)| *p).max() {
                Some(to) => (thread, to, "breakpoint"),
                None => (thread, 1, "step"),
            })
        }
        Back::Frame(id) => {
            let Some(Handle::Frame { thread, index }) = st.run.handles.get(*id) else {
                return Err(InspectError::NoFrame(*id));
            };
            let stopped = st.run.stopped.get(thread).ok_or(InspectError::MovedOn)?;
            // Shown innermost first, a call above the frame that makes it.
            let call = usize::from(stopped.snapshot.call.is_some());
            let to = match index.checked_sub(call) {
                None => stopped.at.point,
                Some(i) => *stopped.frame_starts.iter().rev().nth(i).ok_or(InspectError::MovedOn)?,
            };
            Ok((*thread, to, "restart"))
        }
        Back::To { thread, point, .. } => Ok((*thread, *point, "goto")),
    }
}

fn stopped(st: &State, thread_id: i64) -> Result<&Stopped, InspectError> {
    thread_number(thread_id).and_then(|t| st.run.stopped.get(&t)).ok_or(InspectError::NotStopped(thread_id))
}

fn node(st: &State, reference: i64) -> Result<Node, InspectError> {
    match st.run.handles.get(reference) {
        Some(Handle::Node(node)) => Ok(node.clone()),
        _ => Err(InspectError::NoVariable(reference)),
    }
}

/// `$a.b.c` for a path of plain fields.
fn path_expression(path: &[Key]) -> Option<String> {
    let mut expression: Option<String> = None;
    for key in path {
        expression = Some(child_expression(expression.as_deref(), key)?);
    }
    expression
}
