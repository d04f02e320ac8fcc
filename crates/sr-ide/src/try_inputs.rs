//! The inputs a "Try" of an agent or a prompt reads, which an editor offers
//! to type in: every variable the item's prompts read through `${…}`
//! (composed prompts' included, as `sr try` asks for them), and for an agent
//! its message, `input_prompt`.

use std::path::Path;

use sr_hir::RootDatabase;
use sr_hir::playground::{Tried, missing_inputs, tried};
use sr_hir::start::EntryName;

/// The names `sr try ROOT ENTRY` reads (ENTRY: `NAME` or `KIND:NAME`), an
/// agent's message first; none when `sr try` would refuse the item (it says
/// why when run).
pub(crate) fn try_inputs(db: &RootDatabase, root: &Path, entry: &str) -> Vec<String> {
    let Some(file) = db.file(root) else { return Vec::new() };
    let (mut out, prompt) = match tried(db, file, entry) {
        Ok(Tried::Prompt) => (Vec::new(), Some(EntryName::parse(entry).name.to_string())),
        Ok(Tried::Agent { instruction }) => (vec!["input_prompt".to_string()], instruction.map(|i| i.to_string())),
        Err(_) => return Vec::new(),
    };
    if let Some(prompt) = prompt {
        out.extend(missing_inputs(db, file, &prompt, &|_| false).into_iter().map(|m| m.name.to_string()));
    }
    out
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::analysis;

    /// `NAME: input, input` (or `(none)`) for each item tried in the fixture's first file.
    fn check(fixture: &str, items: &[&str], expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        let root = std::path::Path::new(&fixture.files[0].0);
        let mut out = String::new();
        for item in items {
            let names = analysis.try_inputs(root, item).unwrap();
            let names = if names.is_empty() { "(none)".to_string() } else { names.join(", ") };
            out.push_str(&format!("{item}: {names}\n"));
        }
        expect.assert_eq(&out);
    }

    #[test]
    fn a_prompt_a_composed_prompt_and_an_agent_read_their_variables() {
        check(
            r#"
            //- /main.sr
            import ./lib.sr
            prompt tone: """Be ${mood}."""
            prompt greet: """${tone} Hi ${who.name}, ${len(items)} items; ${who.age} ${shared}"""
            agent helper:
                instruction greet
            agent plain:
                instruction fixed
            flow main:
                $r = run agent helper "x"
            //- /lib.sr
            prompt fixed: """Write."""
            prompt shared: """about ${topic}"""
            "#,
            &["tone", "greet", "helper", "plain", "fixed", "main", "nothing", "prompt:greet", "agent:greet"],
            expect![[r#"
                tone: mood
                greet: who, items, mood, topic
                helper: input_prompt, who, items, mood, topic
                plain: input_prompt
                fixed: (none)
                main: (none)
                nothing: (none)
                prompt:greet: who, items, mood, topic
                agent:greet: (none)
            "#]],
        );
    }
}
