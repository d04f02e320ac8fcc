//! Rendering check results: rustc-style snippets (annotate-snippets) and
//! upstream's JSON document.
//!
//! Columns in JSON are 1-based character columns; `end_column` is exclusive.
//! They equal upstream's stored (Lark) columns.

use std::path::Path;

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use serde_json::{Value, json};
use sr_syntax::line_index::Encoding;
use sr_syntax::{Diagnostic, LineIndex, Severity};

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    pub models: usize,
    pub agents: usize,
    pub flows: usize,
    pub handlers: usize,
}

pub struct FileReport {
    pub path: String,
    pub text: String,
    pub diagnostics: Vec<Diagnostic>,
    pub stats: Stats,
}

/// `valid (1 model, 2 agents, 1 flow, 3 handlers)` as upstream prints it.
pub fn success_line(stats: Stats) -> String {
    let parts: Vec<String> =
        [(stats.models, "model"), (stats.agents, "agent"), (stats.flows, "flow"), (stats.handlers, "handler")]
            .into_iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}{}", if n == 1 { "" } else { "s" }))
            .collect();
    if parts.is_empty() { "valid".to_string() } else { format!("valid ({})", parts.join(", ")) }
}

/// Styled text; print it through `anstream`, which strips the styles when the
/// output is not a terminal or colors are turned off.
pub fn text(report: &FileReport, with_path: bool) -> String {
    if report.diagnostics.is_empty() {
        let line = success_line(report.stats);
        return if with_path { format!("{}: {line}\n", report.path) } else { format!("{line}\n") };
    }
    let renderer = Renderer::styled();
    let index = LineIndex::new(&report.text);
    let mut out = String::new();
    for diagnostic in &report.diagnostics {
        out.push_str(&renderer.render(&snippet(report, &index, diagnostic)));
        out.push_str("\n\n");
    }
    let errors = report.diagnostics.iter().filter(|d| d.severity == Severity::Error).count();
    let warnings = report.diagnostics.len() - errors;
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let summary = match (errors, warnings) {
        (e, 0) => plural(e, "error"),
        (0, w) => plural(w, "warning"),
        (e, w) => format!("{} and {}", plural(e, "error"), plural(w, "warning")),
    };
    out.push_str(&format!("Found {summary} in {}\n", report.path));
    out
}

/// One diagnostic as a snippet of the lines its spans cover, not of the whole
/// file: the renderer scans the text it is given, so a file with many
/// diagnostics would otherwise cost its size times their number.
fn snippet<'a>(report: &'a FileReport, index: &LineIndex, d: &'a Diagnostic) -> Vec<Group<'a>> {
    let level = match d.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    let text = report.text.as_str();
    let primary = clamp(d.range.start().into(), d.range.end().into(), text);
    let local: Vec<_> = d
        .related
        .iter()
        .filter(|r| r.file.is_none())
        .map(|r| (clamp(r.range.start().into(), r.range.end().into(), text), r.message.as_str()))
        .collect();
    let spans = std::iter::once(&primary).chain(local.iter().map(|(span, _)| span));
    let (first, last) = spans.fold((primary.start, primary.end), |(a, b), s| (a.min(s.start), b.max(s.end)));
    let first_line = index.line_col((first as u32).into()).line;
    let window_start = usize::from(index.offset(first_line, 0, Encoding::Utf8));
    let window_end = text[last..].find('\n').map_or(text.len(), |i| last + i);
    let shift = |span: &std::ops::Range<usize>| span.start - window_start..span.end - window_start;
    let mut source = Snippet::source(&text[window_start..window_end])
        .line_start(first_line as usize + 1)
        .path(report.path.as_str())
        .fold(true)
        .annotation(AnnotationKind::Primary.span(shift(&primary)));
    for (span, message) in &local {
        source = source.annotation(AnnotationKind::Context.span(shift(span)).label(*message));
    }
    let elsewhere = d.related.iter().filter_map(|r| r.file.as_ref().map(|file| format!("{file}: {}", r.message)));
    let mut group = level.primary_title(d.message()).id(d.code().as_str()).element(source);
    if let Some(help) = d.help() {
        group = group.element(Level::HELP.message(help));
    }
    for note in elsewhere {
        group = group.element(Level::NOTE.message(note));
    }
    vec![group]
}

/// Keeps a span inside the text and on character boundaries.
fn clamp(start: usize, end: usize, text: &str) -> std::ops::Range<usize> {
    let fix = |mut i: usize| {
        i = i.min(text.len());
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    fix(start)..fix(end)
}

/// Upstream's JSON document. With `upstream`, locations are where upstream's
/// `check` puts them.
pub fn json(report: &FileReport, upstream: bool) -> String {
    let index = LineIndex::new(&report.text);
    let entries = |severity: Severity| -> Vec<Value> {
        report
            .diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .map(|d| diagnostic_json(d, &report.path, &index, upstream))
            .collect()
    };
    let errors = entries(Severity::Error);
    let document = json!({
        "version": "1.0",
        "file": report.path,
        "valid": errors.is_empty(),
        "errors": errors,
        "warnings": entries(Severity::Warning),
        "stats": {
            "models": report.stats.models,
            "agents": report.stats.agents,
            "flows": report.stats.flows,
            "handlers": report.stats.handlers,
        },
    });
    format!("{document:#}")
}

fn diagnostic_json(d: &Diagnostic, file: &str, index: &LineIndex, upstream: bool) -> Value {
    let start = index.line_col(d.range.start());
    let end = index.line_col(d.range.end());
    let location = match d.upstream_position {
        Some((line, column)) if upstream => json!({"file": file, "line": line, "column": column}),
        _ => json!({
            "file": file,
            "line": start.line + 1,
            "column": index.col_in(d.range.start(), Encoding::Char) + 1,
            "end_line": end.line + 1,
            "end_column": index.col_in(d.range.end(), Encoding::Char) + 1,
        }),
    };
    let mut value = json!({
        "severity": d.severity.as_str(),
        "message": d.message(),
        "location": location,
        "code": d.code().as_str(),
    });
    if let Some(help) = d.help() {
        value["help"] = json!(help);
    }
    value
}

/// Upstream's JSON for a file that could not be read.
pub fn json_file_error(path: &Path, message: &str) -> String {
    let document = json!({
        "version": "1.0",
        "file": path.display().to_string(),
        "valid": true,
        "errors": [],
        "warnings": [],
        "stats": { "error": message },
    });
    format!("{document:#}")
}
