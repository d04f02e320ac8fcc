//! Diagnostics. Checks produce span-free [`SemanticDiagnostic`]s that point at
//! [`Anchor`]s; [`file_diagnostics`] resolves anchors to byte ranges last, so a
//! check is re-run only when what it looks at changes, not when text moves.

mod a2a_tool;
mod agent;
mod agent_cycles;
mod body;
mod executor;
mod fields;
mod functions;
mod imported_tools;
mod prompt;
mod suggest;

pub use suggest::similarity;
mod tool_calls;
mod vars;
mod whole_program;

use sr_syntax::line_index::Encoding;
use sr_syntax::{LineIndex, Related, TextRange, TextSize};

use crate::hir::ItemData;
use crate::items::{Item, ItemKind, file_items, line_index, syntax_errors};
use crate::membership::programs_of;
use crate::{Db, File, item_data, program};

pub use crate::anchor::{Anchor, SemanticDiagnostic, UpstreamAt};
pub use crate::diagnostic_kinds::DiagnosticKind;

/// A diagnostic of the analysis: a syntax error or a semantic finding, with its range.
pub type Diagnostic = sr_syntax::Diagnostic<DiagnosticKind>;

pub(crate) use whole_program::program_checks;

/// The variables upstream's checker knows in every scope (only `input_prompt`
/// exists at run time).
pub const BUILTIN_VARIABLES: [&str; 5] = ["input_prompt", "conversation", "current_agent", "session_id", "turn_count"];

/// Guardrail names upstream knows.
pub const KNOWN_GUARDRAILS: [&str; 4] = ["pii", "jailbreak", "mcp_guard", NOT_ENFORCED_GUARDRAIL];

/// Guardrails the runtime enforces (`sr_runtime::guardrail`).
pub const ENFORCED_GUARDRAILS: [&str; 3] = ["pii", "jailbreak", "mcp_guard"];

/// Upstream's intent-drift guardrail (an embedding model): accepted, never
/// triggered by this runtime, and warned about where it is used.
pub const NOT_ENFORCED_GUARDRAIL: &str = "cognitive_drift";

/// Every diagnostic of a file, syntax and semantic, in source order, as the
/// programs it belongs to judge it ([`programs_of`]): a file no program
/// imports is its own program; an imported file gets what each program that
/// imports it finds in it. A finding only some of those programs make names
/// the program ([`Diagnostic::program`]).
#[salsa::tracked(returns(ref))]
pub fn file_diagnostics(db: &dyn Db, file: File) -> Vec<Diagnostic> {
    let roots = programs_of(db, file);
    let mut out = syntax(db, file);
    if let [root] = roots[..] {
        out.extend(in_program(db, root, file).iter().cloned());
    } else {
        let judged: Vec<&Vec<Diagnostic>> = roots.iter().map(|&root| in_program(db, root, file)).collect();
        let mut seen: Vec<&Diagnostic> = Vec::new();
        for (i, diagnostics) in judged.iter().enumerate() {
            for d in diagnostics.iter() {
                if seen.contains(&d) {
                    continue;
                }
                seen.push(d);
                if judged.iter().all(|other| other.contains(d)) {
                    out.push(d.clone());
                } else {
                    // Each program that makes it, once.
                    for (root, others) in roots.iter().zip(&judged).skip(i) {
                        if others.contains(d) {
                            out.push(Diagnostic { program: Some(file_label(db, *root).into()), ..d.clone() });
                        }
                    }
                }
            }
        }
    }
    out.sort_by_key(|d| (d.range.start(), d.range.end()));
    out
}

/// A file's syntax errors as the analysis reports them.
pub(crate) fn syntax(db: &dyn Db, file: File) -> Vec<Diagnostic> {
    syntax_errors(db, file).iter().map(|d| d.clone().map_kind(DiagnosticKind::Syntax)).collect()
}

/// Every diagnostic of a file analysed alone, as the root of its own imports
/// (what upstream's checker does with each file it is given).
#[salsa::tracked(returns(ref))]
pub fn file_diagnostics_alone(db: &dyn Db, file: File) -> Vec<Diagnostic> {
    let mut out = syntax(db, file);
    out.extend(in_program(db, file, file).iter().cloned());
    out.sort_by_key(|d| (d.range.start(), d.range.end()));
    out
}

/// The semantic diagnostics of `file` as part of the program rooted at
/// `root`, with byte ranges.
#[salsa::tracked(returns(ref))]
pub fn in_program(db: &dyn Db, root: File, file: File) -> Vec<Diagnostic> {
    let index = line_index(db, file);
    let mut semantic: Vec<&SemanticDiagnostic<'_>> = program(db, root).diagnostics.iter().collect();
    semantic.extend(program_checks(db, root));
    for &item in file_items(db, file) {
        semantic.extend(item_diagnostics(db, root, item));
    }
    let mut out = Vec::new();
    for d in semantic {
        if d.anchor.file(db) != file {
            continue;
        }
        let range = d.anchor.range(db);
        let related = d
            .related
            .iter()
            .map(|(anchor, message)| {
                let other = anchor.file(db);
                Related {
                    file: (other != file).then(|| other.path(db).display().to_string().into()),
                    range: anchor.range(db),
                    message: message.clone(),
                }
            })
            .collect();
        out.push(Diagnostic {
            related,
            reported: d.reported,
            upstream_position: Some(upstream_position(db, index, d, range)),
            ..Diagnostic::new(d.kind.clone(), range)
        });
    }
    out
}

fn file_label(db: &dyn Db, file: File) -> String {
    file.path(db).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Upstream's (line, column): 1-based line, its stored 1-based character column.
fn upstream_position(db: &dyn Db, index: &LineIndex, d: &SemanticDiagnostic<'_>, range: TextRange) -> (i32, i32) {
    let at = |offset: TextSize| {
        let line = index.line_col(offset).line as i32 + 1;
        (line, index.col_in(offset, Encoding::Char) as i32 + 1)
    };
    match &d.upstream_at {
        UpstreamAt::Anchor => at(range.start()),
        UpstreamAt::Other(anchor) => at(anchor.range(db).start()),
        UpstreamAt::FileStart => (1, 0),
        UpstreamAt::PromptText { item, char_offset } => {
            let (mut line, mut column) = at(item.offset(db));
            if let ItemData::Prompt(prompt) = &*item_data(db, *item)
                && let Some(body) = &prompt.body
            {
                for ch in body.text.chars().take(*char_offset as usize) {
                    if ch == '\n' {
                        line += 1;
                        column = 1;
                    } else {
                        column += 1;
                    }
                }
            }
            (line, column)
        }
    }
}

/// The checks of one item as part of the program rooted at `root`.
#[salsa::tracked(returns(ref))]
pub fn item_diagnostics<'db>(db: &'db dyn Db, root: File, item: Item<'db>) -> Vec<SemanticDiagnostic<'db>> {
    match item.kind(db) {
        ItemKind::Agent => agent::check(db, root, item),
        ItemKind::Prompt => prompt::check(db, root, item),
        ItemKind::Flow | ItemKind::Handler => body::check(db, root, item),
        ItemKind::Schema => whole_program::schema(db, root, item),
        ItemKind::Executor => executor::check(db, root, item),
        ItemKind::Tool => a2a_tool::check(db, item),
        _ => Vec::new(),
    }
}
