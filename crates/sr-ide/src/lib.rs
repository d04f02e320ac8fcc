//! IDE features over the analysis database, as plain data in editor vocabulary:
//! byte offsets, ranges, labels and kinds. Nothing here knows LSP or JSON; the
//! language server converts.
//!
//! [`AnalysisHost`] owns the database and applies changes; [`Analysis`] is a
//! snapshot for reads on any thread. A change made while a snapshot computes
//! cancels it: every read returns [`Cancellable`].

mod auto_import;
mod call_hierarchy;
mod code_actions;
mod code_lens;
mod completion;
mod defs;
mod diagnostics;
mod field_refs;
mod file_rename;
mod folding;
mod goto;
mod goto_type;
pub mod graph;
mod hover;
mod inlay_hints;
mod namespace;
mod playground;
mod preview;
#[cfg(test)]
mod program_tests;
mod refactor;
mod references;
mod rename;
mod selection;
mod semantic_tokens;
mod signature_help;
mod symbol_kind;
mod symbols;
#[cfg(test)]
mod tests;
mod tool_functions;
mod try_inputs;
mod types;
mod var_types;

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sr_hir::RootDatabase;

pub use crate::call_hierarchy::CallHierarchyItem;
pub use crate::code_actions::{ActionKind, CodeAction};
pub use crate::code_lens::{PreviewablePrompt, Runnable};
pub use crate::completion::{CompletionConfig, CompletionItem, CompletionKind};
pub use crate::diagnostics::DiagnosticsMode;
pub use crate::folding::{Fold, FoldKind};
pub use crate::hover::HoverResult;
pub use crate::inlay_hints::{InlayHint, InlayKind};
pub use crate::playground::{TryKind, Tryable};
pub use crate::references::{Highlight, HighlightAccess};
pub use crate::rename::RenameError;
pub use crate::semantic_tokens::{HighlightTag, HighlightedRange};
pub use crate::signature_help::{SignatureHelp, SignatureParameter};
pub use crate::symbol_kind::SymbolKind;
pub use crate::symbols::DocumentSymbol;
pub use crate::try_inputs::{InputsError, read_inputs};
pub use salsa::{CancellationToken, Cancelled};
pub use sr_hir::{Diagnostic, DiagnosticKind};
pub use sr_syntax::line_index::Encoding;
pub use sr_syntax::{Code, LineCol, LineIndex, Related, Severity, TextRange, TextSize};

/// A read that a concurrent change may interrupt.
pub type Cancellable<T> = Result<T, Cancelled>;

/// A cursor in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePosition {
    pub path: PathBuf,
    pub offset: TextSize,
}

/// A range in a file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileRange {
    pub path: PathBuf,
    pub range: TextRange,
}

/// A place to jump to: the whole definition and the name in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NavigationTarget {
    pub path: PathBuf,
    pub name: String,
    pub kind: SymbolKind,
    pub full_range: TextRange,
    pub focus_range: TextRange,
}

/// Replace `range` by `new_text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextEdit {
    pub range: TextRange,
    pub new_text: String,
}

/// Edits to several files, each file's edits sorted and disjoint, and the
/// files to create (path and text; none of them exists in the database).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceChange {
    pub edits: Vec<(PathBuf, Vec<TextEdit>)>,
    pub new_files: Vec<(PathBuf, String)>,
}

impl SourceChange {
    pub(crate) fn insert(&mut self, path: &Path, edit: TextEdit) {
        match self.edits.iter_mut().find(|(p, _)| p == path) {
            Some((_, edits)) => {
                if !edits.contains(&edit) {
                    edits.push(edit);
                }
            }
            None => self.edits.push((path.to_path_buf(), vec![edit])),
        }
    }

    fn sorted(mut self) -> SourceChange {
        self.edits.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, edits) in &mut self.edits {
            edits.sort_by_key(|e| (e.range.start(), e.range.end()));
        }
        self
    }
}

/// Owns the database; applies changes. Writes wait until every snapshot taken
/// before them is dropped (snapshots that are computing unwind as cancelled).
#[derive(Default)]
pub struct AnalysisHost {
    db: RootDatabase,
}

impl AnalysisHost {
    pub fn new() -> AnalysisHost {
        AnalysisHost::default()
    }

    /// A snapshot for reads.
    pub fn analysis(&self) -> Analysis {
        Analysis { db: self.db.clone() }
    }

    /// Adds a file or replaces its text: an open document's.
    pub fn set_file(&mut self, path: &Path, text: impl Into<Arc<str>>) {
        self.db.set_file(path, text);
    }

    /// Adds a file read from disk or replaces its text (even with an equal
    /// one): a closed file, which changes rarely, so that an edit to an open
    /// document costs nothing per closed file (see
    /// [`RootDatabase::set_disk_file`]).
    pub fn set_disk_file(&mut self, path: &Path, text: impl Into<Arc<str>>) {
        self.db.set_disk_file(path, text);
    }

    /// Drops `path`. Its file-level queries re-run on the emptied text, so
    /// salsa frees the old tree, items and diagnostics now: a server that
    /// opens and closes many unsaved documents keeps a flat footprint.
    pub fn remove_file(&mut self, path: &Path) {
        let Some(file) = self.db.file(path) else { return };
        self.db.remove_file(path);
        sr_hir::diagnostics::file_diagnostics(&self.db, file);
        sr_hir::line_index(&self.db, file);
    }

    /// Reads, from disk, the local files `path` imports (transitively) that
    /// the database does not have yet. Reads imports from the parse the
    /// database keeps, so an edit costs no second parse.
    pub fn load_missing_imports(&mut self, path: &Path) {
        let mut pending = vec![path.to_path_buf()];
        while let Some(path) = pending.pop() {
            let Some(file) = self.db.file(&path) else { continue };
            let missing: Vec<PathBuf> = sr_hir::membership::file_imports(&self.db, file)
                .iter()
                .filter(|t| self.db.file(t).is_none())
                .cloned()
                .collect();
            for target in missing {
                if self.db.read_import(&target).is_some() {
                    pending.push(target);
                }
            }
        }
    }
}

/// A snapshot of the database. Every method returns `Err(Cancelled)` when a
/// change arrived while it computed; callers ask again on the new state.
pub struct Analysis {
    db: RootDatabase,
}

impl Analysis {
    /// A handle that cancels this snapshot's running reads (for `$/cancelRequest`).
    pub fn cancellation_token(&self) -> CancellationToken {
        salsa::Database::cancellation_token(&self.db)
    }

    fn with_db<T>(&self, f: impl FnOnce(&RootDatabase) -> T) -> Cancellable<T> {
        Cancelled::catch(AssertUnwindSafe(|| f(&self.db)))
    }

    /// The text of a file the database knows.
    pub fn file_text(&self, path: &Path) -> Cancellable<Option<Arc<str>>> {
        self.with_db(|db| db.file(path).map(|f| f.text(db).clone()))
    }

    pub fn files(&self) -> Cancellable<Vec<PathBuf>> {
        self.with_db(|db| db.files().iter().map(|f| f.path(db).clone()).collect())
    }

    /// The local files `path` imports, resolved, in the order written.
    pub fn imports(&self, path: &Path) -> Cancellable<Vec<PathBuf>> {
        self.with_db(|db| {
            db.file(path).map(|file| sr_hir::membership::file_imports(db, file).clone()).unwrap_or_default()
        })
    }

    /// Every file of every program that includes `path`, each once: the files
    /// whose diagnostics a change to `path` can alter while every file's
    /// imports stay as they are (a file is judged within its programs, and
    /// upstream's mode judges it with what it imports). Empty for a file the
    /// database does not have.
    pub fn program_files(&self, path: &Path) -> Cancellable<Vec<PathBuf>> {
        self.with_db(|db| {
            let Some(file) = db.file(path) else { return Vec::new() };
            let mut seen = std::collections::HashSet::new();
            let mut out = Vec::new();
            for &root in sr_hir::programs_of(db, file) {
                for &member in &sr_hir::program(db, root).files {
                    if seen.insert(member) {
                        out.push(member.path(db).clone());
                    }
                }
            }
            out
        })
    }

    pub fn line_index(&self, path: &Path) -> Cancellable<Option<LineIndex>> {
        self.with_db(|db| db.file(path).map(|f| sr_hir::line_index(db, f).clone()))
    }

    pub fn diagnostics(&self, path: &Path, mode: DiagnosticsMode) -> Cancellable<Vec<Diagnostic>> {
        self.with_db(|db| diagnostics::diagnostics(db, path, mode))
    }

    pub fn goto_definition(&self, position: &FilePosition) -> Cancellable<Vec<NavigationTarget>> {
        self.with_db(|db| goto::goto_definition(db, position))
    }

    /// The schema of the value under the cursor (a variable or a field path).
    pub fn goto_type_definition(&self, position: &FilePosition) -> Cancellable<Vec<NavigationTarget>> {
        self.with_db(|db| goto_type::goto_type_definition(db, position))
    }

    pub fn signature_help(&self, position: &FilePosition) -> Cancellable<Option<SignatureHelp>> {
        self.with_db(|db| signature_help::signature_help(db, position))
    }

    pub fn find_references(&self, position: &FilePosition, include_declaration: bool) -> Cancellable<Vec<FileRange>> {
        self.with_db(|db| references::find_references(db, position, include_declaration))
    }

    pub fn highlight_related(&self, position: &FilePosition) -> Cancellable<Vec<Highlight>> {
        self.with_db(|db| references::highlight_related(db, position))
    }

    pub fn prepare_rename(&self, position: &FilePosition) -> Cancellable<Result<TextRange, RenameError>> {
        self.with_db(|db| rename::prepare_rename(db, position))
    }

    pub fn rename(&self, position: &FilePosition, new_name: &str) -> Cancellable<Result<SourceChange, RenameError>> {
        self.with_db(|db| rename::rename(db, position, new_name))
    }

    pub fn hover(&self, position: &FilePosition) -> Cancellable<Option<HoverResult>> {
        self.with_db(|db| hover::hover(db, position))
    }

    pub fn completions(&self, position: &FilePosition, config: CompletionConfig) -> Cancellable<Vec<CompletionItem>> {
        self.with_db(|db| completion::completions(db, position, config))
    }

    pub fn document_symbols(&self, path: &Path) -> Cancellable<Vec<DocumentSymbol>> {
        self.with_db(|db| symbols::document_symbols(db, path))
    }

    /// [`Self::document_symbols`] one top-level symbol at a time, in the same
    /// order: writing a big outline out as it is made never holds all of it.
    pub fn each_document_symbol(&self, path: &Path, each: impl FnMut(DocumentSymbol)) -> Cancellable<()> {
        self.with_db(|db| symbols::each_document_symbol(db, path, each))
    }

    pub fn workspace_symbols(&self, query: &str) -> Cancellable<Vec<NavigationTarget>> {
        self.with_db(|db| symbols::workspace_symbols(db, query))
    }

    /// Highlighting of the file, or of the tokens overlapping `range`.
    pub fn highlight(&self, path: &Path, range: Option<TextRange>) -> Cancellable<Vec<HighlightedRange>> {
        self.with_db(|db| semantic_tokens::highlight(db, path, range))
    }

    pub fn folding_ranges(&self, path: &Path) -> Cancellable<Vec<Fold>> {
        self.with_db(|db| folding::folding_ranges(db, path))
    }

    /// For each offset, the ranges around it from the innermost outwards.
    pub fn selection_ranges(&self, path: &Path, offsets: &[TextSize]) -> Cancellable<Vec<Vec<TextRange>>> {
        self.with_db(|db| selection::selection_ranges(db, path, offsets))
    }

    /// Quick fixes for the diagnostics in `frange`, then the refactors that
    /// apply there (extract or inline a prompt, move an item to a file).
    pub fn code_actions(&self, frange: &FileRange) -> Cancellable<Vec<CodeAction>> {
        self.with_db(|db| {
            let mut actions = code_actions::code_actions(db, frange);
            actions.extend(refactor::refactors(db, frange));
            actions
        })
    }

    /// The import paths to rewrite before files move from the first path
    /// of each pair to the second (a directory moves every file under it).
    pub fn will_rename_files(&self, renames: &[(PathBuf, PathBuf)]) -> Cancellable<SourceChange> {
        self.with_db(|db| file_rename::will_rename_files(db, renames))
    }

    pub fn inlay_hints(&self, path: &Path, range: Option<TextRange>) -> Cancellable<Vec<InlayHint>> {
        self.with_db(|db| inlay_hints::inlay_hints(db, path, range))
    }

    /// Each local import path in `path` and the file it names.
    pub fn document_links(&self, path: &Path) -> Cancellable<Vec<(TextRange, PathBuf)>> {
        self.with_db(|db| auto_import::import_links(db, path))
    }

    /// The program graph rooted at `path` as Mermaid text.
    pub fn graph_mermaid(&self, path: &Path) -> Cancellable<Option<String>> {
        self.with_db(|db| graph::mermaid_of(db, path))
    }

    /// Prompt `name`'s body with what is statically known of its `${…}`
    /// resolved (composed prompts); `None` without such a prompt.
    pub fn preview_prompt(&self, path: &Path, name: &str) -> Cancellable<Option<String>> {
        self.with_db(|db| preview::preview_prompt(db, path, name))
    }

    pub fn runnables(&self, path: &Path) -> Cancellable<Vec<Runnable>> {
        self.with_db(|db| code_lens::runnables(db, path))
    }

    /// The names of the agents, prompts and schemas defined in `path`, where
    /// a references-count lens goes (the count is asked for when shown).
    pub fn reference_lenses(&self, path: &Path) -> Cancellable<Vec<TextRange>> {
        self.with_db(|db| code_lens::reference_lenses(db, path))
    }

    /// The agents and prompts defined in `path` that `sr try` runs, where a
    /// "Try" lens goes.
    pub fn tryables(&self, path: &Path) -> Cancellable<Vec<Tryable>> {
        self.with_db(|db| playground::tryables(db, path))
    }

    /// The variables `sr try ROOT ENTRY` reads (an agent's message,
    /// `input_prompt`, first), which an editor offers to type in.
    pub fn try_inputs(&self, root: &Path, entry: &str) -> Cancellable<Vec<String>> {
        self.with_db(|db| try_inputs::try_inputs(db, root, entry))
    }

    pub fn previewable_prompts(&self, path: &Path) -> Cancellable<Vec<PreviewablePrompt>> {
        self.with_db(|db| code_lens::previewable_prompts(db, path))
    }

    pub fn prepare_call_hierarchy(&self, position: &FilePosition) -> Cancellable<Option<CallHierarchyItem>> {
        self.with_db(|db| call_hierarchy::prepare(db, position))
    }

    /// Who calls `item`: each caller with the ranges of its references.
    pub fn incoming_calls(&self, item: &CallHierarchyItem) -> Cancellable<Vec<(CallHierarchyItem, Vec<TextRange>)>> {
        self.with_db(|db| call_hierarchy::incoming(db, item))
    }

    /// What `item` calls, with the ranges (in `item`'s file) of the references.
    pub fn outgoing_calls(&self, item: &CallHierarchyItem) -> Cancellable<Vec<(CallHierarchyItem, Vec<TextRange>)>> {
        self.with_db(|db| call_hierarchy::outgoing(db, item))
    }
}
