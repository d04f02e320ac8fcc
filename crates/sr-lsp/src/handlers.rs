//! Request handlers: pure functions of a snapshot and the request's params,
//! run on a blocking thread. Positions are converted here, in the encoding
//! negotiated at `initialize`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::json;
use sr_ide::{Cancellable, FilePosition, FileRange, LineIndex, NavigationTarget, SourceChange, TextRange};
use tower_lsp_server::ls_types::{self as lsp, OneOf, Uri};

use crate::command_names::CommandName;
use crate::convert::{self, path_of};
use crate::owner::Snapshot;
use crate::raw;

/// Why a handler gives no result.
pub(crate) enum Failure {
    Cancelled(sr_ide::Cancelled),
    /// A refusal the editor should show (an invalid new name).
    Refused(String),
}

impl From<sr_ide::Cancelled> for Failure {
    fn from(cancelled: sr_ide::Cancelled) -> Failure {
        Failure::Cancelled(cancelled)
    }
}

pub(crate) type Result<T> = std::result::Result<T, Failure>;

/// A document's path and line index (`None` for a file the database lacks).
struct Doc {
    path: PathBuf,
    index: LineIndex,
}

impl Snapshot {
    fn doc(&self, uri: &Uri) -> Cancellable<Option<Doc>> {
        let path = path_of(uri);
        Ok(self.analysis.line_index(&path)?.map(|index| Doc { path, index }))
    }

    fn position(&self, params: &lsp::TextDocumentPositionParams) -> Cancellable<Option<(Doc, FilePosition)>> {
        let Some(doc) = self.doc(&params.text_document.uri)? else { return Ok(None) };
        let offset = convert::offset(&doc.index, params.position, self.encoding);
        let position = FilePosition { path: doc.path.clone(), offset };
        Ok(Some((doc, position)))
    }

    /// The URI of a path: the open document's own URI when it is open.
    pub(crate) fn uri(&self, path: &Path) -> Option<Uri> {
        match self.documents.get(path) {
            Some(document) => Some(document.uri.clone()),
            None => convert::uri_of(path),
        }
    }

    fn range_in(&self, path: &Path, range: TextRange) -> Cancellable<Option<lsp::Range>> {
        Ok(self.analysis.line_index(path)?.map(|index| convert::range(&index, range, self.encoding)))
    }

    fn location(&self, path: &Path, range: TextRange) -> Cancellable<Option<lsp::Location>> {
        let (Some(uri), Some(range)) = (self.uri(path), self.range_in(path, range)?) else { return Ok(None) };
        Ok(Some(lsp::Location { uri, range }))
    }

    /// The edit as versioned `documentChanges` when the client takes them
    /// (an open document carries its version, so a stale edit is refused by
    /// the client), else as plain `changes`. Files to create come first, as
    /// `create` operations and an edit that writes their text; only a client
    /// with [`Snapshot::create_files`] is given a change that creates files.
    fn workspace_edit(&self, change: SourceChange) -> Cancellable<lsp::WorkspaceEdit> {
        let mut files = Vec::new();
        for (path, edits) in change.edits {
            let (Some(uri), Some(index)) = (self.uri(&path), self.analysis.line_index(&path)?) else { continue };
            let edits: Vec<lsp::TextEdit> = edits
                .into_iter()
                .map(|e| lsp::TextEdit { range: convert::range(&index, e.range, self.encoding), new_text: e.new_text })
                .collect();
            files.push((path, uri, edits));
        }
        if !self.document_changes {
            let changes = files.into_iter().map(|(_, uri, edits)| (uri, edits)).collect();
            return Ok(lsp::WorkspaceEdit { changes: Some(changes), ..Default::default() });
        }
        let edit = |uri: Uri, version: Option<i32>, edits: Vec<lsp::TextEdit>| lsp::TextDocumentEdit {
            text_document: lsp::OptionalVersionedTextDocumentIdentifier { uri, version },
            edits: edits.into_iter().map(OneOf::Left).collect(),
        };
        let documents =
            files.into_iter().map(|(path, uri, edits)| edit(uri, self.documents.get(&path).map(|d| d.version), edits));
        if change.new_files.is_empty() {
            let documents = documents.collect();
            return Ok(lsp::WorkspaceEdit {
                document_changes: Some(lsp::DocumentChanges::Edits(documents)),
                ..Default::default()
            });
        }
        let mut operations = Vec::new();
        for (path, text) in change.new_files {
            let Some(uri) = convert::uri_of(&path) else { continue };
            let options = lsp::CreateFileOptions { overwrite: Some(false), ignore_if_exists: Some(false) };
            let create = lsp::CreateFile { uri: uri.clone(), options: Some(options), annotation_id: None };
            operations.push(lsp::DocumentChangeOperation::Op(lsp::ResourceOp::Create(create)));
            let write = lsp::TextEdit { range: lsp::Range::default(), new_text: text };
            operations.push(lsp::DocumentChangeOperation::Edit(edit(uri, None, vec![write])));
        }
        operations.extend(documents.map(lsp::DocumentChangeOperation::Edit));
        Ok(lsp::WorkspaceEdit {
            document_changes: Some(lsp::DocumentChanges::Operations(operations)),
            ..Default::default()
        })
    }

    fn call_item(&self, target: &NavigationTarget) -> Cancellable<Option<lsp::CallHierarchyItem>> {
        let (Some(uri), Some(range), Some(selection_range)) = (
            self.uri(&target.path),
            self.range_in(&target.path, target.full_range)?,
            self.range_in(&target.path, target.focus_range)?,
        ) else {
            return Ok(None);
        };
        Ok(Some(lsp::CallHierarchyItem {
            name: target.name.clone(),
            kind: convert::symbol_kind(target.kind),
            tags: None,
            detail: None,
            uri,
            range,
            selection_range,
            data: None,
        }))
    }

    fn navigation_target(&self, item: &lsp::CallHierarchyItem) -> Cancellable<Option<NavigationTarget>> {
        let Some(doc) = self.doc(&item.uri)? else { return Ok(None) };
        Ok(Some(NavigationTarget {
            full_range: convert::text_range(&doc.index, item.range, self.encoding),
            focus_range: convert::text_range(&doc.index, item.selection_range, self.encoding),
            path: doc.path,
            name: item.name.clone(),
            kind: sr_ide::SymbolKind::Agent,
        }))
    }
}

/// Line indexes of files other than the one at hand, built once per use.
#[derive(Default)]
pub(crate) struct Indexes(HashMap<PathBuf, Option<LineIndex>>);

impl Indexes {
    fn location(&mut self, s: &Snapshot, path: &Path, range: TextRange) -> Cancellable<Option<lsp::Location>> {
        if !self.0.contains_key(path) {
            self.0.insert(path.to_path_buf(), s.analysis.line_index(path)?);
        }
        let (Some(uri), Some(index)) = (s.uri(path), &self.0[path]) else { return Ok(None) };
        Ok(Some(lsp::Location { uri, range: convert::range(index, range, s.encoding) }))
    }
}

pub(crate) fn diagnostic(
    s: &Snapshot,
    path: &Path,
    index: &LineIndex,
    indexes: &mut Indexes,
    d: &sr_ide::Diagnostic,
) -> Cancellable<lsp::Diagnostic> {
    let mut related = Vec::new();
    for r in &d.related {
        let location = match r.file.as_deref() {
            None => s.uri(path).map(|uri| lsp::Location { uri, range: convert::range(index, r.range, s.encoding) }),
            Some(file) => indexes.location(s, Path::new(file), r.range)?,
        };
        if let Some(location) = location {
            related.push(lsp::DiagnosticRelatedInformation { location, message: r.message.clone() });
        }
    }
    Ok(lsp::Diagnostic {
        range: convert::range(index, d.range, s.encoding),
        severity: Some(match d.severity {
            sr_ide::Severity::Error => lsp::DiagnosticSeverity::ERROR,
            sr_ide::Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        }),
        code: Some(lsp::NumberOrString::String(d.code().to_string())),
        source: Some("streetrace".to_string()),
        message: match d.help() {
            Some(help) => format!("{}\nhelp: {help}", d.message()),
            None => d.message(),
        },
        related_information: (!related.is_empty()).then_some(related),
        tags: matches!(d.kind, sr_ide::DiagnosticKind::Unused(_)).then(|| vec![lsp::DiagnosticTag::UNNECESSARY]),
        ..Default::default()
    })
}

/// The converted diagnostics of one file; `None` when the database lacks it.
pub(crate) fn file_diagnostics(
    s: &Snapshot,
    path: &Path,
    indexes: &mut Indexes,
) -> Cancellable<Option<Vec<lsp::Diagnostic>>> {
    let Some(index) = s.analysis.line_index(path)? else { return Ok(None) };
    let diagnostics = s.analysis.diagnostics(path, s.config.mode)?;
    let converted = diagnostics.iter().map(|d| diagnostic(s, path, &index, indexes, d)).collect::<Cancellable<_>>()?;
    Ok(Some(converted))
}

pub(crate) fn hover(s: &Snapshot, params: lsp::HoverParams) -> Result<Option<lsp::Hover>> {
    let Some((doc, position)) = s.position(&params.text_document_position_params)? else { return Ok(None) };
    let Some(hover) = s.analysis.hover(&position)? else { return Ok(None) };
    Ok(Some(lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: hover.markdown,
        }),
        range: Some(convert::range(&doc.index, hover.range, s.encoding)),
    }))
}

pub(crate) fn completion(
    s: &Snapshot,
    params: lsp::CompletionParams,
    config: sr_ide::CompletionConfig,
) -> Result<Option<lsp::CompletionResponse>> {
    let Some((doc, position)) = s.position(&params.text_document_position)? else { return Ok(None) };
    let edit = |e: sr_ide::TextEdit| lsp::TextEdit {
        range: convert::range(&doc.index, e.range, s.encoding),
        new_text: e.new_text,
    };
    let items = s
        .analysis
        .completions(&position, config)?
        .into_iter()
        .enumerate()
        .map(|(rank, c)| lsp::CompletionItem {
            kind: Some(convert::completion_kind(c.kind)),
            // The analysis ranks the items; clients sort by this text.
            sort_text: Some(format!("{rank:05}")),
            detail: c.detail,
            documentation: c.documentation.map(|value| {
                lsp::Documentation::MarkupContent(lsp::MarkupContent { kind: lsp::MarkupKind::Markdown, value })
            }),
            text_edit: Some(lsp::CompletionTextEdit::Edit(edit(sr_ide::TextEdit {
                range: c.replace_range,
                new_text: c.insert_text,
            }))),
            additional_text_edits: (!c.additional_edits.is_empty())
                .then(|| c.additional_edits.into_iter().map(edit).collect()),
            // Snippets carry the indentation of their line already.
            insert_text_format: c.snippet.then_some(lsp::InsertTextFormat::SNIPPET),
            insert_text_mode: c.snippet.then_some(lsp::InsertTextMode::AS_IS),
            label: c.label,
            ..Default::default()
        })
        .collect();
    Ok(Some(lsp::CompletionResponse::Array(items)))
}

pub(crate) fn goto_definition(
    s: &Snapshot,
    params: lsp::GotoDefinitionParams,
) -> Result<Option<lsp::GotoDefinitionResponse>> {
    let Some((_, position)) = s.position(&params.text_document_position_params)? else { return Ok(None) };
    let mut locations = Vec::new();
    for target in s.analysis.goto_definition(&position)? {
        locations.extend(s.location(&target.path, target.focus_range)?);
    }
    Ok((!locations.is_empty()).then_some(lsp::GotoDefinitionResponse::Array(locations)))
}

pub(crate) fn goto_type_definition(
    s: &Snapshot,
    params: lsp::request::GotoTypeDefinitionParams,
) -> Result<Option<lsp::request::GotoTypeDefinitionResponse>> {
    let Some((_, position)) = s.position(&params.text_document_position_params)? else { return Ok(None) };
    let mut locations = Vec::new();
    for target in s.analysis.goto_type_definition(&position)? {
        locations.extend(s.location(&target.path, target.focus_range)?);
    }
    Ok((!locations.is_empty()).then_some(lsp::GotoDefinitionResponse::Array(locations)))
}

pub(crate) fn signature_help(s: &Snapshot, params: lsp::SignatureHelpParams) -> Result<Option<lsp::SignatureHelp>> {
    let Some((_, position)) = s.position(&params.text_document_position_params)? else { return Ok(None) };
    let Some(help) = s.analysis.signature_help(&position)? else { return Ok(None) };
    let markdown = |value: String| {
        lsp::Documentation::MarkupContent(lsp::MarkupContent { kind: lsp::MarkupKind::Markdown, value })
    };
    let parameters = help
        .parameters
        .into_iter()
        .map(|p| lsp::ParameterInformation {
            label: lsp::ParameterLabel::LabelOffsets(convert::label_offsets(&help.label, p.range, s.encoding)),
            documentation: p.documentation.map(markdown),
        })
        .collect();
    let active = help.active_parameter.and_then(|a| u32::try_from(a).ok());
    Ok(Some(lsp::SignatureHelp {
        signatures: vec![lsp::SignatureInformation {
            label: help.label,
            documentation: help.documentation.map(markdown),
            parameters: Some(parameters),
            active_parameter: active,
        }],
        active_signature: Some(0),
        active_parameter: active,
    }))
}

pub(crate) fn references(s: &Snapshot, params: lsp::ReferenceParams) -> Result<Option<Vec<lsp::Location>>> {
    let Some((_, position)) = s.position(&params.text_document_position)? else { return Ok(None) };
    let mut locations = Vec::new();
    for r in s.analysis.find_references(&position, params.context.include_declaration)? {
        locations.extend(s.location(&r.path, r.range)?);
    }
    Ok(Some(locations))
}

pub(crate) fn document_highlight(
    s: &Snapshot,
    params: lsp::DocumentHighlightParams,
) -> Result<Option<Vec<lsp::DocumentHighlight>>> {
    let Some((doc, position)) = s.position(&params.text_document_position_params)? else { return Ok(None) };
    let highlights = s
        .analysis
        .highlight_related(&position)?
        .into_iter()
        .map(|h| lsp::DocumentHighlight {
            range: convert::range(&doc.index, h.range, s.encoding),
            kind: Some(match h.access {
                sr_ide::HighlightAccess::Write => lsp::DocumentHighlightKind::WRITE,
                sr_ide::HighlightAccess::Read => lsp::DocumentHighlightKind::READ,
            }),
        })
        .collect();
    Ok(Some(highlights))
}

pub(crate) fn prepare_rename(
    s: &Snapshot,
    params: lsp::TextDocumentPositionParams,
) -> Result<Option<lsp::PrepareRenameResponse>> {
    let Some((doc, position)) = s.position(&params)? else { return Ok(None) };
    match s.analysis.prepare_rename(&position)? {
        Ok(range) => Ok(Some(lsp::PrepareRenameResponse::Range(convert::range(&doc.index, range, s.encoding)))),
        Err(sr_ide::RenameError::NothingHere) => Ok(None),
        Err(error) => Err(Failure::Refused(error.to_string())),
    }
}

pub(crate) fn rename(s: &Snapshot, params: lsp::RenameParams) -> Result<Option<lsp::WorkspaceEdit>> {
    let Some((_, position)) = s.position(&params.text_document_position)? else { return Ok(None) };
    match s.analysis.rename(&position, &params.new_name)? {
        Ok(change) => Ok(Some(s.workspace_edit(change)?)),
        Err(error) => Err(Failure::Refused(error.to_string())),
    }
}

/// Over stdio (`slot`), each top-level symbol is serialised into the answer
/// as soon as it is made: the outline of the 9.2 MB benchmark file is 100k symbols, and
/// they never all exist at once, neither as sr-ide's nor as LSP's.
pub(crate) fn document_symbol(
    s: &Snapshot,
    params: lsp::DocumentSymbolParams,
    slot: Option<&raw::Slot>,
) -> Result<Option<lsp::DocumentSymbolResponse>> {
    let Some(doc) = s.doc(&params.text_document.uri)? else { return Ok(None) };
    #[allow(deprecated)]
    fn convert_symbol(s: &Snapshot, index: &LineIndex, symbol: sr_ide::DocumentSymbol) -> lsp::DocumentSymbol {
        lsp::DocumentSymbol {
            name: symbol.name,
            detail: symbol.detail,
            kind: convert::symbol_kind(symbol.kind),
            tags: None,
            deprecated: None,
            range: convert::range(index, symbol.full_range, s.encoding),
            selection_range: convert::range(index, symbol.focus_range, s.encoding),
            // A leaf carries no `children` key rather than an empty list.
            children: (!symbol.children.is_empty())
                .then(|| symbol.children.into_iter().map(|c| convert_symbol(s, index, c)).collect()),
        }
    }
    let Some(slot) = slot else {
        let symbols =
            s.analysis.document_symbols(&doc.path)?.into_iter().map(|sym| convert_symbol(s, &doc.index, sym)).collect();
        return Ok(Some(lsp::DocumentSymbolResponse::Nested(symbols)));
    };
    let mut out = raw::Elements::new();
    let mut failed = None;
    s.analysis.each_document_symbol(&doc.path, |symbol| {
        if failed.is_none() {
            failed = out.push(&convert_symbol(s, &doc.index, symbol)).err();
        }
    })?;
    match failed {
        None => out.answer(slot),
        Some(e) => return Err(Failure::Refused(format!("cannot serialise the document symbols: {e}"))),
    }
    Ok(None)
}

pub(crate) fn workspace_symbol(
    s: &Snapshot,
    params: lsp::WorkspaceSymbolParams,
) -> Result<Option<lsp::WorkspaceSymbolResponse>> {
    let mut out = Vec::new();
    for target in s.analysis.workspace_symbols(&params.query)? {
        if let Some(location) = s.location(&target.path, target.focus_range)? {
            out.push(lsp::WorkspaceSymbol {
                name: target.name,
                kind: convert::symbol_kind(target.kind),
                tags: None,
                container_name: None,
                location: OneOf::Left(location),
                data: None,
            });
        }
    }
    Ok(Some(lsp::WorkspaceSymbolResponse::Nested(out)))
}

/// Semantic tokens of a document (or of a range of it).
pub(crate) fn semantic_tokens(
    s: &Snapshot,
    uri: &Uri,
    range: Option<lsp::Range>,
) -> Result<Option<Vec<lsp::SemanticToken>>> {
    let Some(doc) = s.doc(uri)? else { return Ok(None) };
    let range = range.map(|r| convert::text_range(&doc.index, r, s.encoding));
    let highlighted = s.analysis.highlight(&doc.path, range)?;
    Ok(Some(crate::semantic::encode(&doc.index, &highlighted, s.encoding)))
}

pub(crate) fn folding_range(s: &Snapshot, params: lsp::FoldingRangeParams) -> Result<Option<Vec<lsp::FoldingRange>>> {
    let Some(doc) = s.doc(&params.text_document.uri)? else { return Ok(None) };
    let folds = s
        .analysis
        .folding_ranges(&doc.path)?
        .into_iter()
        .map(|f| {
            let range = convert::range(&doc.index, f.range, s.encoding);
            lsp::FoldingRange {
                start_line: range.start.line,
                end_line: range.end.line,
                kind: Some(match f.kind {
                    sr_ide::FoldKind::Comment => lsp::FoldingRangeKind::Comment,
                    sr_ide::FoldKind::Region => lsp::FoldingRangeKind::Region,
                }),
                ..Default::default()
            }
        })
        .collect();
    Ok(Some(folds))
}

pub(crate) fn selection_range(
    s: &Snapshot,
    params: lsp::SelectionRangeParams,
) -> Result<Option<Vec<lsp::SelectionRange>>> {
    let Some(doc) = s.doc(&params.text_document.uri)? else { return Ok(None) };
    let offsets: Vec<_> = params.positions.iter().map(|p| convert::offset(&doc.index, *p, s.encoding)).collect();
    let out = s
        .analysis
        .selection_ranges(&doc.path, &offsets)?
        .into_iter()
        .map(|ranges| {
            let mut selection: Option<lsp::SelectionRange> = None;
            for range in ranges.into_iter().rev() {
                selection = Some(lsp::SelectionRange {
                    range: convert::range(&doc.index, range, s.encoding),
                    parent: selection.map(Box::new),
                });
            }
            selection.unwrap_or(lsp::SelectionRange { range: lsp::Range::default(), parent: None })
        })
        .collect();
    Ok(Some(out))
}

fn text_edits(doc: &Doc, s: &Snapshot, edits: Vec<sr_fmt::Edit>) -> Vec<lsp::TextEdit> {
    edits
        .into_iter()
        .map(|e| lsp::TextEdit { range: convert::range(&doc.index, e.range, s.encoding), new_text: e.new_text })
        .collect()
}

/// Refused, saying why, when the document does not parse (nothing to format safely).
pub(crate) fn formatting(s: &Snapshot, uri: &Uri, range: Option<lsp::Range>) -> Result<Option<Vec<lsp::TextEdit>>> {
    let Some(doc) = s.doc(uri)? else { return Ok(None) };
    let Some(text) = s.analysis.file_text(&doc.path)? else { return Ok(None) };
    let edits = match range {
        None => sr_fmt::format_edits(&text),
        Some(range) => sr_fmt::format_range(&text, convert::text_range(&doc.index, range, s.encoding)),
    };
    match edits {
        Ok(edits) => Ok(Some(text_edits(&doc, s, edits))),
        Err(error @ sr_fmt::FormatError::Syntax(_)) => {
            let sr_fmt::FormatError::Syntax(first) = &error;
            let line = doc.index.line_col(first.range.start()).line + 1;
            Err(Failure::Refused(format!("{error} (line {line})")))
        }
    }
}

/// The kind of "move item to file" (LSP names no move kind; TypeScript's
/// server uses this one).
pub(crate) const REFACTOR_MOVE: lsp::CodeActionKind = lsp::CodeActionKind::new("refactor.move");

pub(crate) fn code_action(s: &Snapshot, params: lsp::CodeActionParams) -> Result<Option<lsp::CodeActionResponse>> {
    let Some(doc) = s.doc(&params.text_document.uri)? else { return Ok(None) };
    let range = convert::text_range(&doc.index, params.range, s.encoding);
    let only = params.context.only.as_deref();
    let mut out = Vec::new();
    for action in s.analysis.code_actions(&FileRange { path: doc.path.clone(), range })? {
        let kind = match action.kind {
            sr_ide::ActionKind::QuickFix => lsp::CodeActionKind::QUICKFIX,
            sr_ide::ActionKind::Extract => lsp::CodeActionKind::REFACTOR_EXTRACT,
            sr_ide::ActionKind::Inline => lsp::CodeActionKind::REFACTOR_INLINE,
            sr_ide::ActionKind::Move => REFACTOR_MOVE,
        };
        // `only: ["refactor"]` asks for every refactor.
        let asked = |k: &lsp::CodeActionKind| {
            kind.as_str() == k.as_str() || kind.as_str().starts_with(&format!("{}.", k.as_str()))
        };
        if only.is_some_and(|only| !only.iter().any(asked)) || (!action.change.new_files.is_empty() && !s.create_files)
        {
            continue;
        }
        let diagnostics = match &action.diagnostic {
            Some(d) => Some(vec![diagnostic(s, &doc.path, &doc.index, &mut Indexes::default(), d)?]),
            None => None,
        };
        let edit = match action.disabled {
            None => Some(s.workspace_edit(action.change)?),
            Some(_) => None,
        };
        out.push(lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
            title: action.title,
            kind: Some(kind),
            diagnostics,
            edit,
            is_preferred: action.is_preferred.then_some(true),
            disabled: action.disabled.map(|reason| lsp::CodeActionDisabled { reason }),
            ..Default::default()
        }));
    }
    Ok(Some(out))
}

/// Files renamed in the editor: the edit that keeps the imports naming them right.
pub(crate) fn will_rename_files(s: &Snapshot, params: lsp::RenameFilesParams) -> Result<Option<lsp::WorkspaceEdit>> {
    let renames: Vec<(PathBuf, PathBuf)> = params
        .files
        .iter()
        .filter_map(|f| Some((path_of(&f.old_uri.parse().ok()?), path_of(&f.new_uri.parse().ok()?))))
        .collect();
    let change = s.analysis.will_rename_files(&renames)?;
    if change.edits.is_empty() {
        return Ok(None);
    }
    Ok(Some(s.workspace_edit(change)?))
}

pub(crate) fn code_lens(s: &Snapshot, params: lsp::CodeLensParams) -> Result<Option<Vec<lsp::CodeLens>>> {
    let Some(doc) = s.doc(&params.text_document.uri)? else { return Ok(None) };
    if !s.config.code_lens {
        return Ok(Some(Vec::new()));
    }
    let lens = |range, title: &str, command: &str, arguments| lsp::CodeLens {
        range: convert::range(&doc.index, range, s.encoding),
        command: Some(lsp::Command {
            title: title.to_string(),
            command: command.to_string(),
            arguments: Some(arguments),
        }),
        data: None,
    };
    let mut out = Vec::new();
    for runnable in s.analysis.runnables(&doc.path)? {
        let args =
            serde_json::to_value(crate::runnable::LensRunnable::from(&runnable)).expect("a runnable is plain data");
        for (title, command) in [("▶ Run", CommandName::Run), ("Debug", CommandName::Debug)] {
            out.push(lens(runnable.range, title, command.name(), vec![args.clone()]));
        }
    }
    for tryable in s.analysis.tryables(&doc.path)? {
        let args = serde_json::to_value(crate::runnable::LensTry::from(&tryable)).expect("a try is plain data");
        out.push(lens(tryable.range, "Try", CommandName::Try.name(), vec![args]));
    }
    for prompt in s.analysis.previewable_prompts(&doc.path)? {
        let arguments = vec![json!(params.text_document.uri.as_str()), json!(prompt.name)];
        out.push(lens(prompt.range, "Preview", CommandName::PreviewPrompt.name(), arguments));
    }
    for name in s.analysis.reference_lenses(&doc.path)? {
        let range = convert::range(&doc.index, name, s.encoding);
        let data = json!({ "references": { "uri": params.text_document.uri.as_str(), "position": range.start } });
        out.push(lsp::CodeLens { range, command: None, data: Some(data) });
    }
    Ok(Some(out))
}

/// A references-count lens: "N references", which shows them
/// (`streetrace.showReferences`, with `editor.action.showReferences`'
/// arguments: the document's URI, the position and the locations). Any other
/// lens comes back as it was.
pub(crate) fn code_lens_resolve(s: &Snapshot, mut lens: lsp::CodeLens) -> Result<lsp::CodeLens> {
    let Some(at) = lens.data.as_ref().map(|d| d["references"].clone()) else { return Ok(lens) };
    let (Some(uri), Ok(position)) = (
        at["uri"].as_str().and_then(|u| u.parse::<Uri>().ok()),
        serde_json::from_value::<lsp::Position>(at["position"].clone()),
    ) else {
        return Ok(lens);
    };
    let Some(doc) = s.doc(&uri)? else { return Ok(lens) };
    let offset = convert::offset(&doc.index, position, s.encoding);
    let mut locations = Vec::new();
    for r in s.analysis.find_references(&FilePosition { path: doc.path, offset }, false)? {
        locations.extend(s.location(&r.path, r.range)?);
    }
    let title = match locations.len() {
        1 => "1 reference".to_string(),
        n => format!("{n} references"),
    };
    lens.command = Some(lsp::Command {
        title,
        command: crate::command_names::SHOW_REFERENCES.to_string(),
        arguments: Some(vec![json!(uri.as_str()), json!(position), json!(locations)]),
    });
    Ok(lens)
}

pub(crate) fn inlay_hint(s: &Snapshot, params: lsp::InlayHintParams) -> Result<Option<Vec<lsp::InlayHint>>> {
    let Some(doc) = s.doc(&params.text_document.uri)? else { return Ok(None) };
    if !s.config.inlay_hints {
        return Ok(Some(Vec::new()));
    }
    let range = convert::text_range(&doc.index, params.range, s.encoding);
    let hints = s
        .analysis
        .inlay_hints(&doc.path, Some(range))?
        .into_iter()
        .map(|h| lsp::InlayHint {
            position: convert::position(&doc.index, h.offset, s.encoding),
            padding_left: Some(h.kind != sr_ide::InlayKind::Type),
            kind: (h.kind == sr_ide::InlayKind::Type).then_some(lsp::InlayHintKind::TYPE),
            label: lsp::InlayHintLabel::String(h.label),
            text_edits: None,
            tooltip: h.tooltip.map(lsp::InlayHintTooltip::String),
            padding_right: None,
            data: None,
        })
        .collect();
    Ok(Some(hints))
}

pub(crate) fn prepare_call_hierarchy(
    s: &Snapshot,
    params: lsp::CallHierarchyPrepareParams,
) -> Result<Option<Vec<lsp::CallHierarchyItem>>> {
    let Some((_, position)) = s.position(&params.text_document_position_params)? else { return Ok(None) };
    let Some(target) = s.analysis.prepare_call_hierarchy(&position)? else { return Ok(None) };
    Ok(s.call_item(&target)?.map(|item| vec![item]))
}

pub(crate) fn incoming_calls(
    s: &Snapshot,
    params: lsp::CallHierarchyIncomingCallsParams,
) -> Result<Option<Vec<lsp::CallHierarchyIncomingCall>>> {
    let Some(target) = s.navigation_target(&params.item)? else { return Ok(None) };
    let mut out = Vec::new();
    for (caller, ranges) in s.analysis.incoming_calls(&target)? {
        let Some(from) = s.call_item(&caller)? else { continue };
        let mut from_ranges = Vec::new();
        for range in ranges {
            from_ranges.extend(s.range_in(&caller.path, range)?);
        }
        out.push(lsp::CallHierarchyIncomingCall { from, from_ranges });
    }
    Ok(Some(out))
}

pub(crate) fn outgoing_calls(
    s: &Snapshot,
    params: lsp::CallHierarchyOutgoingCallsParams,
) -> Result<Option<Vec<lsp::CallHierarchyOutgoingCall>>> {
    let Some(source) = s.navigation_target(&params.item)? else { return Ok(None) };
    let mut out = Vec::new();
    for (callee, ranges) in s.analysis.outgoing_calls(&source)? {
        let Some(to) = s.call_item(&callee)? else { continue };
        let mut from_ranges = Vec::new();
        for range in ranges {
            from_ranges.extend(s.range_in(&source.path, range)?);
        }
        out.push(lsp::CallHierarchyOutgoingCall { to, from_ranges });
    }
    Ok(Some(out))
}

pub(crate) fn document_link(s: &Snapshot, params: lsp::DocumentLinkParams) -> Result<Option<Vec<lsp::DocumentLink>>> {
    let Some(doc) = s.doc(&params.text_document.uri)? else { return Ok(None) };
    let links = s
        .analysis
        .document_links(&doc.path)?
        .into_iter()
        .map(|(range, target)| lsp::DocumentLink {
            range: convert::range(&doc.index, range, s.encoding),
            target: s.uri(&target),
            tooltip: Some(target.display().to_string()),
            data: None,
        })
        .collect();
    Ok(Some(links))
}
