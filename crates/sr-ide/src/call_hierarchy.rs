//! Call hierarchy over the program graph: `delegate`, `use`, `run agent`,
//! `run`, `call llm` and instructions.

use sr_hir::graph::edges;
use sr_hir::{Item, ItemKind, RootDatabase, file_items, program};

use crate::defs::{Symbol, file_occurrences, item_focus, navigation_target, occurrence_at, resolve_item};
use crate::{FilePosition, NavigationTarget, TextRange};

pub type CallHierarchyItem = NavigationTarget;

pub(crate) fn prepare(db: &RootDatabase, position: &FilePosition) -> Option<CallHierarchyItem> {
    let file = db.file(&position.path)?;
    let occurrences = file_occurrences(db, file);
    let occurrence = occurrence_at(&occurrences, position.offset)?;
    let Symbol::Item(kind, name) = &occurrence.symbol else { return None };
    if !matches!(kind, ItemKind::Agent | ItemKind::Flow | ItemKind::Prompt) {
        return None;
    }
    let item = resolve_item(program(db, file), *kind, name)?;
    Some(navigation_target(db, item))
}

fn find<'db>(db: &'db RootDatabase, target: &CallHierarchyItem) -> Option<Item<'db>> {
    let file = db.file(&target.path)?;
    file_items(db, file).iter().copied().find(|&i| item_focus(db, i) == target.focus_range)
}

fn group<'db>(calls: impl Iterator<Item = (Item<'db>, TextRange)>) -> Vec<(Item<'db>, Vec<TextRange>)> {
    let mut out: Vec<(Item<'db>, Vec<TextRange>)> = Vec::new();
    for (item, range) in calls {
        match out.iter_mut().find(|(i, _)| *i == item) {
            Some((_, ranges)) => ranges.push(range),
            None => out.push((item, vec![range])),
        }
    }
    out
}

pub(crate) fn incoming(db: &RootDatabase, target: &CallHierarchyItem) -> Vec<(CallHierarchyItem, Vec<TextRange>)> {
    let Some(item) = find(db, target) else { return Vec::new() };
    let calls = db.files().into_iter().flat_map(|file| {
        edges(db, file)
            .into_iter()
            .filter(move |e| e.from.file(db) == file && e.to == item)
            .map(|e| (e.from, e.at.range(db)))
            .collect::<Vec<_>>()
    });
    group(calls).into_iter().map(|(from, ranges)| (navigation_target(db, from), ranges)).collect()
}

pub(crate) fn outgoing(db: &RootDatabase, target: &CallHierarchyItem) -> Vec<(CallHierarchyItem, Vec<TextRange>)> {
    let Some(item) = find(db, target) else { return Vec::new() };
    let calls = edges(db, item.file(db)).into_iter().filter(|e| e.from == item).map(|e| (e.to, e.at.range(db)));
    group(calls).into_iter().map(|(to, ranges)| (navigation_target(db, to), ranges)).collect()
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::tests::{analysis, position};

    #[test]
    fn incoming_and_outgoing_over_delegate_use_and_run() {
        let (analysis, fixture) = analysis(
            r#"
            //- /main.sr
            prompt p: """s"""
            agent lead:
                instruction p
                delegate wor$0ker
            agent worker:
                instruction p
                use helper
            agent helper:
                instruction p
            flow main:
                $a = run agent worker
                $b = run agent worker with $a
            //- /other.sr
            import ./main.sr
            flow side:
                $x = run agent worker
            "#,
        );
        let item = analysis.prepare_call_hierarchy(&position(&fixture)).unwrap().unwrap();
        let show = |calls: Vec<(crate::CallHierarchyItem, Vec<crate::TextRange>)>| {
            calls
                .iter()
                .map(|(item, ranges)| {
                    let text = fixture.text(item.path.to_str().unwrap());
                    let at: Vec<String> = ranges.iter().map(|r| format!("{:?}", r)).collect();
                    format!(
                        "{:?} {} {} at {} ({:?})",
                        item.kind,
                        item.name,
                        item.path.display(),
                        at.join(", "),
                        &text[item.focus_range]
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        expect!["worker /main.sr"].assert_eq(&format!("{} {}", item.name, item.path.display()));
        expect![[r#"
            Agent lead /main.sr at 61..67 ("lead")
            Flow main /main.sr at 177..183, 203..209 ("main")
            Flow side /other.sr at 47..53 ("side")"#]]
        .assert_eq(&show(analysis.incoming_calls(&item).unwrap()));
        expect![[r#"
            Agent helper /main.sr at 108..114 ("helper")
            Prompt p /main.sr at 98..99 ("p")"#]]
        .assert_eq(&show(analysis.outgoing_calls(&item).unwrap()));
    }
}
