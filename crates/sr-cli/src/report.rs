//! Rendering check results: rustc-style snippets (annotate-snippets) and
//! upstream's JSON document.
//!
//! Columns in JSON are 1-based character columns; `end_column` is exclusive.
//! They equal upstream's stored (Lark) columns.

use std::io::Write;
use std::path::Path;

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use serde::Serialize;
use serde_json::json;
use sr_syntax::line_index::Encoding;
use sr_syntax::{Diagnostic, LineIndex, Severity};

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
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

/// Writes upstream's JSON document (pretty, as upstream prints it). With
/// `upstream`, locations are where upstream's `check` puts them. Each entry is
/// serialized as it is written: 200,000 diagnostics once took about 1 GB as a
/// `serde_json::Value` tree.
pub fn write_json(report: &FileReport, upstream: bool, out: &mut impl Write) -> std::io::Result<()> {
    let index = LineIndex::new(&report.text);
    let entries = |severity| Entries { report, index: &index, upstream, severity };
    let document = Document {
        version: "1.0",
        file: &report.path,
        valid: !report.diagnostics.iter().any(|d| d.severity == Severity::Error),
        errors: entries(Severity::Error),
        warnings: entries(Severity::Warning),
        stats: report.stats,
    };
    serde_json::to_writer_pretty(&mut *out, &document)?;
    out.write_all(b"\n")
}

#[derive(Serialize)]
struct Document<'a> {
    version: &'static str,
    file: &'a str,
    valid: bool,
    errors: Entries<'a>,
    warnings: Entries<'a>,
    stats: Stats,
}

/// The diagnostics of one severity, made into JSON one at a time.
struct Entries<'a> {
    report: &'a FileReport,
    index: &'a LineIndex,
    upstream: bool,
    severity: Severity,
}

impl Serialize for Entries<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let diagnostics = self.report.diagnostics.iter().filter(|d| d.severity == self.severity);
        serializer.collect_seq(diagnostics.map(|d| entry(d, &self.report.path, self.index, self.upstream)))
    }
}

#[derive(Serialize)]
struct Entry<'a> {
    severity: &'static str,
    message: String,
    location: Location<'a>,
    code: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    help: Option<String>,
}

#[derive(Serialize)]
struct Location<'a> {
    file: &'a str,
    line: i64,
    column: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_column: Option<u32>,
}

fn entry<'a>(d: &Diagnostic, file: &'a str, index: &LineIndex, upstream: bool) -> Entry<'a> {
    let location = match d.upstream_position {
        Some((line, column)) if upstream => {
            Location { file, line: line.into(), column: column.into(), end_line: None, end_column: None }
        }
        _ => Location {
            file,
            line: i64::from(index.line_col(d.range.start()).line) + 1,
            column: i64::from(index.col_in(d.range.start(), Encoding::Char)) + 1,
            end_line: Some(index.line_col(d.range.end()).line + 1),
            end_column: Some(index.col_in(d.range.end(), Encoding::Char) + 1),
        },
    };
    Entry { severity: d.severity.as_str(), message: d.message(), location, code: d.code().as_str(), help: d.help() }
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
