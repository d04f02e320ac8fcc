//! Every IDE feature run over one text, checking what any feature must
//! guarantee: no panic, every range inside the file on character boundaries,
//! no symbol or completion without a name.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use sr_ide::{AnalysisHost, DiagnosticsMode, FilePosition, FileRange, TextRange, TextSize};
use sr_testing::random::Rng;

struct Checked<'a> {
    text: &'a str,
    what: String,
}

impl Checked<'_> {
    fn range(&self, range: TextRange, feature: &str) {
        let (start, end) = (usize::from(range.start()), usize::from(range.end()));
        assert!(
            end <= self.text.len() && self.text.is_char_boundary(start) && self.text.is_char_boundary(end),
            "{feature}: range {range:?} is not inside the file ({} bytes)\n{}",
            self.text.len(),
            self.what
        );
    }

    fn name(&self, name: &str, feature: &str) {
        assert!(!name.trim().is_empty(), "{feature}: an empty name\n{}", self.what);
    }
}

/// Every feature on `text`, at `cursors`.
pub fn check_all(text: &str, cursors: &[TextSize], what: String) {
    let path = PathBuf::from("/work/main.sr");
    let mut host = AnalysisHost::new();
    host.set_file(&path, text);
    let analysis = host.analysis();
    let check = Checked { text, what };
    let at = |offset: TextSize| FilePosition { path: path.clone(), offset };
    let here = Path::new(&path);

    for mode in [DiagnosticsMode::Default, DiagnosticsMode::Upstream] {
        for diagnostic in analysis.diagnostics(here, mode).unwrap() {
            check.range(diagnostic.range, "diagnostic");
        }
    }
    fn symbols(check: &Checked, list: &[sr_ide::DocumentSymbol]) {
        for symbol in list {
            check.name(&symbol.name, "document symbol");
            check.range(symbol.full_range, "document symbol");
            check.range(symbol.focus_range, "document symbol");
            symbols(check, &symbol.children);
        }
    }
    symbols(&check, &analysis.document_symbols(here).unwrap());
    for target in analysis.workspace_symbols("").unwrap() {
        check.name(&target.name, "workspace symbol");
        check.range(target.full_range, "workspace symbol");
    }
    for token in analysis.highlight(here, None).unwrap() {
        check.range(token.range, "semantic token");
    }
    for fold in analysis.folding_ranges(here).unwrap() {
        check.range(fold.range, "folding range");
    }
    for hint in analysis.inlay_hints(here, None).unwrap() {
        check.range(TextRange::empty(hint.offset), "inlay hint");
    }
    for runnable in analysis.runnables(here).unwrap() {
        check.range(runnable.range, "code lens");
    }
    for name in analysis.reference_lenses(here).unwrap() {
        check.range(name, "references lens");
    }
    let moved = analysis.will_rename_files(&[(path.clone(), PathBuf::from("/work/sub/moved.sr"))]).unwrap();
    for (_, edits) in &moved.edits {
        edits.iter().for_each(|e| check.range(e.range, "file rename"));
    }
    for ranges in analysis.selection_ranges(here, cursors).unwrap() {
        ranges.iter().for_each(|r| check.range(*r, "selection range"));
    }

    for &offset in cursors {
        let position = at(offset);
        for target in analysis.goto_definition(&position).unwrap() {
            check.range(target.focus_range, "definition");
        }
        for reference in analysis.find_references(&position, true).unwrap() {
            check.range(reference.range, "reference");
        }
        for highlight in analysis.highlight_related(&position).unwrap() {
            check.range(highlight.range, "document highlight");
        }
        for target in analysis.goto_type_definition(&position).unwrap() {
            check.range(target.focus_range, "type definition");
        }
        if let Some(help) = analysis.signature_help(&position).unwrap() {
            check.name(&help.label, "signature help");
            for param in &help.parameters {
                let range = param.range;
                assert!(
                    usize::from(range.end()) <= help.label.len() && help.label.is_char_boundary(range.start().into()),
                    "signature help: parameter {range:?} outside {:?}\n{}",
                    help.label,
                    check.what
                );
            }
            assert!(help.active_parameter.is_none_or(|a| a < help.parameters.len()), "{}", check.what);
        }
        if let Some(hover) = analysis.hover(&position).unwrap() {
            check.range(hover.range, "hover");
        }
        for item in analysis.completions(&position, sr_ide::CompletionConfig { snippets: true }).unwrap() {
            check.name(&item.label, "completion");
            check.range(item.replace_range, "completion");
        }
        if let Ok(range) = analysis.prepare_rename(&position).unwrap() {
            check.range(range, "prepare rename");
            if let Ok(change) = analysis.rename(&position, "renamed_name").unwrap() {
                for (_, edits) in &change.edits {
                    edits.iter().for_each(|e| check.range(e.range, "rename"));
                }
            }
        }
        let line_end = text[usize::from(offset)..].find('\n').map_or(text.len(), |n| usize::from(offset) + n);
        let range = TextRange::new(offset, TextSize::from(line_end as u32));
        for action in analysis.code_actions(&FileRange { path: path.clone(), range }).unwrap() {
            for (_, edits) in &action.change.edits {
                edits.iter().for_each(|e| check.range(e.range, "code action"));
            }
        }
        if let Some(item) = analysis.prepare_call_hierarchy(&position).unwrap() {
            for (caller, ranges) in analysis.incoming_calls(&item).unwrap() {
                check.name(&caller.name, "incoming call");
                ranges.iter().for_each(|r| check.range(*r, "incoming call"));
            }
            for (callee, _) in analysis.outgoing_calls(&item).unwrap() {
                check.name(&callee.name, "outgoing call");
            }
        }
    }
}

/// Cursor offsets spread over `text`, on character boundaries, both ends included.
pub fn cursors(text: &str, rng: &mut Rng, count: usize) -> Vec<TextSize> {
    let mut out = vec![TextSize::from(0), TextSize::from(text.len() as u32)];
    for _ in 0..count {
        let mut offset = rng.below(text.len() + 1);
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        out.push(TextSize::from(offset as u32));
    }
    out
}
