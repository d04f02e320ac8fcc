//! From the analysis database to an immutable program the runtime executes.
//!
//! The runtime never holds the database across an `await`: everything a run
//! needs (merged prompts, agents, flow HIR, source maps for locations) is copied
//! out once, into plain shared data.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use indexmap::IndexMap;
use sr_hir::diagnostic_kinds::Unreadable;
use sr_hir::entry::entry_point;
use sr_hir::start::{EntryKind, EntryName, stops_run};
use sr_hir::{
    AgentData, Body, Db, Diagnostic, ExecutorData, File, HandlerData, Item, ItemData, ItemKind, ModelData, Name,
    PolicyData, PromptData, RetryPolicyData, RootDatabase, SchemaData, SourceMap, StmtId, TimeoutPolicyData, ToolData,
    body, file_diagnostics, item_data, program, source_map,
};
use sr_syntax::{LineIndex, TextRange, TextSize};

use crate::event::Location;

/// A program ready to run.
#[derive(Debug)]
pub struct Compiled {
    pub root: PathBuf,
    pub sources: Vec<Source>,
    pub models: IndexMap<Name, ModelSpec>,
    pub schemas: IndexMap<Name, SchemaData>,
    pub tools: IndexMap<Name, ToolData>,
    pub prompts: IndexMap<Name, PromptData>,
    pub agents: IndexMap<Name, AgentSpec>,
    pub flows: IndexMap<Name, BodySpec>,
    /// Top-level handlers.
    pub handlers: Vec<HandlerSpec>,
    pub retry_policies: IndexMap<Name, RetryPolicyData>,
    pub timeout_policies: IndexMap<Name, TimeoutPolicyData>,
    pub policies: IndexMap<Name, (PolicyData, BodySpec)>,
    /// Where coding agents' code runs (our `executor` extension).
    pub executors: IndexMap<Name, ExecutorData>,
    pub entry: Option<Entry>,
    /// Problems that do not stop a run (warnings and our stricter checks).
    pub warnings: Vec<(PathBuf, Diagnostic)>,
}

#[derive(Debug)]
pub struct Source {
    pub path: PathBuf,
    /// How events and messages name the file: relative to the current
    /// directory when inside it, so that recordings replay the same anywhere.
    pub display: Arc<str>,
    pub index: LineIndex,
}

/// `path` relative to the current directory when it is inside it.
pub fn display_path(path: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    path.strip_prefix(&cwd).unwrap_or(path).display().to_string()
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Flow(Name),
    Agent(Name),
}

/// A model as providers name it (`anthropic/claude-sonnet`) with its settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelSpec {
    pub id: String,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u32>,
    /// The context window, for history compaction.
    pub max_input_tokens: Option<u64>,
}

impl ModelSpec {
    /// A model given by its id alone.
    pub fn of(id: &str) -> ModelSpec {
        ModelSpec { id: id.to_string(), temperature: None, max_tokens: None, max_input_tokens: None }
    }
}

#[derive(Debug)]
pub struct AgentSpec {
    pub name: Name,
    pub data: AgentData,
    pub handlers: Vec<HandlerSpec>,
    pub source: SourceRef,
}

#[derive(Debug, Clone)]
pub struct HandlerSpec {
    pub data: HandlerData,
    pub owner: Option<Name>,
    pub body: BodySpec,
}

/// A body (flow, handler, policy expressions) with what locates its statements.
#[derive(Debug, Clone)]
pub struct BodySpec {
    pub name: Name,
    pub body: Arc<Body>,
    pub source: SourceRef,
}

/// Where an item is: its file (an index into `Compiled::sources`), its offset,
/// and its source map.
#[derive(Debug, Clone)]
pub struct SourceRef {
    pub file: usize,
    pub offset: TextSize,
    pub map: Arc<SourceMap>,
}

/// Problems that prevent a run.
#[derive(Debug)]
pub struct CompileError {
    pub diagnostics: Vec<(PathBuf, Diagnostic)>,
}

impl Compiled {
    /// What `entry` (`RunOptions::entry`, `--entry`) starts: its kind and
    /// name, looked up as `sr_hir::start::EntryName` says (a flow, then an
    /// agent, then a prompt, or the one kind a `KIND:` prefix names).
    pub fn resolve_entry<'a>(&self, entry: &'a str) -> Option<(EntryKind, &'a str)> {
        let entry = EntryName::parse(entry);
        let kind = entry.resolve(|kind| match kind {
            EntryKind::Flow => self.flows.contains_key(entry.name),
            EntryKind::Agent => self.agents.contains_key(entry.name),
            EntryKind::Prompt => self.prompts.contains_key(entry.name),
        })?;
        Some((kind, entry.name))
    }

    /// The location of a statement, for events, errors and the debugger.
    pub fn stmt_location(&self, source: &SourceRef, stmt: StmtId) -> Location {
        self.location(source, source.map.stmts[stmt])
    }

    pub fn location(&self, source: &SourceRef, relative: TextRange) -> Location {
        let (line, column) = self.line_column(source, relative);
        Location { file: self.sources[source.file].display.clone(), line, column }
    }

    /// A statement's line and column (1-based, the column in characters),
    /// without the rest of its location.
    pub fn stmt_line_column(&self, source: &SourceRef, stmt: StmtId) -> (u32, u32) {
        self.line_column(source, source.map.stmts[stmt])
    }

    fn line_column(&self, source: &SourceRef, relative: TextRange) -> (u32, u32) {
        let index = &self.sources[source.file].index;
        let at = relative.start() + source.offset;
        (index.line_col(at).line + 1, index.col_in(at, sr_syntax::line_index::Encoding::Char) + 1)
    }

    /// The absolute range of a statement in its file.
    pub fn stmt_range(&self, source: &SourceRef, stmt: StmtId) -> TextRange {
        source.map.stmts[stmt] + source.offset
    }
}

/// Loads `path` and its imports into `db` and compiles the program rooted there.
pub fn compile_path(db: &mut RootDatabase, path: &Path) -> Result<Arc<Compiled>, CompileError> {
    let file = db.load_with_imports(path).map_err(|e| CompileError {
        diagnostics: vec![(
            path.to_path_buf(),
            Diagnostic::new(
                Unreadable { path: path.display().to_string(), error: e.to_string() }.into(),
                TextRange::default(),
            ),
        )],
    })?;
    compile(db, file)
}

pub fn compile(db: &dyn Db, root: File) -> Result<Arc<Compiled>, CompileError> {
    let program = program(db, root);
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for &file in &program.files {
        for d in file_diagnostics(db, file).iter().filter(|d| d.in_mode(false)) {
            let entry = (file.path(db).clone(), d.clone());
            if stops_run(d) { errors.push(entry) } else { warnings.push(entry) }
        }
    }
    if !errors.is_empty() {
        return Err(CompileError { diagnostics: errors });
    }

    let sources: Vec<Source> = program
        .files
        .iter()
        .map(|&f| Source {
            path: f.path(db).clone(),
            display: display_path(f.path(db)).into(),
            index: LineIndex::new(f.text(db)),
        })
        .collect();
    let source_ref = |item: Item<'_>| SourceRef {
        file: program.files.iter().position(|&f| f == item.file(db)).unwrap_or(0),
        offset: item.offset(db),
        map: source_map(db, item),
    };
    let body_spec =
        |item: Item<'_>| BodySpec { name: item.name(db).clone(), body: body(db, item), source: source_ref(item) };

    let mut compiled = Compiled {
        root: root.path(db).clone(),
        sources,
        models: IndexMap::new(),
        schemas: IndexMap::new(),
        tools: IndexMap::new(),
        prompts: program.prompts.iter().map(|(name, merged)| (name.clone(), merged.data(db))).collect(),
        agents: IndexMap::new(),
        flows: program.flows.iter().map(|(name, &item)| (name.clone(), body_spec(item))).collect(),
        handlers: Vec::new(),
        retry_policies: IndexMap::new(),
        timeout_policies: IndexMap::new(),
        policies: IndexMap::new(),
        executors: IndexMap::new(),
        entry: entry_point(db, root).map(|e| match e.item.kind(db) {
            ItemKind::Flow => Entry::Flow(e.item.name(db).clone()),
            _ => Entry::Agent(e.item.name(db).clone()),
        }),
        warnings,
    };
    for (name, &item) in &program.models {
        if let Some(spec) = model_spec(db, &program.models, item, 0) {
            compiled.models.insert(name.clone(), spec);
        }
    }
    for (name, &item) in &program.schemas {
        if let ItemData::Schema(data) = &*item_data(db, item) {
            compiled.schemas.insert(name.clone(), data.clone());
        }
    }
    for (name, &item) in &program.tools {
        if let ItemData::Tool(data) = &*item_data(db, item) {
            compiled.tools.insert(name.clone(), data.clone());
        }
    }
    for (name, &item) in &program.retry_policies {
        if let ItemData::RetryPolicy(data) = &*item_data(db, item) {
            compiled.retry_policies.insert(name.clone(), data.clone());
        }
    }
    for (name, &item) in &program.timeout_policies {
        if let ItemData::TimeoutPolicy(data) = &*item_data(db, item) {
            compiled.timeout_policies.insert(name.clone(), data.clone());
        }
    }
    for (name, &item) in &program.policies {
        if let ItemData::Policy(data) = &*item_data(db, item) {
            compiled.policies.insert(name.clone(), (data.clone(), body_spec(item)));
        }
    }
    for (name, &item) in &program.executors {
        if let ItemData::Executor(data) = &*item_data(db, item) {
            compiled.executors.insert(name.clone(), data.clone());
        }
    }
    for &handler in &program.handlers {
        let ItemData::Handler(data) = &*item_data(db, handler) else { continue };
        let spec = HandlerSpec { data: data.clone(), owner: handler.owner(db).clone(), body: body_spec(handler) };
        if spec.owner.is_none() {
            compiled.handlers.push(spec);
        }
    }
    for (name, &item) in &program.agents {
        let ItemData::Agent(data) = &*item_data(db, item) else { continue };
        let handlers = program
            .handlers
            .iter()
            .filter(|h| h.owner(db).as_ref() == Some(name) && h.file(db) == item.file(db))
            .filter_map(|&h| match &*item_data(db, h) {
                ItemData::Handler(d) => {
                    Some(HandlerSpec { data: d.clone(), owner: Some(name.clone()), body: body_spec(h) })
                }
                _ => None,
            })
            .collect();
        compiled.agents.insert(
            name.clone(),
            AgentSpec { name: name.clone(), data: data.clone(), handlers, source: source_ref(item) },
        );
    }
    Ok(Arc::new(compiled))
}

fn model_spec(db: &dyn Db, models: &IndexMap<Name, Item<'_>>, item: Item<'_>, depth: u32) -> Option<ModelSpec> {
    let ItemData::Model(data) = &*item_data(db, item) else { return None };
    match data {
        ModelData::Direct(id) => Some(ModelSpec::of(id)),
        ModelData::Alias(other) if depth < 8 => model_spec(db, models, *models.get(&other.name)?, depth + 1),
        ModelData::Long(long) => {
            let provider = long.provider.as_deref()?;
            let id = match &long.name {
                Some(name) => format!("{provider}/{name}"),
                None => provider.to_string(),
            };
            Some(ModelSpec {
                id,
                temperature: long.temperature.as_deref().and_then(|t| t.parse().ok()),
                max_tokens: long.max_tokens.and_then(|t| u32::try_from(t).ok()),
                max_input_tokens: long.max_input_tokens,
            })
        }
        _ => None,
    }
}
