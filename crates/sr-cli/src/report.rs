//! Rendering check results: rustc-style snippets (annotate-snippets) and
//! upstream's JSON document.
//!
//! Columns in JSON are 1-based character columns; `end_column` is exclusive.
//! They equal upstream's stored (Lark) columns.

use std::io::Write;
use std::path::Path;

use annotate_snippets::renderer::DEFAULT_LINE_NUM_STYLE;
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use serde::Serialize;
use serde_json::json;
use sr_hir::Diagnostic;
use sr_syntax::line_index::Encoding;
use sr_syntax::{LineIndex, Severity};

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Stats {
    pub models: usize,
    pub agents: usize,
    pub flows: usize,
    pub handlers: usize,
}

pub struct FileReport {
    pub path: String,
    /// The file's text and line index, shared with the database (a 10 MB
    /// file is not copied for its report).
    pub index: LineIndex,
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

/// How many diagnostics of one file the text output draws by default; the
/// rest are counted (`--format json` lists them all).
pub const DEFAULT_MAX_DRAWN: usize = 100;

/// How many diagnostics of one line are drawn: a line of 40,000 invalid
/// characters shows a few and counts the rest.
const MAX_DRAWN_PER_LINE: usize = 5;

/// Styled text; print it through `anstream`, which strips the styles when the
/// output is not a terminal or colors are turned off. At most `max_drawn`
/// diagnostics are drawn, and [`MAX_DRAWN_PER_LINE`] per line: the others are
/// counted in a line of their own, before the summary (which counts them all).
pub fn text(report: &FileReport, with_path: bool, max_drawn: usize) -> String {
    if report.diagnostics.is_empty() {
        let line = success_line(report.stats);
        return if with_path { format!("{}: {line}\n", report.path) } else { format!("{line}\n") };
    }
    let renderer = Renderer::styled();
    let index = &report.index;
    let mut out = String::new();
    let (mut drawn, mut on_line, mut last_line) = (0, 0, None);
    let mut hidden = Counts::default();
    for diagnostic in &report.diagnostics {
        let line = index.line_col(diagnostic.range.start()).line;
        on_line = if last_line == Some(line) { on_line + 1 } else { 1 };
        last_line = Some(line);
        if drawn >= max_drawn || on_line > MAX_DRAWN_PER_LINE {
            hidden.add(diagnostic.severity);
            continue;
        }
        drawn += 1;
        out.push_str(&render(&renderer, report, index, diagnostic));
        out.push_str("\n\n");
    }
    if hidden.total() > 0 {
        out.push_str(&format!(
            "… and {} in this file (at most {max_drawn} diagnostics are drawn, {MAX_DRAWN_PER_LINE} per line; `--max-diagnostics N` draws more, `--format json` lists every one)\n\n",
            hidden.describe("more "),
        ));
    }
    let mut all = Counts::default();
    report.diagnostics.iter().for_each(|d| all.add(d.severity));
    out.push_str(&format!("Found {} in {}\n", all.describe(""), report.path));
    out
}

/// Errors and warnings, counted.
#[derive(Default)]
struct Counts {
    errors: usize,
    warnings: usize,
}

impl Counts {
    fn add(&mut self, severity: Severity) {
        match severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
        }
    }

    fn total(&self) -> usize {
        self.errors + self.warnings
    }

    /// "3 errors", "1 warning", "2 errors and 1 warning"; with `more`
    /// before the nouns ("3 more errors").
    fn describe(&self, more: &str) -> String {
        let plural = |n: usize, what: &str| format!("{n} {more}{what}{}", if n == 1 { "" } else { "s" });
        match (self.errors, self.warnings) {
            (e, 0) => plural(e, "error"),
            (0, w) => plural(w, "warning"),
            (e, w) => format!("{} and {}", plural(e, "error"), plural(w, "warning")),
        }
    }
}

/// The most source text one diagnostic shows, in bytes: the lines its spans
/// cover, unless they are longer; then a window of the primary span's line.
const MAX_SHOWN: usize = 1024;

/// Bytes of the line kept before and after the primary span in a window.
const CONTEXT: usize = 60;

/// The most of the primary span a window shows, in bytes.
const MAX_SPAN: usize = 240;

/// One diagnostic as a snippet of the lines its spans cover, not of the whole
/// file, and of a window of its line when those are long: the renderer scans
/// the text it is given, so a file with many diagnostics on a long line would
/// otherwise cost the line's length times their number.
fn render(renderer: &Renderer, report: &FileReport, index: &LineIndex, d: &Diagnostic) -> String {
    let level = match d.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    let text = index.text();
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
    // The end of the last span's line, looked for no further than could be shown.
    let limit = (window_start + MAX_SHOWN + 1).max(last).min(text.len());
    let window_end = match text[last..limit].find('\n') {
        Some(i) => Some(last + i),
        None => (limit == text.len()).then_some(limit),
    };
    let mut group = Group::with_title(level.primary_title(d.message()).id(d.code().as_str()));
    // A window has no location the renderer could compute: it is written
    // after the title, where the renderer puts a snippet's.
    let mut location = None;
    match window_end.filter(|end| end - window_start <= MAX_SHOWN) {
        Some(window_end) => {
            let shift = |span: &std::ops::Range<usize>| span.start - window_start..span.end - window_start;
            let mut source = Snippet::source(&text[window_start..window_end])
                .line_start(first_line as usize + 1)
                .path(report.path.as_str())
                .fold(true)
                .annotation(AnnotationKind::Primary.span(shift(&primary)));
            for (span, message) in &local {
                source = source.annotation(AnnotationKind::Context.span(shift(span)).label(*message));
            }
            group = group.element(source);
        }
        None => {
            let (window, source) = window(text, index, &primary);
            let line = index.line_col((primary.start as u32).into()).line;
            let column = index.col_in((primary.start as u32).into(), Encoding::Char);
            let mut snippet = Snippet::source(source)
                .line_start(line as usize + 1)
                .annotation(AnnotationKind::Primary.span(window.primary));
            for (span, message) in &local {
                if span.start >= window.start && span.end <= window.end {
                    let span = span.start - window.start + window.shift..span.end - window.start + window.shift;
                    snippet = snippet.annotation(AnnotationKind::Context.span(span).label(*message));
                }
            }
            group = group.element(snippet);
            let width = (line + 1).to_string().len();
            let arrow = DEFAULT_LINE_NUM_STYLE;
            location = Some(format!("{:width$}{arrow}-->{arrow:#} {}:{}:{}\n", "", report.path, line + 1, column + 1));
        }
    }
    if let Some(help) = d.help() {
        group = group.element(Level::HELP.message(help));
    }
    for r in &d.related {
        if let Some(file) = &r.file {
            group = group.element(Level::NOTE.message(format!("{file}: {}", r.message)));
        }
    }
    let mut out = renderer.render(&[group]);
    if let Some(location) = location {
        let title_end = out.find('\n').map_or(out.len(), |i| i + 1);
        out.insert_str(title_end, &location);
    }
    out
}

/// Where a window of a long line lies: `start..end` of the text, shown after
/// `shift` bytes of marker, with the primary span at `primary` in what is shown.
struct Window {
    start: usize,
    end: usize,
    shift: usize,
    primary: std::ops::Range<usize>,
}

/// A window of the primary span's line: [`CONTEXT`] bytes either side of the
/// span's first [`MAX_SPAN`] bytes, with `…` where the line goes on.
fn window(text: &str, index: &LineIndex, primary: &std::ops::Range<usize>) -> (Window, String) {
    let line = index.line_col((primary.start as u32).into()).line;
    let line_start = usize::from(index.offset(line, 0, Encoding::Utf8));
    let start = floor_char(text, primary.start.saturating_sub(CONTEXT).max(line_start));
    let span_end = primary.end.min(primary.start + MAX_SPAN);
    let limit = (span_end + CONTEXT).min(text.len());
    let end = floor_char(text, text[primary.start..limit].find('\n').map_or(limit, |i| primary.start + i));
    let span_end = floor_char(text, span_end.min(end));
    let before = if start > line_start { "…" } else { "" };
    let after = if end < text.len() && !text[end..].starts_with(['\n', '\r']) { "…" } else { "" };
    let shown = format!("{before}{}{after}", &text[start..end]);
    let shift = before.len();
    let primary = primary.start - start + shift..span_end.max(primary.start) - start + shift;
    (Window { start, end, shift, primary }, shown)
}

/// `i`, or the nearest character boundary before it.
fn floor_char(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Keeps a span inside the text and on character boundaries.
fn clamp(start: usize, end: usize, text: &str) -> std::ops::Range<usize> {
    floor_char(text, start)..floor_char(text, end)
}

/// Writes upstream's JSON document (pretty, as upstream prints it). With
/// `upstream`, locations are where upstream's `check` puts them. Each entry is
/// serialized as it is written: 200,000 diagnostics once took about 1 GB as a
/// `serde_json::Value` tree.
pub fn write_json(report: &FileReport, upstream: bool, out: &mut impl Write) -> std::io::Result<()> {
    let entries = |severity| Entries { report, index: &report.index, upstream, severity };
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

/// `sr check --format json`'s output on stdout: one document, or with
/// `array`, one JSON array of the files' documents.
pub struct JsonOut {
    out: std::io::BufWriter<std::io::StdoutLock<'static>>,
    array: bool,
    written: usize,
}

impl JsonOut {
    pub fn new(array: bool) -> JsonOut {
        JsonOut { out: std::io::BufWriter::new(std::io::stdout().lock()), array, written: 0 }
    }

    pub fn report(&mut self, report: &FileReport, upstream: bool) -> std::io::Result<()> {
        self.separate()?;
        write_json(report, upstream, &mut self.out)?;
        self.out.flush()
    }

    pub fn file_error(&mut self, path: &Path, message: &str) -> std::io::Result<()> {
        self.separate()?;
        writeln!(self.out, "{}", json_file_error(path, message))?;
        self.out.flush()
    }

    /// Closes the array.
    pub fn finish(mut self) -> std::io::Result<()> {
        if self.array {
            let close: &[u8] = if self.written == 0 { b"[]\n" } else { b"]\n" };
            self.out.write_all(close)?;
        }
        self.out.flush()
    }

    fn separate(&mut self) -> std::io::Result<()> {
        if self.array {
            self.out.write_all(if self.written == 0 { b"[\n" } else { b",\n" })?;
        }
        self.written += 1;
        Ok(())
    }
}

/// Upstream's JSON for a file that could not be read.
fn json_file_error(path: &Path, message: &str) -> String {
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
