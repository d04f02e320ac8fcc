//! Inlay hints: the model each agent runs with, and the entry point.

use std::path::Path;

use sr_hir::{ItemKind, RootDatabase, file_items, item_syntax};
use sr_syntax::{SyntaxKind, TextRange, TextSize};

use crate::hover::{agent_model, model_value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InlayKind {
    Model,
    EntryPoint,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlayHint {
    /// Shown after this offset (the end of the item's header line).
    pub offset: TextSize,
    pub label: String,
    pub kind: InlayKind,
    pub tooltip: Option<String>,
}

pub(crate) fn inlay_hints(db: &RootDatabase, path: &Path, range: Option<TextRange>) -> Vec<InlayHint> {
    let Some(file) = db.file(path) else { return Vec::new() };
    let program = crate::namespace::analysis_program(db, file);
    let entry = sr_hir::entry::entry_point(db, file).filter(|e| e.item.file(db) == file);
    let mut out = Vec::new();
    for &item in file_items(db, file) {
        let header_end = header_end(db, item);
        if range.is_some_and(|r| !r.contains_inclusive(header_end)) {
            continue;
        }
        if item.kind(db) == ItemKind::Agent {
            let (label, tooltip) = match agent_model(db, program, item) {
                Some(model) => {
                    let value = model.item.and_then(|m| model_value(db, m));
                    let via = match &model.via_prompt {
                        Some(prompt) => format!("from the `using model` of prompt '{prompt}'"),
                        None => "the default model `main`".to_string(),
                    };
                    (
                        format!("model: {}", model.name),
                        Some(format!("{}{via}", value.map(|v| format!("{v}, ")).unwrap_or_default())),
                    )
                }
                None => {
                    ("model: --model".to_string(), Some("no model defined: the runner's `--model` is used".to_string()))
                }
            };
            out.push(InlayHint { offset: header_end, label, kind: InlayKind::Model, tooltip });
        }
        if entry.is_some_and(|e| e.item == item) {
            let tooltip = if entry.is_some_and(|e| e.upstream) {
                "the workload starts here".to_string()
            } else {
                "no upstream entry point: `sr run` starts here".to_string()
            };
            out.push(InlayHint {
                offset: header_end,
                label: "entry point".to_string(),
                kind: InlayKind::EntryPoint,
                tooltip: Some(tooltip),
            });
        }
    }
    out
}

/// The end of the last significant token on the item's first line.
fn header_end(db: &RootDatabase, item: sr_hir::Item<'_>) -> TextSize {
    let node = item_syntax(db, item);
    let mut end = TextSize::from(0);
    for token in node.descendants_with_tokens().filter_map(|e| e.into_token()) {
        if token.kind() == SyntaxKind::NEWLINE || token.text().contains('\n') {
            if token.kind() != SyntaxKind::NEWLINE {
                end = token.text_range().end();
            }
            break;
        }
        if !token.kind().is_trivia() {
            end = token.text_range().end();
        }
    }
    end + item.offset(db)
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::analysis;

    fn check(fixture: &str, expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        let text = fixture.text("/main.sr");
        let hints = analysis.inlay_hints(std::path::Path::new("/main.sr"), None).unwrap();
        let out: Vec<String> = hints
            .iter()
            .map(|h| {
                let line_start = text[..usize::from(h.offset)].rfind('\n').map_or(0, |i| i + 1);
                format!(
                    "{}⟨{}⟩ — {}",
                    &text[line_start..usize::from(h.offset)],
                    h.label,
                    h.tooltip.clone().unwrap_or_default()
                )
            })
            .collect();
        expect.assert_eq(&out.join("\n"));
    }

    #[test]
    fn resolved_model_of_each_agent_and_the_entry_point() {
        check(
            r#"
            model main = anthropic/claude
            model fast = anthropic/haiku
            prompt quick using model "fast": """q"""
            prompt slow: """s"""
            agent a:  # first
                instruction quick
            agent b:
                instruction slow
            flow main:
                $x = run agent a
            "#,
            expect![[r#"
                agent a:⟨model: fast⟩ — anthropic/haiku, from the `using model` of prompt 'quick'
                agent b:⟨model: main⟩ — anthropic/claude, the default model `main`
                flow main:⟨entry point⟩ — the workload starts here"#]],
        );
        check(
            r#"
            prompt p: """s"""
            agent only:
                instruction p
            "#,
            expect![[r#"
                agent only:⟨model: --model⟩ — no model defined: the runner's `--model` is used
                agent only:⟨entry point⟩ — the workload starts here"#]],
        );
    }
}
