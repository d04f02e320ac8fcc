//! Every keyword of `sr_syntax::KEYWORDS` is known to both editor grammars and
//! to completion, so a keyword added to the table fails here, naming the
//! keyword and each editor that does not know it yet. The lists below are the
//! deliberate exceptions, each with the reason.

use std::collections::BTreeSet;
use std::path::Path;

use sr_syntax::{KEYWORDS, SyntaxKind};

/// Upstream's lexer makes these keywords, but no construct of the language
/// uses them (language.md §1.2): they are only ever names, so an editor shows
/// them as names. `no_role_is_what_the_parser_never_names` keeps the list true.
const NO_ROLE: &[&str] = &[
    "assistant",
    "category",
    "compaction",
    "credit",
    "data",
    "debit",
    "detect",
    "drift",
    "fail",
    "get",
    "goal",
    "item",
    "items",
    "jailbreak",
    "message",
    "passed",
    "pii",
    "reason",
    "result",
    "score",
    "success",
    "system",
    "trajectory",
    "urgency",
];

/// Soft keywords that only ever appear as a `key:` at the start of a line in a
/// model, tool or policy body. Both grammars colour every `key:` as a property
/// by its position (a schema field may have the same name, and a grammar cannot
/// see which block it is in), so they need not spell these out.
const PROPERTY_KEYS: &[&str] = &["name", "type", "url", "headers", "trigger", "strategy", "preserve"];

/// Keywords that never start a line, an item or an expression: each follows
/// another word of its construct (the reason), so completion's line-start and
/// expression lists do not offer them.
const FOLLOWERS: &[(&str, &str)] = &[
    ("and", "between two operands"),
    ("or", "between two operands"),
    ("contains", "between two operands"),
    ("seconds", "after a number in a timeout policy"),
    ("minutes", "after a number in a timeout policy"),
    ("hours", "after a number in a timeout policy"),
    ("times", "after a number in a retry policy"),
    ("backoff", "`exponential|linear|fixed backoff` in a retry policy"),
    ("exponential", "after `N times,` in a retry policy"),
    ("linear", "after `N times,` in a retry policy"),
    ("fixed", "after `N times,` in a retry policy"),
    ("mcp", "after `tool NAME =`"),
    ("builtin", "after `tool NAME =`"),
    ("auth", "`with auth` after a tool's address"),
    ("bearer", "after `with auth`"),
    ("basic", "after `with auth`"),
    ("from", "`import NAME from`"),
    ("using", "a prompt clause after the prompt's name, or after `call llm NAME`"),
    ("expecting", "a prompt clause after the prompt's name"),
    ("inherit", "a prompt clause after the prompt's name"),
    ("llm", "`call llm`"),
    ("with", "after a call's target"),
    ("in", "`for x in`"),
    ("max", "`loop max`"),
    ("do", "ends a block's header"),
    ("failure", "`on failure` in a flow"),
    ("step", "`retry step`"),
    ("as", "`push X as ROLE to $var`"),
    ("to", "`push X as ROLE to $var`, `escalate to human`"),
    ("human", "`escalate to human`"),
    ("user", "`initial user prompt`"),
    ("where", "`filter X where`"),
    ("last", "`last N messages` in a policy's `preserve` list"),
    ("messages", "`last N messages` in a policy's `preserve` list"),
    ("results", "`tool results` in a policy's `preserve` list"),
];

const TEXTMATE: &str = "editors/vscode/syntaxes/streetrace.tmLanguage.json";
const VIM: &str = "editors/neovim/syntax/streetrace.vim";

fn repo_file(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join(path)).unwrap()
}

/// The words a pattern spells out: runs of `[A-Za-z0-9_-]`, with regex escapes
/// (`\b`, `\s`, `\<`, Vim's `\zs`/`\ze`, `\%(`) taken as separators, so that
/// `\btrue` and `\zsend` yield `true` and `end`.
fn words(pattern: &str, out: &mut BTreeSet<String>) {
    let mut word = String::new();
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            word.push(c);
            continue;
        }
        out.insert(std::mem::take(&mut word));
        if c == '\\' && chars.next_if(char::is_ascii_alphabetic) == Some('z') {
            chars.next_if(|c| matches!(c, 's' | 'e'));
        }
    }
    out.insert(word);
}

/// The words of the TextMate grammar's patterns (`match`, `begin`, `end`),
/// not of its scope names, where `type` or `name` would be found by accident.
fn textmate_words() -> BTreeSet<String> {
    fn walk(value: &serde_json::Value, out: &mut BTreeSet<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, value) in map {
                    match (key.as_str(), value) {
                        ("match" | "begin" | "end", serde_json::Value::String(pattern)) => words(pattern, out),
                        _ => walk(value, out),
                    }
                }
            }
            serde_json::Value::Array(values) => values.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let grammar: serde_json::Value = serde_json::from_str(&repo_file(TEXTMATE)).unwrap();
    let mut out = BTreeSet::new();
    walk(&grammar, &mut out);
    out
}

/// The words of the Vim syntax file's `syn keyword` lists and of its `/…/`
/// patterns, not of group names or options (`contains=` is not `contains`).
fn vim_words() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in repo_file(VIM).lines() {
        let mut fields = line.split_whitespace();
        let (Some("syn"), Some(command), Some(_group)) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        if command == "keyword" {
            fields.for_each(|word| words(word, &mut out));
            continue;
        }
        let rest: Vec<&str> = fields.collect();
        let mut chars = rest.join(" ").chars().collect::<Vec<_>>().into_iter();
        while chars.by_ref().any(|c| c == '/') {
            let mut pattern = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '/' => break,
                    '\\' => {
                        pattern.push(c);
                        pattern.extend(chars.next());
                    }
                    _ => pattern.push(c),
                }
            }
            words(&pattern, &mut out);
        }
    }
    out
}

/// Every word completion offers at the start of a line or of an expression.
fn offered() -> BTreeSet<&'static str> {
    [
        super::TOP_LEVEL,
        super::AGENT_BODY,
        super::FLOW_BODY,
        super::HANDLER_BODY,
        super::MODEL_BODY,
        super::TOOL_BODY,
        super::POLICY_BODY,
        super::EXPRESSION_KEYWORDS,
        super::TYPES,
        super::EVENTS,
    ]
    .concat()
    .into_iter()
    .collect()
}

fn absent_from(known: impl Fn(&str) -> bool, excused: &[&str]) -> Vec<&'static str> {
    KEYWORDS
        .iter()
        .map(|(text, _, _)| *text)
        .filter(|text| !NO_ROLE.contains(text) && !excused.contains(text) && !known(text))
        .collect()
}

#[test]
fn the_word_readers_see_through_regex_escapes_and_skip_names() {
    let mut got = BTreeSet::new();
    words(r"\btrue\b \zsend\>\s\+ \%(tool-call\|x\)", &mut got);
    for word in ["true", "end", "tool-call"] {
        assert!(got.contains(word), "{word} in {got:?}");
    }
    assert!(!got.contains("btrue") && !got.contains("zsend"), "{got:?}");
    // The Vim file's options and group names are not patterns.
    let vim = vim_words();
    assert!(vim.contains("tool-call") && vim.contains("backoff"), "{vim:?}");
    assert!(!vim.contains("contained") && !vim.contains("streetraceString"), "{vim:?}");
}

#[test]
fn both_editor_grammars_know_every_keyword() {
    let mut missing = Vec::new();
    for (grammar, known) in [(TEXTMATE, textmate_words()), (VIM, vim_words())] {
        let absent = absent_from(|text| known.contains(text), PROPERTY_KEYS);
        if !absent.is_empty() {
            missing.push(format!("{grammar}: {}", absent.join(", ")));
        }
    }
    assert!(missing.is_empty(), "keywords an editor grammar does not know:\n{}", missing.join("\n"));
}

#[test]
fn completion_offers_every_keyword_that_starts_something() {
    let offered = offered();
    let followers: Vec<&str> = FOLLOWERS.iter().map(|(word, _)| *word).collect();
    let absent = absent_from(|text| offered.contains(text), &followers);
    assert!(absent.is_empty(), "keywords completion never offers at a line's or an expression's start: {absent:?}");
    let both: Vec<&&str> = followers.iter().filter(|word| offered.contains(**word)).collect();
    assert!(both.is_empty(), "offered at a start, yet listed as only following another word: {both:?}");
}

/// The exception lists name keywords of the table, and `NO_ROLE` is exactly the
/// soft keywords whose kind neither the parser nor the lowering ever names.
#[test]
fn no_role_is_what_the_parser_never_names() {
    let listed = NO_ROLE.iter().chain(PROPERTY_KEYS).chain(FOLLOWERS.iter().map(|(word, _)| word));
    let unknown: Vec<&&str> = listed.filter(|word| SyntaxKind::from_keyword(word).is_none()).collect();
    assert!(unknown.is_empty(), "not keywords of sr_syntax::KEYWORDS: {unknown:?}");

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut sources = String::new();
    for dir in ["sr-syntax/src", "sr-syntax/src/grammar", "sr-hir/src"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("syntax_kind.rs") {
                sources.push_str(&std::fs::read_to_string(path).unwrap());
            }
        }
    }
    let mut named = BTreeSet::new();
    words(&sources, &mut named);
    let never_named: Vec<&str> = KEYWORDS
        .iter()
        .filter(|(text, kind, _)| !named.contains(&format!("{kind:?}")) && !sources.contains(&format!("T![{text}]")))
        .map(|(text, _, _)| *text)
        .collect();
    assert_eq!(never_named, NO_ROLE, "soft keywords no parser or lowering code names, against NO_ROLE");
}
