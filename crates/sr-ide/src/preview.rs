//! Prompt preview: a prompt's body with every `${…}` that is statically known
//! resolved. Known means a composed prompt (`${other}` where no variable of
//! the prompt's namespace is called `other`, since the runtime reads a
//! variable first), rendered recursively; everything else stays `${…}`.

use std::path::Path;

use sr_hir::hir::{Interpolation, ItemData, PromptData, TemplatePart};
use sr_hir::{Item, Name, RootDatabase, item_data, program};

use crate::defs::{Symbol, occurrences_of_item};
use crate::namespace::variable_scope;

/// The rendered body of prompt `name` as `path`'s program sees it; `None`
/// when there is no such prompt or it has no body.
pub(crate) fn preview_prompt(db: &RootDatabase, path: &Path, name: &str) -> Option<String> {
    let file = db.file(path)?;
    let program = program(db, file);
    let item = program.prompts.get(name)?.body?;
    let variables: Vec<Name> = variable_scope(db, item)
        .into_iter()
        .flat_map(|i| occurrences_of_item(db, i))
        .filter_map(|o| match o.symbol {
            Symbol::Variable(name) => Some(name),
            _ => None,
        })
        .collect();
    let mut out = String::new();
    render(db, file, item, &variables, &mut vec![item], &mut out);
    Some(out)
}

fn render<'db>(
    db: &'db RootDatabase,
    file: sr_hir::File,
    item: Item<'db>,
    variables: &[Name],
    stack: &mut Vec<Item<'db>>,
    out: &mut String,
) {
    let data = item_data(db, item);
    let ItemData::Prompt(PromptData { body: Some(body), .. }) = &*data else { return };
    for part in &body.template.parts {
        match part {
            TemplatePart::Text(text) => out.push_str(text),
            TemplatePart::Interpolation(i) => {
                let composed = match (&i.function, &i.path[..]) {
                    (None, [name]) if !variables.contains(name) => {
                        program(db, file).prompts.get(name).and_then(|p| p.body)
                    }
                    _ => None,
                };
                match composed {
                    // A cycle renders as its source, as far as it got.
                    Some(other) if !stack.contains(&other) => {
                        stack.push(other);
                        render(db, file, other, variables, stack, out);
                        stack.pop();
                    }
                    _ => out.push_str(&source(i)),
                }
            }
        }
    }
}

/// `${a.b}` or `${f(a)}` as written (normalised).
fn source(i: &Interpolation) -> String {
    let path = i.path.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(".");
    match &i.function {
        Some(f) => format!("${{{f}({path})}}"),
        None => format!("${{{path}}}"),
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::analysis;

    fn check(fixture: &str, name: &str, expect: Expect) {
        let (analysis, _) = analysis(fixture);
        let out = analysis.preview_prompt(std::path::Path::new("/main.sr"), name).unwrap();
        expect.assert_eq(&format!("{out:?}"));
    }

    #[test]
    fn composed_prompts_are_inlined_and_variables_stay() {
        let fixture = r#"
            prompt tone: """Be brief. ${style}"""
            prompt style: """Use ${lang}."""
            prompt ask: """${tone} Explain ${topic} (${len(items)} items, ${doc.title}). ${loop}"""
            prompt loop: """again ${ask}"""
            flow main:
                $topic = "rust"
                $r = call llm ask
            "#;
        check(
            fixture,
            "ask",
            expect![[
                r#"Some("Be brief. Use ${lang}. Explain ${topic} (${len(items)} items, ${doc.title}). again ${ask}")"#
            ]],
        );
        check(fixture, "missing", expect!["None"]);
    }

    #[test]
    fn a_variable_shadows_a_prompt_of_its_name() {
        check(
            r#"
            prompt tone: """calm"""
            prompt ask: """${tone}!"""
            flow main:
                $tone = "loud"
                $r = call llm ask
            "#,
            "ask",
            expect![[r#"Some("${tone}!")"#]],
        );
    }
}
