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
use crate::source::{Loaded, Positions, identity, resolve};
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

/// The breakpoints of one spelling of a source as requested, with their ids.
type Requested = Vec<(i64, SourceBreakpoint)>;

#[derive(Debug, Default)]
pub struct Breakpoints {
    last_id: i64,
    /// By the file's identity (see [`identity`]), then by the spelling the
    /// client used: a file open under two spellings (a symlink, `./x.sr`,
    /// `a/../x.sr`) has the breakpoints of both.
    sources: BTreeMap<PathBuf, BTreeMap<String, Requested>>,
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

    /// Replaces the breakpoints of a source as the client spells it; those
    /// set under its other spellings stay.
    pub fn set_source(
        &mut self,
        loaded: Option<&Loaded>,
        path: &str,
        requested: Vec<SourceBreakpoint>,
        positions: Positions,
    ) -> Vec<Breakpoint> {
        let key = identity(Path::new(path));
        let breakpoints = requested.into_iter().map(|b| (self.next_id(), b)).collect();
        self.sources.entry(key.clone()).or_default().insert(path.to_string(), breakpoints);
        let mut resolved = self.resolve_source(loaded, &key, positions);
        resolved.remove(path).unwrap_or_default()
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
            out.extend(self.resolve_source(Some(loaded), &key, positions).into_values().flatten());
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
                (true, Err(e)) => out.push(Breakpoint::failed(id, e.to_string())),
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

    /// Resolves every spelling's breakpoints of the file `key` names, on
    /// each of the program's files that is it; the answers by spelling.
    fn resolve_source(
        &mut self,
        loaded: Option<&Loaded>,
        key: &Path,
        positions: Positions,
    ) -> BTreeMap<String, Vec<Breakpoint>> {
        let Some(spellings) = self.sources.get(key).cloned() else { return BTreeMap::new() };
        let files = loaded.map(|l| l.files_of(key)).unwrap_or_default();
        self.lines.retain(|b| !files.contains(&b.file));
        self.prompts.retain(|b| !files.contains(&b.file));
        let mut out = BTreeMap::new();
        for (path, requested) in spellings {
            let answers = requested
                .into_iter()
                .map(|(id, request)| self.resolve_line(loaded, &files, &path, id, request, positions));
            out.insert(path.clone(), answers.collect());
        }
        out
    }

    /// One line breakpoint, on every file in `files` (one file loaded
    /// under two spellings is two files of the program).
    fn resolve_line(
        &mut self,
        loaded: Option<&Loaded>,
        files: &[usize],
        path: &str,
        id: i64,
        request: SourceBreakpoint,
        positions: Positions,
    ) -> Breakpoint {
        let unverified = |reason: &str, message: String| Breakpoint {
            id: Some(id),
            verified: false,
            message: Some(message),
            line: Some(request.line),
            reason: Some(reason.to_string()),
            ..Breakpoint::default()
        };
        let loaded = match (loaded, files) {
            (None, _) => return unverified("pending", "the program is not loaded yet".to_string()),
            (Some(_), []) => {
                return unverified("failed", format!("{path} is not part of the program"));
            }
            (Some(loaded), _) => loaded,
        };
        let trigger = match Trigger::new(
            request.condition.as_deref(),
            request.hit_condition.as_deref(),
            request.log_message.as_deref(),
        ) {
            Ok(trigger) => trigger,
            Err(e) => return unverified("failed", e.to_string()),
        };
        let column = request.column.and_then(|c| positions.column_in(c));
        let line = positions.line_in(request.line);
        let mut answer = None;
        for &file in files {
            let sites = loaded.sites(file);
            if let Some(site) = line.and_then(|line| resolve(&sites, line, column)) {
                let trigger = trigger.clone();
                self.lines.push(LineBreakpoint { id, file, offset: site.offset, line: site.line, trigger });
                answer.get_or_insert(Breakpoint {
                    id: Some(id),
                    verified: true,
                    source: loaded.source(file),
                    line: Some(positions.line_out(site.line)),
                    column: Some(positions.column_out(site.column)),
                    ..Breakpoint::default()
                });
            } else if let Some(prompt) = line.and_then(|line| prompt_at(&loaded.program, file, line)) {
                self.prompts.push(PromptBreakpoint { id, file, prompt, trigger: trigger.clone() });
                answer.get_or_insert(Breakpoint {
                    id: Some(id),
                    verified: true,
                    source: loaded.source(file),
                    line: Some(request.line),
                    ..Breakpoint::default()
                });
            }
        }
        answer.unwrap_or_else(|| unverified("failed", "no flow or handler statement on this line".to_string()))
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
                    out.push(unverified("failed", e.to_string()));
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
