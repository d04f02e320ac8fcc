//! Shared helpers of the per-feature tests.

use std::path::PathBuf;

use sr_testing::fixture::Fixture;

use crate::{Analysis, AnalysisHost, FilePosition, TextRange, TextSize};

/// A host loaded with the fixture's files, the fixture and its cursor.
pub(crate) fn analysis(text: &str) -> (Analysis, Fixture) {
    let fixture = Fixture::parse(text);
    let mut host = AnalysisHost::new();
    for (path, text) in &fixture.files {
        host.set_file(&PathBuf::from(path), text.as_str());
    }
    (host.analysis(), fixture)
}

pub(crate) fn position(fixture: &Fixture) -> FilePosition {
    let (path, offset) = fixture.position();
    FilePosition { path: PathBuf::from(path), offset: TextSize::from(offset) }
}

/// `path:start..end "text"` for a range of a fixture file.
/// Each file a change edits, as `//- PATH` and its text with the edits applied.
pub(crate) fn applied(fixture: &Fixture, change: &crate::SourceChange) -> String {
    let mut out = String::new();
    for (path, edits) in &change.edits {
        let mut text = fixture.text(path.to_str().unwrap()).to_string();
        for edit in edits.iter().rev() {
            text.replace_range(std::ops::Range::<usize>::from(edit.range), &edit.new_text);
        }
        out.push_str(&format!("//- {}\n{text}", path.display()));
    }
    out
}

pub(crate) fn show(fixture: &Fixture, path: &std::path::Path, range: TextRange) -> String {
    let text = fixture.text(path.to_str().unwrap());
    format!("{}:{:?} {:?}", path.display(), range, &text[range])
}

/// Calls `feature` at every byte offset of every file of the fixture (past
/// the end and inside multi-byte characters too): a feature must answer
/// anywhere, never panic.
pub(crate) fn at_every_offset(
    analysis: &Analysis,
    fixture: &Fixture,
    mut feature: impl FnMut(&Analysis, FilePosition),
) {
    for (path, text) in &fixture.files {
        for offset in 0..=text.len() + 1 {
            feature(analysis, FilePosition { path: PathBuf::from(path), offset: TextSize::from(offset as u32) });
        }
    }
}
