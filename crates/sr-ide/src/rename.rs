//! Rename with prepare: the name under the cursor and every reference to what
//! it names, across files. Refuses names the grammar would not read back as
//! the same name.

mod conflict;

use std::fmt;

use sr_hir::{ItemKind, RootDatabase, program};
use sr_syntax::SyntaxKind;

use crate::defs::{Symbol, file_occurrences, occurrence_at, resolve_item};
use crate::field_refs::FieldRef;
use crate::references::related_occurrences;
use crate::{FilePosition, SourceChange, TextEdit, TextRange, TextSize};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenameError {
    /// Nothing renameable at the cursor.
    NothingHere,
    /// A built-in variable or an import path.
    NotRenameable(String),
    InvalidName(String),
    /// The new name is taken; the message names what has it.
    Conflict(String),
}

impl fmt::Display for RenameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RenameError::NothingHere => f.write_str("no name to rename here"),
            RenameError::NotRenameable(why) | RenameError::InvalidName(why) | RenameError::Conflict(why) => {
                f.write_str(why)
            }
        }
    }
}

pub(crate) fn prepare_rename(db: &RootDatabase, position: &FilePosition) -> Result<TextRange, RenameError> {
    let file = db.file(&position.path).ok_or(RenameError::NothingHere)?;
    if let Some(field) = crate::field_refs::field_at(db, position) {
        return Ok(field.range);
    }
    let occurrences = file_occurrences(db, file);
    let Some(occurrence) = occurrence_at(&occurrences, position.offset) else {
        return Err(why_nothing_here(db, file, position.offset));
    };
    match &occurrence.symbol {
        Symbol::Import(_) => Err(RenameError::NotRenameable("an import path is not a name".to_string())),
        Symbol::Variable(name) if is_builtin(name) => {
            Err(RenameError::NotRenameable(format!("'{name}' is a built-in variable")))
        }
        Symbol::Item(kind, name) if resolve_item(program(db, file), *kind, name).is_none() => {
            Err(RenameError::NotRenameable(format!(
                "{} '{name}' is not defined, so there is nothing to rename",
                kind.describe()
            )))
        }
        _ => Ok(occurrence.range),
    }
}

/// What is under the cursor when it is no name: said so that the editor can
/// tell the user why rename is not offered.
fn why_nothing_here(db: &RootDatabase, file: sr_hir::File, offset: TextSize) -> RenameError {
    let root = sr_hir::parse(db, file).syntax();
    if offset > root.text_range().end() {
        return RenameError::NothingHere;
    }
    let token =
        root.token_at_offset(offset).find(|t| !t.kind().is_trivia()).or_else(|| root.token_at_offset(offset).next());
    let Some(token) = token else { return RenameError::NothingHere };
    let kind = token.kind();
    let why = if kind.is_keyword() {
        format!("'{}' is a keyword, not a name", token.text())
    } else if kind == SyntaxKind::COMMENT {
        "a comment holds no names to rename".to_string()
    } else if matches!(kind, SyntaxKind::STRING | SyntaxKind::INTERP_STRING | SyntaxKind::TRIPLE_STRING) {
        "only names inside `${…}` in a string can be renamed".to_string()
    } else if kind == SyntaxKind::NAME
        && token.parent().and_then(|p| p.parent()).is_some_and(|p| p.kind() == SyntaxKind::CALL_EXPR)
    {
        format!("'{}' is a function, not a name defined in the program", token.text())
    } else {
        return RenameError::NothingHere;
    };
    RenameError::NotRenameable(why)
}

pub(crate) fn rename(db: &RootDatabase, position: &FilePosition, new_name: &str) -> Result<SourceChange, RenameError> {
    if let Some(field) = crate::field_refs::field_at(db, position) {
        return rename_field(db, &field, new_name);
    }
    prepare_rename(db, position)?;
    let (target, found) = related_occurrences(db, position).ok_or(RenameError::NothingHere)?;
    let all_sheltered = found.iter().all(|(_, o)| o.sheltered);
    check_name(&target.symbol, new_name, all_sheltered)?;
    conflict::check(db, &target, new_name)?;
    let mut change = SourceChange::default();
    for (file, occurrence) in found {
        change.insert(file.path(db), TextEdit { range: occurrence.range, new_text: new_name.to_string() });
    }
    Ok(change.sorted())
}

/// A schema field and every use of it; refused when the schema has a field
/// of the new name already (the two would merge into one key).
fn rename_field(db: &RootDatabase, field: &FieldRef<'_>, new_name: &str) -> Result<SourceChange, RenameError> {
    // A field name is read wherever an identifier is: only hard keywords are out.
    check_name(&Symbol::Variable(field.field.clone()), new_name, true)?;
    if field.field.as_str() != new_name && crate::field_refs::declared(db, field.schema).iter().any(|f| f == new_name) {
        let schema = conflict::located(db, field.schema);
        return Err(RenameError::Conflict(format!("'{new_name}' is already a field of {schema}")));
    }
    let mut change = SourceChange::default();
    for (file, reference) in crate::field_refs::references(db, field.schema, &field.field) {
        change.insert(file.path(db), TextEdit { range: reference.range, new_text: new_name.to_string() });
    }
    Ok(change.sorted())
}

fn is_builtin(name: &str) -> bool {
    sr_hir::diagnostics::BUILTIN_VARIABLES.contains(&name)
}

/// Names are `[A-Za-z_][A-Za-z0-9_-]*`, never a hard keyword, never lexed as a
/// version (`v1`), and never a soft keyword where the grammar wants a plain
/// name (agents, models, schemas, tools, timeout policies) or where a variable
/// is written without `$`.
fn check_name(symbol: &Symbol, name: &str, all_sheltered: bool) -> Result<(), RenameError> {
    let invalid = |why: String| Err(RenameError::InvalidName(why));
    let mut chars = name.chars();
    let valid_start = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !valid_start || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return invalid(format!(
            "'{name}' is not a valid name: use letters, digits, '_' and '-', not starting with a digit or '-'"
        ));
    }
    if name.len() > 1 && name.starts_with('v') && name.as_bytes()[1].is_ascii_digit() {
        return invalid(format!("'{name}' would read as a version number"));
    }
    let Some(keyword) = SyntaxKind::from_keyword(name) else { return Ok(()) };
    if keyword.is_hard_keyword() {
        return invalid(format!("'{name}' is a keyword"));
    }
    let plain_name_only = match symbol {
        Symbol::Item(kind, _) => {
            matches!(
                kind,
                ItemKind::Agent | ItemKind::Model | ItemKind::Schema | ItemKind::Tool | ItemKind::TimeoutPolicy
            )
        }
        Symbol::Variable(_) => !all_sheltered,
        Symbol::Import(_) => true,
    };
    if plain_name_only {
        return invalid(format!("'{name}' is a keyword and cannot name this"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::{analysis, position};

    fn check(fixture: &str, new_name: &str, expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        let result = analysis.rename(&position(&fixture), new_name).unwrap();
        let out = match result {
            Err(error) => format!("error: {error}"),
            Ok(change) => crate::tests::applied(&fixture, &change),
        };
        expect.assert_eq(&out);
    }

    #[test]
    fn renaming_a_tool_renames_its_function_calls_in_flows() {
        check(
            r#"
            tool fs = builtin streetrace.fs
            agent a:
                instruction p
                tools fs
            prompt p: """x"""
            flow main:
                $t = f$0s.read_file("a.txt")
                fs.write_file({path: "b.txt", content: $t})
            "#,
            "files",
            expect![[r#"
                //- /main.sr
                tool files = builtin streetrace.fs
                agent a:
                    instruction p
                    tools files
                prompt p: """x"""
                flow main:
                    $t = files.read_file("a.txt")
                    files.write_file({path: "b.txt", content: $t})
            "#]],
        );
    }

    #[test]
    fn renames_an_agent_in_every_file() {
        check(
            r#"
            //- /lib.sr
            agent helper:
                instruction p
            prompt p: """x"""
            //- /main.sr
            import ./lib.sr
            agent lead:
                instruction p
                use help$0er
            flow main:
                $x = run agent helper
            "#,
            "assistant_2",
            expect![[r#"
                //- /lib.sr
                agent assistant_2:
                    instruction p
                prompt p: """x"""
                //- /main.sr
                import ./lib.sr
                agent lead:
                    instruction p
                    use assistant_2
                flow main:
                    $x = run agent assistant_2
            "#]],
        );
    }

    #[test]
    fn renames_a_model_inside_strings_and_a_prompt_inside_bodies() {
        check(
            r#"
            model fa$0st = anthropic/haiku
            prompt p using model "fast": """x"""
            flow main:
                $r = call llm p using model "fast"
            "#,
            "quick",
            expect![[r#"
                //- /main.sr
                model quick = anthropic/haiku
                prompt p using model "quick": """x"""
                flow main:
                    $r = call llm p using model "quick"
            "#]],
        );
        check(
            r#"
            prompt tone: """Be nice."""
            prompt main_prompt: """${to$0ne} Then answer."""
            agent:
                instruction main_prompt
            "#,
            "style",
            expect![[r#"
                //- /main.sr
                prompt style: """Be nice."""
                prompt main_prompt: """${style} Then answer."""
                agent:
                    instruction main_prompt
            "#]],
        );
    }

    #[test]
    fn renames_variables_within_one_flow() {
        check(
            r#"
            flow main:
                $x$0 = 1
                log "value ${x}"
                return x
            flow other:
                $x = 2
            "#,
            "count",
            expect![[r#"
                //- /main.sr
                flow main:
                    $count = 1
                    log "value ${count}"
                    return count
                flow other:
                    $x = 2
            "#]],
        );
    }

    #[test]
    fn refuses_invalid_names_and_keywords() {
        let agent = r#"
            agent hel$0per:
                instruction p
            "#;
        check(
            agent,
            "9lives",
            expect![
                "error: '9lives' is not a valid name: use letters, digits, '_' and '-', not starting with a digit or '-'"
            ],
        );
        check(agent, "log", expect!["error: 'log' is a keyword"]);
        check(agent, "result", expect!["error: 'result' is a keyword and cannot name this"]);
        check(agent, "v2", expect!["error: 'v2' would read as a version number"]);
        check(
            agent,
            "a.b",
            expect![
                "error: 'a.b' is not a valid name: use letters, digits, '_' and '-', not starting with a digit or '-'"
            ],
        );
        // Prompts are identifiers: soft keywords are fine, hard ones are not.
        let prompt = r#"
            prompt gr$0eet: """hi"""
            agent a:
                instruction greet
            "#;
        check(
            prompt,
            "result",
            expect![[r#"
            //- /main.sr
            prompt result: """hi"""
            agent a:
                instruction result
        "#]],
        );
        check(prompt, "true", expect!["error: 'true' is a keyword"]);
        check(
            r#"
            flow main:
                x$0 = 1
                log x
            "#,
            "result",
            expect!["error: 'result' is a keyword and cannot name this"],
        );
        check(
            r#"
            flow main:
                log $input_pr$0ompt
            "#,
            "other",
            expect!["error: 'input_prompt' is a built-in variable"],
        );
    }

    #[test]
    fn renames_a_variable_in_prompts_and_sub_flows_of_its_run() {
        check(
            r#"
            prompt ask: """About ${topic}"""
            flow main:
                $to$0pic = "rust"
                run prepare
                $r = call llm ask
            flow prepare:
                log topic
            flow other:
                $topic = 1
            "#,
            "subject",
            expect![[r#"
                //- /main.sr
                prompt ask: """About ${subject}"""
                flow main:
                    $subject = "rust"
                    run prepare
                    $r = call llm ask
                flow prepare:
                    log subject
                flow other:
                    $topic = 1
            "#]],
        );
    }

    #[test]
    fn refuses_a_name_that_is_taken() {
        let agents = r#"
            //- /lib.sr
            agent writer:
                instruction p
            //- /main.sr
            import ./lib.sr
            agent hel$0per:
                instruction p
            prompt p: """x"""
            flow main:
                $draft = run agent helper
                $r = call llm p
            flow other:
                $solo = 1
            "#;
        check(agents, "writer", expect!["error: 'writer' is already agent 'writer' (/lib.sr:1)"]);
        // Another kind may share the name.
        check(
            agents,
            "main",
            expect![[r#"
            //- /main.sr
            import ./lib.sr
            agent main:
                instruction p
            prompt p: """x"""
            flow main:
                $draft = run agent main
                $r = call llm p
            flow other:
                $solo = 1
        "#]],
        );
        let prompt = agents.replace("prompt p:", "prompt p$0:").replace("agent hel$0per", "agent helper");
        check(&prompt, "draft", expect!["error: 'draft' is already a variable in flow 'main' (/main.sr:5)"]);
        let variable = agents.replace("$draft", "$dr$0aft").replace("agent hel$0per", "agent helper");
        check(&variable, "p", expect!["error: 'p' is already prompt 'p' (/main.sr:4)"]);
        check(&variable, "r", expect!["error: 'r' is already a variable in flow 'main' (/main.sr:5)"]);
        check(&variable, "input_prompt", expect!["error: 'input_prompt' is already a built-in variable"]);
        // `solo` lives in a flow that never shares a run with `main`.
        check(
            &variable,
            "solo",
            expect![[r#"
            //- /main.sr
            import ./lib.sr
            agent helper:
                instruction p
            prompt p: """x"""
            flow main:
                $solo = run agent helper
                $r = call llm p
            flow other:
                $solo = 1
        "#]],
        );
    }

    fn check_prepare(fixture: &str, expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        let out = match analysis.prepare_rename(&position(&fixture)).unwrap() {
            Ok(range) => format!("{:?}", &fixture.text(fixture.position().0)[range]),
            Err(error) => format!("error: {error}"),
        };
        expect.assert_eq(&out);
    }

    #[test]
    fn prepare_says_what_cannot_be_renamed() {
        check_prepare("ag$0ent a:\n    instruction p\n", expect!["error: 'agent' is a keyword, not a name"]);
        check_prepare("# a com$0ment\n", expect!["error: a comment holds no names to rename"]);
        check_prepare(
            "flow main:\n    log \"plain te$0xt\"\n",
            expect!["error: only names inside `${…}` in a string can be renamed"],
        );
        check_prepare(
            "flow main:\n    $x = run agent mis$0sing\n",
            expect!["error: agent 'missing' is not defined, so there is nothing to rename"],
        );
        check_prepare(
            "flow main:\n    log le$0n([1])\n",
            expect!["error: 'len' is a function, not a name defined in the program"],
        );
        check_prepare("import ./li$0b.sr\n", expect!["error: an import path is not a name"]);
        check_prepare("flow main:\n    $ab$0c = 1\n", expect![[r#""abc""#]]);
    }
}
