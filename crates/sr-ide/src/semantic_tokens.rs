//! Semantic highlighting: every token classified, names by what they denote
//! (agents, prompts, tools, … resolved through the program), and the `${…}`
//! names inside strings and prompt bodies split out of the string.

use std::path::Path;

use sr_hir::{ItemKind, RootDatabase, parse};
use sr_syntax::{SyntaxKind, SyntaxToken, TextRange};

use crate::defs::{Occurrence, Symbol, file_occurrences};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HighlightTag {
    Keyword,
    Comment,
    String,
    Number,
    Operator,
    /// `string`, `int`, `float`, `bool`, `list` in schema fields.
    BuiltinType,
    Agent,
    Prompt,
    Tool,
    Model,
    Schema,
    Field,
    Flow,
    Policy,
    Variable,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HighlightedRange {
    pub range: TextRange,
    pub tag: HighlightTag,
    /// The name a definition introduces.
    pub definition: bool,
}

pub(crate) fn highlight(db: &RootDatabase, path: &Path, range: Option<TextRange>) -> Vec<HighlightedRange> {
    let Some(file) = db.file(path) else { return Vec::new() };
    let root = parse(db, file).syntax();
    let range = range.unwrap_or(root.text_range());
    let occurrences = file_occurrences(db, file);
    let mut next = 0;
    let mut out = Vec::new();
    for token in root.descendants_with_tokens().filter_map(|e| e.into_token()) {
        let token_range = token.text_range();
        if token_range.end() < range.start() || token_range.is_empty() {
            continue;
        }
        if token_range.start() > range.end() {
            break;
        }
        while next < occurrences.len() && occurrences[next].range.end() <= token_range.start() {
            next += 1;
        }
        let inside: Vec<&Occurrence<'_>> =
            occurrences[next..].iter().take_while(|o| o.range.start() < token_range.end()).collect();
        let base = token_tag(&token);
        let mut at = token_range.start();
        for occurrence in inside {
            if occurrence.range.start() < at || !token_range.contains_range(occurrence.range) {
                continue;
            }
            if let Some(tag) = base.filter(|_| occurrence.range.start() > at) {
                out.push(HighlightedRange {
                    range: TextRange::new(at, occurrence.range.start()),
                    tag,
                    definition: false,
                });
            }
            out.push(HighlightedRange {
                range: occurrence.range,
                tag: symbol_tag(&occurrence.symbol),
                definition: occurrence.def,
            });
            at = occurrence.range.end();
        }
        if at < token_range.end()
            && let Some(tag) = base
        {
            let definition =
                at == token_range.start() && token.parent().is_some_and(|p| p.kind() == SyntaxKind::NAME_DEF);
            out.push(HighlightedRange { range: TextRange::new(at, token_range.end()), tag, definition });
        }
    }
    out
}

fn symbol_tag(symbol: &Symbol) -> HighlightTag {
    match symbol {
        Symbol::Item(kind, _) => match kind {
            ItemKind::Agent => HighlightTag::Agent,
            ItemKind::Prompt => HighlightTag::Prompt,
            ItemKind::Tool => HighlightTag::Tool,
            ItemKind::Model => HighlightTag::Model,
            ItemKind::Schema => HighlightTag::Schema,
            ItemKind::Flow | ItemKind::Handler => HighlightTag::Flow,
            ItemKind::RetryPolicy | ItemKind::TimeoutPolicy | ItemKind::Policy | ItemKind::Executor => {
                HighlightTag::Policy
            }
            ItemKind::Import => HighlightTag::String,
        },
        Symbol::Variable(_) => HighlightTag::Variable,
        Symbol::Import(_) => HighlightTag::String,
    }
}

/// The tag of a token that no occurrence covers.
fn token_tag(token: &SyntaxToken) -> Option<HighlightTag> {
    use SyntaxKind::*;
    let kind = token.kind();
    let parent = token.parent().map(|p| p.kind());
    Some(match kind {
        COMMENT => HighlightTag::Comment,
        STRING | INTERP_STRING | TRIPLE_STRING | PROVIDER_MODEL | LOCAL_PATH | MCP_URI | PIP_URI => {
            HighlightTag::String
        }
        INT | NUMBER | VERSION => HighlightTag::Number,
        DOLLAR => HighlightTag::Variable,
        STRING_KW | INT_KW | FLOAT_KW | BOOL_KW | LIST_KW
            if parent == Some(NAMED_TYPE) || parent == Some(LIST_TYPE) =>
        {
            HighlightTag::BuiltinType
        }
        // Our contextual keyword, and the keys of its block.
        NAME if matches!(parent, Some(EXECUTOR_DEF | AGENT_PROPERTY)) && token.text() == "executor" => {
            HighlightTag::Keyword
        }
        NAME if parent == Some(EXECUTOR_PROPERTY) => HighlightTag::Field,
        NAME | DOTTED_NAME => match parent {
            Some(NAME_DEF) if token.parent().and_then(|p| p.parent()).is_some_and(|g| g.kind() == SCHEMA_FIELD) => {
                HighlightTag::Field
            }
            Some(NAME_REF) if token.parent().and_then(|p| p.parent()).is_some_and(|g| g.kind() == PROPERTY_EXPR) => {
                HighlightTag::Field
            }
            Some(VAR) => HighlightTag::Field,
            Some(NAME_REF | IMPLICIT_PROPERTY) => HighlightTag::Field,
            _ => return None,
        },
        _ if kind.is_keyword() => match parent {
            // A soft keyword used as a name that no occurrence explains.
            Some(NAME_DEF) if token.parent().and_then(|p| p.parent()).is_some_and(|g| g.kind() == SCHEMA_FIELD) => {
                HighlightTag::Field
            }
            Some(NAME_DEF | NAME_REF | VAR) => HighlightTag::Field,
            _ => HighlightTag::Keyword,
        },
        EQ2 | NEQ | ARROW | GTEQ | LTEQ | EQ | LT | GT | MINUS | PERCENT | PLUS | QUESTION | SLASH | STAR | TILDE => {
            HighlightTag::Operator
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::TextRange;
    use crate::tests::analysis;

    fn check(fixture: &str, range: Option<TextRange>, expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        let text = fixture.text("/main.sr");
        let tokens = analysis.highlight(std::path::Path::new("/main.sr"), range).unwrap();
        let out: Vec<String> = tokens
            .iter()
            .map(|t| format!("{:?}{} {:?}", t.tag, if t.definition { " (def)" } else { "" }, &text[t.range]))
            .collect();
        expect.assert_eq(&out.join("\n"));
    }

    #[test]
    fn names_by_kind_and_interpolations_split_out_of_strings() {
        check(
            r#"
            # models
            model fast = anthropic/haiku
            schema S:
                n: int
            prompt p using model "fast" expecting S: """Hi ${name}"""
            agent a:
                instruction p
            flow main:
                $name = run agent a with 1.5
                log "got ${name}"
            "#,
            None,
            expect![[r##"
                Comment "# models"
                Keyword "model"
                Model (def) "fast"
                Operator "="
                String "anthropic/haiku"
                Keyword "schema"
                Schema (def) "S"
                Field (def) "n"
                BuiltinType "int"
                Keyword "prompt"
                Prompt (def) "p"
                Keyword "using"
                Keyword "model"
                String "\""
                Model "fast"
                String "\""
                Keyword "expecting"
                Schema "S"
                String "\"\"\"Hi ${"
                Variable "name"
                String "}\"\"\""
                Keyword "agent"
                Agent (def) "a"
                Keyword "instruction"
                Prompt "p"
                Keyword "flow"
                Flow (def) "main"
                Variable "$"
                Variable (def) "name"
                Operator "="
                Keyword "run"
                Keyword "agent"
                Agent "a"
                Keyword "with"
                Number "1.5"
                Keyword "log"
                String "\"got ${"
                Variable "name"
                String "}\"""##]],
        );
    }

    #[test]
    fn executor_keyword_only_where_it_is_one() {
        check(
            "executor box:\n    backend: bubblewrap\nagent executor:\n    executor box\n",
            None,
            expect![[r#"
                Keyword "executor"
                Policy (def) "box"
                Field "backend"
                Field "bubblewrap"
                Keyword "agent"
                Agent (def) "executor"
                Keyword "executor"
                Policy "box""#]],
        );
    }

    #[test]
    fn range_limits_tokens() {
        check(
            "flow main:\n    $x = 1\n    return $x\n",
            Some(TextRange::new(15.into(), 22.into())),
            expect![[r#"
            Variable "$"
            Variable (def) "x"
            Operator "="
            Number "1""#]],
        );
    }
}
