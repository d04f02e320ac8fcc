//! Breakpoints: line breakpoints resolved to statements (or prompt bodies),
//! function breakpoints on flows and agents, data breakpoints. Requests are
//! kept as the client sent them and resolved again whenever the program is
//! (re)loaded, with the same ids.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sr_syntax::TextSize;

use crate::data::{DataBreakpoints, Watched};
use crate::exceptions::ExceptionKind;
use crate::prompts::{PromptBreakpoint, prompt_at};
use crate::protocol::{Breakpoint, DataBreakpoint, FunctionBreakpoint, SourceBreakpoint};
use crate::source::{Loaded, Positions, canonical, resolve};
use crate::trigger::Trigger;

/// A verified line breakpoint: a statement, by file and offset.
#[derive(Debug, Clone)]
pub struct LineBreakpoint {
    pub id: i64,
    pub file: usize,
    pub offset: TextSize,
    pub line: u32,
    pub trigger: Trigger,
}

/// A verified function breakpoint: entering a flow or agent of that name.
#[derive(Debug, Clone)]
pub struct NamedBreakpoint {
    pub id: i64,
    pub name: String,
    pub trigger: Trigger,
}

/// The breakpoints of one source as requested, and their ids.
#[derive(Debug, Clone)]
struct Requested {
    path: String,
    breakpoints: Vec<(i64, SourceBreakpoint)>,
}

#[derive(Debug, Default)]
pub struct Breakpoints {
    last_id: i64,
    sources: BTreeMap<PathBuf, Requested>,
    functions: Vec<(i64, FunctionBreakpoint)>,
    pub lines: Vec<LineBreakpoint>,
    pub named: Vec<NamedBreakpoint>,
    pub data: DataBreakpoints,
    pub prompts: Vec<PromptBreakpoint>,
}

impl Breakpoints {
    pub fn next_id(&mut self) -> i64 {
        self.last_id += 1;
        self.last_id
    }

    /// Replaces the breakpoints of a source.
    pub fn set_source(
        &mut self,
        loaded: Option<&Loaded>,
        path: &str,
        requested: Vec<SourceBreakpoint>,
        positions: Positions,
    ) -> Vec<Breakpoint> {
        // One file under two spellings (a symlink, `..`) is one set of breakpoints.
        let key = canonical(Path::new(path));
        let breakpoints = requested.into_iter().map(|b| (self.next_id(), b)).collect();
        self.sources.insert(key.clone(), Requested { path: path.to_string(), breakpoints });
        self.resolve_source(loaded, &key, positions)
    }

    pub fn set_functions(
        &mut self,
        loaded: Option<&Loaded>,
        requested: Vec<FunctionBreakpoint>,
        positions: Positions,
    ) -> Vec<Breakpoint> {
        self.functions = requested.into_iter().map(|b| (self.next_id(), b)).collect();
        self.resolve_functions(loaded, positions)
    }

    /// Resolves everything again against a (re)loaded program; the result is
    /// every breakpoint's new state, for `breakpoint` events.
    pub fn reload(&mut self, loaded: &Loaded, positions: Positions) -> Vec<Breakpoint> {
        let keys: Vec<PathBuf> = self.sources.keys().cloned().collect();
        let mut out = Vec::new();
        for key in keys {
            out.extend(self.resolve_source(Some(loaded), &key, positions));
        }
        out.extend(self.resolve_functions(Some(loaded), positions));
        out
    }

    /// Replaces the data breakpoints; a `dataId` is a variable's name.
    pub fn set_data(&mut self, requested: Vec<DataBreakpoint>) -> Vec<Breakpoint> {
        self.data.watched.clear();
        let mut out = Vec::new();
        for request in requested {
            let id = self.next_id();
            let variable = request.data_id.trim().trim_start_matches('$').to_string();
            let trigger = Trigger::new(request.condition.as_deref(), request.hit_condition.as_deref(), None);
            let valid = !variable.is_empty() && variable.chars().all(|c| c.is_alphanumeric() || c == '_');
            match (valid, trigger) {
                (true, Ok(trigger)) => {
                    self.data.watched.push(Watched { id, variable, trigger });
                    out.push(Breakpoint { id: Some(id), verified: true, ..Breakpoint::default() });
                }
                (false, _) => out.push(Breakpoint::failed(id, format!("'{}' is not a flow variable", request.data_id))),
                (true, Err(e)) => out.push(Breakpoint::failed(id, e)),
            }
        }
        out
    }

    /// Hit counts start again with each run.
    pub fn reset_hits(&mut self) {
        self.lines.iter_mut().for_each(|b| b.trigger.reset());
        self.named.iter_mut().for_each(|b| b.trigger.reset());
        self.prompts.iter_mut().for_each(|b| b.trigger.reset());
        self.data.watched.iter_mut().for_each(|b| b.trigger.reset());
        self.data.clear_writes();
    }

    fn resolve_source(&mut self, loaded: Option<&Loaded>, key: &Path, positions: Positions) -> Vec<Breakpoint> {
        let Some(requested) = self.sources.get(key).cloned() else { return Vec::new() };
        let file = loaded.and_then(|l| l.file_of(Path::new(&requested.path)));
        if let Some(file) = file {
            self.lines.retain(|b| b.file != file);
            self.prompts.retain(|b| b.file != file);
        }
        let sites = match (loaded, file) {
            (Some(loaded), Some(file)) => loaded.sites(file),
            _ => Vec::new(),
        };
        let mut out = Vec::new();
        for (id, request) in requested.breakpoints {
            let unverified = |reason: &str, message: String| Breakpoint {
                id: Some(id),
                verified: false,
                message: Some(message),
                line: Some(request.line),
                reason: Some(reason.to_string()),
                ..Breakpoint::default()
            };
            let (Some(loaded), Some(file)) = (loaded, file) else {
                out.push(match loaded {
                    None => unverified("pending", "the program is not loaded yet".to_string()),
                    Some(_) => unverified("failed", format!("{} is not part of the program", requested.path)),
                });
                continue;
            };
            let trigger = match Trigger::new(
                request.condition.as_deref(),
                request.hit_condition.as_deref(),
                request.log_message.as_deref(),
            ) {
                Ok(trigger) => trigger,
                Err(e) => {
                    out.push(unverified("failed", e));
                    continue;
                }
            };
            let column = request.column.and_then(|c| positions.column_in(c));
            let line = positions.line_in(request.line);
            let Some(site) = line.and_then(|line| resolve(&sites, line, column)) else {
                match line.and_then(|line| prompt_at(&loaded.program, file, line)) {
                    Some(prompt) => {
                        self.prompts.push(PromptBreakpoint { id, file, prompt, trigger });
                        out.push(Breakpoint {
                            id: Some(id),
                            verified: true,
                            source: loaded.source(file),
                            line: Some(request.line),
                            ..Breakpoint::default()
                        });
                    }
                    None => out.push(unverified("failed", "no flow or handler statement on this line".to_string())),
                }
                continue;
            };
            self.lines.push(LineBreakpoint { id, file, offset: site.offset, line: site.line, trigger });
            out.push(Breakpoint {
                id: Some(id),
                verified: true,
                source: loaded.source(file),
                line: Some(positions.line_out(site.line)),
                column: Some(positions.column_out(site.column)),
                ..Breakpoint::default()
            });
        }
        out
    }

    fn resolve_functions(&mut self, loaded: Option<&Loaded>, positions: Positions) -> Vec<Breakpoint> {
        self.named.clear();
        let mut out = Vec::new();
        for (id, request) in self.functions.clone() {
            let unverified = |reason: &str, message: String| Breakpoint {
                id: Some(id),
                verified: false,
                message: Some(message),
                reason: Some(reason.to_string()),
                ..Breakpoint::default()
            };
            let Some(loaded) = loaded else {
                out.push(unverified("pending", "the program is not loaded yet".to_string()));
                continue;
            };
            let program = &loaded.program;
            let name = request.name.trim();
            let source = match (program.flows.get(name), program.agents.get(name)) {
                (Some(flow), _) => &flow.source,
                (None, Some(agent)) => &agent.source,
                (None, None) => {
                    out.push(unverified("failed", format!("there is no flow or agent named '{name}'")));
                    continue;
                }
            };
            let trigger = match Trigger::new(request.condition.as_deref(), request.hit_condition.as_deref(), None) {
                Ok(trigger) => trigger,
                Err(e) => {
                    out.push(unverified("failed", e));
                    continue;
                }
            };
            self.named.push(NamedBreakpoint { id, name: name.to_string(), trigger });
            let (line, column) = loaded.item_position(source);
            out.push(Breakpoint {
                id: Some(id),
                verified: true,
                source: loaded.source(source.file),
                line: Some(positions.line_out(line)),
                column: Some(positions.column_out(column)),
                ..Breakpoint::default()
            });
        }
        out
    }
}

/// The answer to `setExceptionBreakpoints`: one entry per filter.
pub fn exception_filters(filters: &[String]) -> (Vec<ExceptionKind>, Vec<Breakpoint>) {
    let mut kinds = Vec::new();
    let answers = filters
        .iter()
        .map(|id| match ExceptionKind::from_id(id) {
            Some(kind) => {
                kinds.push(kind);
                Breakpoint { verified: true, ..Breakpoint::default() }
            }
            None => Breakpoint {
                verified: false,
                message: Some(format!("unknown exception filter '{id}'")),
                reason: Some("failed".to_string()),
                ..Breakpoint::default()
            },
        })
        .collect();
    (kinds, answers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_exception_filters_are_unverified() {
        let (kinds, answers) = exception_filters(&["llm-error".into(), "segfault".into()]);
        assert_eq!(kinds, vec![ExceptionKind::LlmError]);
        assert!(answers[0].verified);
        assert!(!answers[1].verified);
    }
}
