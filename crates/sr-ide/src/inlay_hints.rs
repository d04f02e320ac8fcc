//! Inlay hints: the model each agent runs with, the entry point, and the
//! type of a variable where it is assigned, when `var_types` knows it and it
//! involves a schema (`$r = run agent a` ⟨: Finding⟩); a literal's type is
//! plain to see and is not repeated.

use std::path::Path;

use sr_hir::{ItemKind, RootDatabase, file_items, item_syntax};
use sr_syntax::{SyntaxKind, TextRange, TextSize};

use crate::defs::{Symbol, file_occurrences};
use crate::hover::{agent_model, model_value};
use crate::var_types::{VarType, VarTypes};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InlayKind {
    Model,
    EntryPoint,
    /// `: Schema` after a variable where it is assigned.
    Type,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlayHint {
    /// Shown after this offset (the end of the item's header line, or of
    /// the variable's name).
    pub offset: TextSize,
    pub label: String,
    pub kind: InlayKind,
    pub tooltip: Option<String>,
}

pub(crate) fn inlay_hints(db: &RootDatabase, path: &Path, range: Option<TextRange>) -> Vec<InlayHint> {
    let Some(file) = db.file(path) else { return Vec::new() };
    let program = crate::namespace::analysis_program(db, file);
    // Only where `sr run FILE` starts: an imported library file gets none.
    let entry = sr_hir::entry::entry_point(db, file)
        .filter(|e| e.item.file(db) == file && sr_hir::start::run_start(db, file, None) == Ok(e.item));
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
    type_hints(db, file, program, range, &mut out);
    out.sort_by_key(|h| h.offset);
    out
}

/// `: T` after each assignment to a variable whose type involves a schema.
fn type_hints(
    db: &RootDatabase,
    file: sr_hir::File,
    program: &sr_hir::Program<'_>,
    range: Option<TextRange>,
    out: &mut Vec<InlayHint>,
) {
    let types = VarTypes::new(db, program);
    for occurrence in file_occurrences(db, file) {
        let Symbol::Variable(name) = &occurrence.symbol else { continue };
        let offset = occurrence.range.end();
        if !occurrence.def || range.is_some_and(|r| !r.contains_inclusive(offset)) {
            continue;
        }
        let Some(ty) = types.of(name).filter(has_schema) else { continue };
        out.push(InlayHint {
            offset,
            label: format!(": {}", ty.text()),
            kind: InlayKind::Type,
            tooltip: Some(format!("`${name}` holds `{}` wherever the program assigns it", ty.text())),
        });
    }
}

fn has_schema(ty: &VarType) -> bool {
    match ty {
        VarType::Schema(_) => true,
        VarType::List(inner) | VarType::Optional(inner) => has_schema(inner),
        _ => false,
    }
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
        // Every range from each offset to the end: only the hints inside it.
        crate::tests::at_every_offset(&analysis, &fixture, |analysis, at| {
            let len = crate::TextSize::of(fixture.text(at.path.to_str().unwrap_or_default()));
            let range = crate::TextRange::new(at.offset.min(len), len);
            for hint in analysis.inlay_hints(&at.path, Some(range)).unwrap() {
                assert!(range.contains_inclusive(hint.offset), "{hint:?} outside {range:?}");
            }
        });
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

    #[test]
    fn no_entry_hint_where_sr_run_would_refuse() {
        // `sr run agents.sr` would start at agent `writer` but refuses (E0015:
        // `${topic}` is assigned in main.sr only); `sr run main.sr` starts at `main`.
        let (analysis, fixture) = analysis(
            r#"
            //- /main.sr
            import ./agents.sr
            flow main:
                $topic = "x"
                $r = run helper
                return $r
            //- /agents.sr
            prompt plain: """Write"""
            agent writer:
                instruction plain
            prompt write: """Write about ${topic}"""
            flow helper:
                $r = call llm write
                return $r
            "#,
        );
        let entries = |path: &str| -> Vec<String> {
            let text = fixture.text(path);
            let hints = analysis.inlay_hints(std::path::Path::new(path), None).unwrap();
            hints
                .iter()
                .filter(|h| h.kind == super::InlayKind::EntryPoint)
                .map(|h| text[..usize::from(h.offset)].lines().last().unwrap_or_default().to_string())
                .collect()
        };
        assert_eq!(entries("/main.sr"), ["flow main:"]);
        assert_eq!(entries("/agents.sr"), Vec::<String>::new());
    }

    const TYPES: &str = r#"
//- /types.sr
schema Finding:
    note: string
prompt one expecting Finding: """One."""
prompt many expecting Finding[]: """All."""
agent reviewer:
    instruction one
"#;

    #[test]
    fn the_schema_a_variable_holds_where_it_is_assigned_across_files() {
        check(
            &format!(
                "{TYPES}//- /main.sr\nimport ./types.sr\nflow main:\n    $f = run agent reviewer\n    $g = $f\n    $found = call llm many\n    for $x in $found do\n        log $x.note\n    end\n    $n = $f.note\n    $mixed = call llm one\n    $mixed = 3\n"
            ),
            expect![[r#"
                flow main:⟨entry point⟩ — the workload starts here
                    $f⟨: Finding⟩ — `$f` holds `Finding` wherever the program assigns it
                    $g⟨: Finding⟩ — `$g` holds `Finding` wherever the program assigns it
                    $found⟨: list[Finding]⟩ — `$found` holds `list[Finding]` wherever the program assigns it
                    for $x⟨: Finding⟩ — `$x` holds `Finding` wherever the program assigns it"#]],
        );
    }

    #[test]
    fn type_hints_are_bounded_to_the_range() {
        let fixture = format!(
            "{TYPES}//- /main.sr\nimport ./types.sr\nflow main:\n    $a = run agent reviewer\n    $b = run agent reviewer\n    $c = run agent reviewer\n"
        );
        let (analysis, fixture) = analysis(&fixture);
        let text = fixture.text("/main.sr");
        let start = text.find("$b").unwrap();
        let end = start + text[start..].find('\n').unwrap();
        let range = crate::TextRange::new((start as u32).into(), (end as u32).into());
        let hints = analysis.inlay_hints(std::path::Path::new("/main.sr"), Some(range)).unwrap();
        let labels: Vec<(usize, &str)> = hints.iter().map(|h| (usize::from(h.offset), h.label.as_str())).collect();
        assert_eq!(labels, [(start + 2, ": Finding")]);
    }
}
