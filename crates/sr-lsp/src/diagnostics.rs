//! Diagnostics by file, for pushing ([`crate::publish`]) and for pulling
//! (`textDocument/diagnostic`, `workspace/diagnostic`). A report's result id
//! is a hash of its diagnostics, so the client's `previousResultId` is
//! current exactly when nothing it shows has changed; the server keeps no
//! per-client state for it.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use sr_ide::Cancellable;
use tower_lsp_server::ls_types::{self as lsp, Uri};

use crate::convert::path_of;
use crate::handlers::{Indexes, file_diagnostics};
use crate::owner::Snapshot;

/// The diagnostics of one file and the document version they are for
/// (`None` for a file the editor does not have open).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FileReport {
    pub uri: Uri,
    pub version: Option<i32>,
    pub items: Vec<lsp::Diagnostic>,
}

impl Snapshot {
    pub(crate) fn in_workspace(&self, path: &Path) -> bool {
        self.roots.iter().any(|root| path.starts_with(root))
    }
}

/// The report of one file; `None` for a file the database does not have.
pub(crate) fn report(s: &Snapshot, path: &Path, indexes: &mut Indexes) -> Cancellable<Option<FileReport>> {
    let (Some(uri), Some(items)) = (s.uri(path), file_diagnostics(s, path, indexes)?) else { return Ok(None) };
    Ok(Some(FileReport { uri, version: s.documents.get(path).map(|d| d.version), items }))
}

/// The reports of every file under a workspace folder, open or not, by path.
fn workspace_reports(s: &Snapshot) -> Cancellable<Vec<(PathBuf, FileReport)>> {
    let mut out = Vec::new();
    let mut indexes = Indexes::default();
    for path in s.analysis.files()?.into_iter().filter(|p| s.in_workspace(p)) {
        if let Some(report) = report(s, &path, &mut indexes)? {
            out.push((path, report));
        }
    }
    Ok(out)
}

/// A result id for `items`: equal ids mean equal diagnostics.
pub(crate) fn result_id(items: &[lsp::Diagnostic]) -> String {
    let mut hasher = std::hash::DefaultHasher::new();
    serde_json::to_string(items).unwrap_or_default().hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// `textDocument/diagnostic`: a full report, or `unchanged` when the
/// client's previous result is current. A file the server does not know has
/// no diagnostics.
pub(crate) fn document_report(
    s: &Snapshot,
    params: lsp::DocumentDiagnosticParams,
) -> Cancellable<lsp::DocumentDiagnosticReportResult> {
    let path = path_of(&params.text_document.uri);
    let items = file_diagnostics(s, &path, &mut Indexes::default())?.unwrap_or_default();
    let id = result_id(&items);
    let report = if params.previous_result_id.as_deref() == Some(id.as_str()) {
        lsp::DocumentDiagnosticReport::Unchanged(lsp::RelatedUnchangedDocumentDiagnosticReport {
            related_documents: None,
            unchanged_document_diagnostic_report: lsp::UnchangedDocumentDiagnosticReport { result_id: id },
        })
    } else {
        lsp::DocumentDiagnosticReport::Full(lsp::RelatedFullDocumentDiagnosticReport {
            related_documents: None,
            full_document_diagnostic_report: lsp::FullDocumentDiagnosticReport { result_id: Some(id), items },
        })
    };
    Ok(lsp::DocumentDiagnosticReportResult::Report(report))
}

/// `workspace/diagnostic`: a report for every file under the workspace
/// folders, `unchanged` where the client's previous result is current, and
/// an empty full report for each previously reported file that is gone
/// (deleted, or in a folder removed from the workspace).
pub(crate) fn workspace_report(
    s: &Snapshot,
    params: lsp::WorkspaceDiagnosticParams,
) -> Cancellable<lsp::WorkspaceDiagnosticReportResult> {
    let mut previous: HashMap<PathBuf, (Uri, String)> =
        params.previous_result_ids.into_iter().map(|p| (path_of(&p.uri), (p.uri, p.value))).collect();
    let mut items = Vec::new();
    for (path, report) in workspace_reports(s)? {
        let id = result_id(&report.items);
        let version = report.version.map(i64::from);
        let unchanged = previous.remove(&path).is_some_and(|(_, value)| value == id);
        items.push(if unchanged {
            lsp::WorkspaceDocumentDiagnosticReport::Unchanged(lsp::WorkspaceUnchangedDocumentDiagnosticReport {
                uri: report.uri,
                version,
                unchanged_document_diagnostic_report: lsp::UnchangedDocumentDiagnosticReport { result_id: id },
            })
        } else {
            full(report.uri, version, id, report.items)
        });
    }
    for (path, (uri, _)) in previous {
        if s.analysis.file_text(&path)?.is_none() {
            items.push(full(uri, None, result_id(&[]), Vec::new()));
        }
    }
    Ok(lsp::WorkspaceDiagnosticReportResult::Report(lsp::WorkspaceDiagnosticReport { items }))
}

fn full(
    uri: Uri,
    version: Option<i64>,
    id: String,
    items: Vec<lsp::Diagnostic>,
) -> lsp::WorkspaceDocumentDiagnosticReport {
    lsp::WorkspaceDocumentDiagnosticReport::Full(lsp::WorkspaceFullDocumentDiagnosticReport {
        uri,
        version,
        full_document_diagnostic_report: lsp::FullDocumentDiagnosticReport { result_id: Some(id), items },
    })
}
