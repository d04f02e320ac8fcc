//! Document symbols (nested) and workspace symbols.

use sr_hir::hir::ItemData;
use sr_hir::{Item, ItemKind, RootDatabase, file_items, item_data, source_map};

use crate::defs::{Symbol, item_focus, item_label, item_range, navigation_target, occurrences_of_item};
use crate::symbol_kind::SymbolKind;
use crate::types::type_text;
use crate::{NavigationTarget, TextRange};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentSymbol {
    pub name: String,
    pub detail: Option<String>,
    pub kind: SymbolKind,
    pub full_range: TextRange,
    pub focus_range: TextRange,
    pub children: Vec<DocumentSymbol>,
}

/// Files with more items than this get no leaves in their outline (a
/// schema's fields, a flow's variables): leaves would double an answer that
/// is already tens of thousands of items long, and finding a flow's
/// variables costs its occurrence index.
pub(crate) const LEAVES_UP_TO_ITEMS: usize = 5_000;

/// Items in source order; an agent's handlers are their children, and, in a
/// file of at most [`LEAVES_UP_TO_ITEMS`] items, so are a schema's fields and
/// the variables a flow or handler assigns.
pub(crate) fn document_symbols(db: &RootDatabase, path: &std::path::Path) -> Vec<DocumentSymbol> {
    let mut out = Vec::new();
    each_document_symbol(db, path, |symbol| out.push(symbol));
    out
}

/// [`document_symbols`] handed to `each` one top-level symbol at a time, so
/// that a caller that writes them out never holds them all.
pub(crate) fn each_document_symbol(db: &RootDatabase, path: &std::path::Path, mut each: impl FnMut(DocumentSymbol)) {
    let Some(file) = db.file(path) else { return };
    let items = file_items(db, file);
    let leaves = items.len() <= LEAVES_UP_TO_ITEMS;
    // The last top-level symbol, held until the next one: an agent's handlers
    // follow it.
    let mut last: Option<DocumentSymbol> = None;
    // A nameless item is what error recovery made of a broken line; editors
    // refuse symbols without names.
    for &item in items.iter().filter(|item| !item.name(db).is_empty()) {
        let symbol = item_symbol(db, item, leaves);
        match (item.owner(db), &mut last) {
            (Some(_), Some(agent)) if agent.kind == SymbolKind::Agent => agent.children.push(symbol),
            _ => {
                if let Some(done) = last.replace(symbol) {
                    each(done);
                }
            }
        }
    }
    if let Some(done) = last {
        each(done);
    }
}

fn item_symbol(db: &RootDatabase, item: Item<'_>, leaves: bool) -> DocumentSymbol {
    let kind = item.kind(db);
    let mut children = Vec::new();
    let detail = match &*item_data(db, item) {
        ItemData::Schema(schema) if leaves => {
            let map = source_map(db, item);
            for field in &schema.fields {
                let range = map.part(field.name.part) + item.offset(db);
                children.push(DocumentSymbol {
                    name: field.name.name.to_string(),
                    detail: Some(type_text(&field.ty)),
                    kind: SymbolKind::Field,
                    full_range: range,
                    focus_range: range,
                    children: Vec::new(),
                });
            }
            None
        }
        ItemData::Agent(agent) => agent.description.clone(),
        ItemData::Model(_) => crate::hover::model_value(db, item),
        _ => None,
    };
    if leaves && matches!(kind, ItemKind::Flow | ItemKind::Handler) {
        let mut seen = std::collections::HashSet::new();
        for occurrence in occurrences_of_item(db, item) {
            if let (true, Symbol::Variable(name)) = (occurrence.def, &occurrence.symbol)
                && seen.insert(name.clone())
            {
                children.push(DocumentSymbol {
                    name: format!("${name}"),
                    detail: None,
                    kind: SymbolKind::Variable,
                    full_range: occurrence.range,
                    focus_range: occurrence.range,
                    children: Vec::new(),
                });
            }
        }
    }
    DocumentSymbol {
        name: item_label(db, item),
        detail,
        kind: SymbolKind::of(kind),
        full_range: item_range(db, item),
        focus_range: item_focus(db, item),
        children,
    }
}

/// Definitions in every file whose name contains the query's characters in
/// order (case-insensitive); an empty query lists everything.
pub(crate) fn workspace_symbols(db: &RootDatabase, query: &str) -> Vec<NavigationTarget> {
    let query = query.to_lowercase();
    let mut out = Vec::new();
    for file in db.files() {
        for &item in file_items(db, file) {
            if item.kind(db) == ItemKind::Import || item.name(db).is_empty() {
                continue;
            }
            if fuzzy_match(&item.name(db).to_lowercase(), &query) {
                out.push(navigation_target(db, item));
            }
        }
    }
    out
}

fn fuzzy_match(name: &str, query: &str) -> bool {
    let mut chars = name.chars();
    query.chars().all(|q| chars.any(|c| c == q))
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::{DocumentSymbol, LEAVES_UP_TO_ITEMS};
    use crate::tests::analysis;

    fn render(symbols: &[DocumentSymbol], text: &str, depth: usize, out: &mut String) {
        for s in symbols {
            let detail = s.detail.as_ref().map(|d| format!(" ({d})")).unwrap_or_default();
            out.push_str(&format!(
                "{}{:?} {}{detail} {:?}\n",
                "  ".repeat(depth),
                s.kind,
                s.name,
                &text[s.focus_range]
            ));
            render(&s.children, text, depth + 1, out);
        }
    }

    fn check(fixture: &str, expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        let symbols = analysis.document_symbols(std::path::Path::new("/main.sr")).unwrap();
        let mut out = String::new();
        render(&symbols, fixture.text("/main.sr"), 0, &mut out);
        expect.assert_eq(&out);
    }

    #[test]
    fn nested_document_symbols() {
        check(
            r#"
            model main = anthropic/claude
            schema Finding:
                note: string
                line: int?
            agent reviewer:
                instruction p
                description "Reviews"
                on tool-call do
                    $seen = true
                end
            agent:
                instruction p
            flow main:
                $x = 1
                for $item in $x do
                    $x = 2
                end
            "#,
            expect![[r#"
                Model main (anthropic/claude) "main"
                Schema Finding "Finding"
                  Field note (string) "note"
                  Field line (int?) "line"
                Agent reviewer (Reviews) "reviewer"
                  Handler on tool-call (reviewer) "on"
                    Variable $seen "seen"
                Agent default "agent"
                Flow main "main"
                  Variable $x "x"
                  Variable $item "item"
            "#]],
        );
    }

    #[test]
    fn what_recovery_made_of_a_broken_line_has_no_symbol() {
        check(
            r#"
            tool x = mcp "http://localhost/mcp" with timeout "120"
            agent:
                tools x
            "#,
            expect![[r#"
                Tool x "x"
                Agent default "agent"
            "#]],
        );
    }

    /// Past the budget every item is still there, and no leaf; at it, every leaf.
    #[test]
    fn a_file_of_more_items_than_the_budget_has_items_without_leaves() {
        let path = std::path::Path::new("/main.sr");
        for (items, leaves) in [(LEAVES_UP_TO_ITEMS, 1), (LEAVES_UP_TO_ITEMS + 1, 0)] {
            let text: String = (0..items)
                .map(|i| {
                    if i % 2 == 0 { format!("schema S{i}:\n    f: int\n") } else { format!("flow f{i}:\n    $v = 1\n") }
                })
                .collect();
            let mut host = crate::AnalysisHost::new();
            host.set_file(path, text);
            let symbols = host.analysis().document_symbols(path).unwrap();
            assert_eq!(symbols.len(), items);
            assert!(symbols.iter().all(|s| s.children.len() == leaves), "{items} items");
        }
    }

    #[test]
    fn workspace_symbols_match_fuzzily_in_every_file() {
        let (analysis, _) = analysis(
            r#"
            //- /a.sr
            agent code_reviewer:
                instruction p
            flow main:
                return 1
            //- /b.sr
            prompt review_prompt: """x"""
            "#,
        );
        let found: Vec<String> = analysis
            .workspace_symbols("crv")
            .unwrap()
            .iter()
            .map(|t| format!("{:?} {} {}", t.kind, t.name, t.path.display()))
            .collect();
        expect!["Agent code_reviewer /a.sr"].assert_eq(&found.join("\n"));
        assert_eq!(analysis.workspace_symbols("").unwrap().len(), 3);
    }
}
