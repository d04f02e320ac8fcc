//! Go to type definition: from a variable (`$r`, `${r}`, a bare `r`) or a
//! field path (`$r.best.file`, the cursor on any part) whose value has a schema
//! type by `var_types`, to that schema (through `list[…]` and `?`).

use sr_hir::{Name, RootDatabase};
use sr_syntax::TextSize;

use crate::defs::{Symbol, file_occurrences, navigation_target, occurrence_at};
use crate::namespace::analysis_programs;
use crate::var_types::{VarType, VarTypes};
use crate::{FilePosition, NavigationTarget};

pub(crate) fn goto_type_definition(db: &RootDatabase, position: &FilePosition) -> Vec<NavigationTarget> {
    let Some(file) = db.file(&position.path) else { return Vec::new() };
    let text = file.text(db);
    let (name, fields) = match path_at(text, position.offset) {
        Some(path) => path,
        None => {
            let occurrences = file_occurrences(db, file);
            match occurrence_at(&occurrences, position.offset).map(|o| &o.symbol) {
                Some(Symbol::Variable(name)) => (name.to_string(), Vec::new()),
                _ => return Vec::new(),
            }
        }
    };
    let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
    // The first program the file is judged in that knows the type.
    analysis_programs(db, file)
        .find_map(|program| {
            let ty = VarTypes::new(db, program).path(&Name::from(name.as_str()), &fields)?;
            let schema = element_schema(&ty)?;
            program.schemas.get(schema).map(|&item| navigation_target(db, item))
        })
        .into_iter()
        .collect()
}

/// The schema a value of type `ty` is, or holds items of.
fn element_schema(ty: &VarType) -> Option<&Name> {
    match ty {
        VarType::Schema(name) => Some(name),
        VarType::List(inner) | VarType::Optional(inner) => element_schema(inner),
        _ => None,
    }
}

/// `$x.a.b` around `offset`, cut after the part under the cursor: the
/// variable and the fields up to there. `None` when no `$` starts it.
fn path_at(text: &str, offset: TextSize) -> Option<(String, Vec<String>)> {
    let offset = usize::from(offset);
    if offset > text.len() || !text.is_char_boundary(offset) {
        return None;
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let end = offset + text[offset..].find(|c: char| !word(c)).unwrap_or(text.len() - offset);
    let start = text[..end].trim_end_matches(|c: char| word(c) || c == '.').len();
    let before = &text[..start];
    if !(before.ends_with('$') || before.ends_with("${")) {
        return None;
    }
    let mut parts = text[start..end].split('.').map(str::to_string);
    let name = parts.next().filter(|n| !n.is_empty())?;
    let fields: Vec<String> = parts.collect();
    if fields.iter().any(String::is_empty) {
        return None;
    }
    Some((name, fields))
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::{analysis, at_every_offset, position, show};

    fn check(fixture: &str, expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        at_every_offset(&analysis, &fixture, |analysis, at| {
            for target in analysis.goto_type_definition(&at).unwrap() {
                assert_eq!(target.kind, crate::SymbolKind::Schema);
            }
        });
        let targets = analysis.goto_type_definition(&position(&fixture)).unwrap();
        let out: Vec<String> = targets
            .iter()
            .map(|t| format!("{:?} {} focus {}", t.kind, t.name, show(&fixture, &t.path, t.focus_range)))
            .collect();
        expect.assert_eq(&out.join("\n"));
    }

    const DEFS: &str = r#"
//- /types.sr
schema Location:
    file: string
schema Finding:
    note: string
    at: Location?
    others: list[Location]
prompt review expecting Finding[]: """Review."""
prompt one expecting Finding: """One."""
agent reviewer:
    instruction one
"#;

    fn with_main(main: &str) -> String {
        format!("{DEFS}//- /main.sr\nimport ./types.sr\n{main}")
    }

    #[test]
    fn a_variable_goes_to_its_schema_across_files() {
        check(
            &with_main("flow main:\n    $f = run agent reviewer\n    log $f$0\n"),
            expect![[r#"Schema Finding focus /types.sr:41..48 "Finding""#]],
        );
        // A list of findings, its items, and a bare name.
        check(
            &with_main("flow main:\n    $all = call llm review\n    for $x in $al$0l:\n        log x\n"),
            expect![[r#"Schema Finding focus /types.sr:41..48 "Finding""#]],
        );
        check(
            &with_main("flow main:\n    $all = call llm review\n    for $x in $all:\n        log x$0\n"),
            expect![""],
        );
    }

    #[test]
    fn a_field_path_goes_to_the_type_of_the_part_under_the_cursor() {
        check(
            &with_main("flow main:\n    $f = run agent reviewer\n    log $f.a$0t.file\n"),
            expect![[r#"Schema Location focus /types.sr:7..15 "Location""#]],
        );
        check(
            &with_main("flow main:\n    $f = run agent reviewer\n    log \"${f.oth$0ers}\"\n"),
            expect![[r#"Schema Location focus /types.sr:7..15 "Location""#]],
        );
        check(&with_main("flow main:\n    $f = run agent reviewer\n    log $f.at.fi$0le\n"), expect![[""]]);
        check(&with_main("flow main:\n    $f = run agent reviewer\n    log $f.nope$0\n"), expect![[""]]);
    }

    #[test]
    fn unknown_or_plain_types_go_nowhere() {
        check(&with_main("flow main:\n    $n = 3\n    log $n$0\n"), expect![[""]]);
        check(&with_main("flow main:\n    $n = $m\n    log $n$0\n"), expect![[""]]);
        check(&with_main("flow main:\n    log \"$0\"\n"), expect![[""]]);
    }
}
