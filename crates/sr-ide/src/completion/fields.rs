//! Completion of a variable's fields: after `$x.` (or `$x.a.`, and `${x.` in
//! strings) the fields of the schema the value has, when `var_types` knows it.

use sr_hir::Name;

use super::{CompletionItem, CompletionKind, Completions};
use crate::var_types::{VarTypes, schema_fields, schema_of};

/// Offers the fields when the word being completed follows `$NAME.` or
/// `$NAME.FIELD….`; true when it does, whether or not the type is known.
pub(super) fn complete(cx: &mut Completions<'_, '_>) -> bool {
    let Some(before_dot) = cx.line.strip_suffix('.') else { return false };
    let start =
        before_dot.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.').len();
    let (rest, path) = before_dot.split_at(start);
    if path.is_empty() || !rest.ends_with('$') {
        return false;
    }
    offer(cx, path);
    true
}

/// Adds the fields of the value at `path` (`x` or `x.a.b`).
pub(super) fn offer(cx: &mut Completions<'_, '_>, path: &str) {
    let mut parts = path.split('.');
    let Some(name) = parts.next() else { return };
    let fields: Vec<&str> = parts.collect();
    if name.is_empty() || fields.iter().any(|f| f.is_empty()) {
        return;
    }
    let types = VarTypes::new(cx.db, cx.program);
    let Some(ty) = types.path(&Name::from(name), &fields) else { return };
    let Some(schema) = schema_of(&ty) else { return };
    for (field, ty) in schema_fields(cx.db, cx.program, schema) {
        cx.add_item(CompletionItem {
            label: field.to_string(),
            kind: CompletionKind::Field,
            detail: Some(ty.text()),
            documentation: Some(format!("field of schema `{schema}`")),
            insert_text: field.to_string(),
            replace_range: cx.replace_range,
            snippet: false,
            additional_edits: Vec::new(),
        });
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::CompletionConfig;
    use crate::completion::tests::check_with;

    const DEFS: &str = r#"
schema Location:
    file: string
    line: int?
schema Finding:
    note: string
    where: Location
    tags: list[string]
schema Report:
    findings: list[Finding]
    score: float
prompt review expecting Report: """Review"""
prompt find expecting Finding[]: """Find"""
prompt plain: """Plain"""
agent reviewer:
    instruction review
agent loose:
    instruction plain
agent producer:
    instruction review
    produces report
"#;

    fn check(body: &str, expect: Expect) {
        check_with(&format!("{DEFS}flow main:\n{body}"), CompletionConfig::default(), expect);
    }

    #[test]
    fn fields_of_an_agent_result_its_fields_and_list_items() {
        let run = "    $r = run agent reviewer\n";
        check(
            &format!("{run}    log $r.$0\n"),
            expect![[r#"
                Field findings
                Field score"#]],
        );
        check(&format!("{run}    log $r.sc$0\n"), expect!["Field score"]);
        check(
            &format!("{run}    for $f in $r.findings do\n        log $f.$0\n    end\n"),
            expect![[r#"
                Field note
                Field where
                Field tags"#]],
        );
        check(
            &format!("{run}    for $f in $r.findings do\n        log $f.where.$0\n    end\n"),
            expect![[r#"
                Field file
                Field line"#]],
        );
        // `produces`, `call llm` with an array schema, a copy, a string interpolation.
        check("    run agent producer\n    log $report.$0\n", expect!["Field findings\nField score"]);
        check(
            "    $all = call llm find\n    for $f in $all do\n        $w = $f.where\n        log \"${w.$0}\"\n    end\n",
            expect![[r#"
                Field file
                Field line"#]],
        );
    }

    #[test]
    fn field_items_show_their_types() {
        let text =
            format!("{DEFS}flow main:\n    $r = call llm find\n    for $f in $r do\n        log $f.$0\n    end\n");
        let (analysis, fixture) = crate::tests::analysis(&text);
        let items = analysis.completions(&crate::tests::position(&fixture), CompletionConfig::default()).unwrap();
        let out: Vec<String> =
            items.iter().map(|i| format!("{}: {}", i.label, i.detail.as_deref().unwrap_or("-"))).collect();
        expect![[r#"
            note: string
            where: Location
            tags: list[string]"#]]
        .assert_eq(&out.join("\n"));
    }

    #[test]
    fn no_fields_where_the_type_is_unknown() {
        // No `expecting`; a flow's result; two assignments that disagree; a
        // field the schema lacks; a scalar field.
        check("    $r = run agent loose\n    log $r.$0\n", expect![[""]]);
        check("    $r = run main\n    log $r.$0\n", expect![[""]]);
        check("    $r = run agent reviewer\n    $r = \"text\"\n    log $r.$0\n", expect![[""]]);
        check("    $r = run agent reviewer\n    log $r.nothing.$0\n", expect![[""]]);
        check("    $r = run agent reviewer\n    log $r.score.$0\n", expect![[""]]);
        // A variable defined from itself.
        check("    $r = $r.next\n    log $r.$0\n", expect![[""]]);
    }
}
