//! Completion by position. The line before the cursor (lexed on its own, so
//! it works while the file does not parse) decides what fits: names of the
//! right kind after `tools`, `delegate`, `run agent`, `call llm`, …; variables
//! in expressions and after `$`; names inside `${` in strings; otherwise the
//! keywords that may start a line in the enclosing block, and the snippets of
//! the block constructs valid there (for clients that take snippets); the
//! fields of a variable's schema after `$x.` (`var_types`). Names another
//! workspace file defines come with the edit that imports it. Labels match
//! the word typed so far fuzzily, prefix matches first.

mod fields;
mod fuzzy;
mod import_paths;
mod snippets;
mod tool_members;

use sr_hir::hir::{EXECUTOR_PROPERTIES, SandboxBackend};
use sr_hir::resolve::Program;
use sr_hir::{Db, File, ItemKind, Name, RootDatabase, parse};
use sr_syntax::SyntaxKind::{self, *};
use sr_syntax::{TextRange, TextSize};

use crate::defs::{Symbol, occurrences_of_item};
use crate::{FilePosition, TextEdit};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompletionKind {
    Keyword,
    Agent,
    Prompt,
    Tool,
    Model,
    Schema,
    Flow,
    Policy,
    Variable,
    Type,
    /// A file path (`import ./…`).
    File,
    /// A function of a tool or executor (`fs.read_file`).
    Function,
    /// A parameter of a tool function, as a key of its object argument.
    Parameter,
    /// A field of a schema (`$x.field`).
    Field,
    /// A block construct with placeholders to fill in.
    Snippet,
}

/// What the client can take.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompletionConfig {
    /// Snippet syntax (`${1:name}`, `$0`) in `insert_text`; without it no
    /// snippet items are offered.
    pub snippets: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionItem {
    pub label: String,
    pub kind: CompletionKind,
    pub detail: Option<String>,
    /// Markdown shown beside the item.
    pub documentation: Option<String>,
    /// What replaces `replace_range` (the word typed so far); in snippet
    /// syntax when `snippet` is set.
    pub insert_text: String,
    pub replace_range: TextRange,
    /// `insert_text` has tab stops and placeholders.
    pub snippet: bool,
    /// Edits elsewhere in the file made with the item (an `import`).
    pub additional_edits: Vec<TextEdit>,
}

const TOP_LEVEL: &[&str] = &[
    "streetrace",
    "import",
    "model",
    "schema",
    "tool",
    "retry",
    "timeout",
    "policy",
    "prompt",
    "agent",
    "flow",
    "on",
    "after",
    "executor",
];
const AGENT_BODY: &[&str] = &[
    "tools",
    "instruction",
    "prompt",
    "produces",
    "retry",
    "timeout",
    "description",
    "delegate",
    "use",
    "history",
    "executor",
    "on",
    "after",
];
/// `when`, `else` and `end` start the lines of a `match` and close a block.
const FLOW_BODY: &[&str] = &[
    "run", "call", "return", "for", "parallel", "loop", "match", "when", "else", "end", "if", "push", "escalate",
    "log", "notify", "continue", "abort", "retry", "on",
];
const HANDLER_BODY: &[&str] = &[
    "run", "call", "for", "parallel", "loop", "end", "if", "push", "escalate", "log", "notify", "continue", "abort",
    "retry", "mask", "block", "warn",
];
/// The contextual keyword of our `executor` extension.
const EXECUTOR: &str = "executor";
const MODEL_BODY: &[&str] = &["provider", "name", "temperature", "max_tokens", "max_input_tokens"];
const TOOL_BODY: &[&str] = &["type", "url", "headers"];
const POLICY_BODY: &[&str] = &["trigger", "strategy", "preserve", "use"];
/// `process x` is a call of the standard library function whose name upstream lexes as a keyword.
const EXPRESSION_KEYWORDS: &[&str] = &["true", "false", "null", "not", "filter", "initial", "process"];
const TYPES: &[&str] = &["string", "int", "float", "bool", "list"];
const EVENTS: &[&str] = &["start", "input", "output", "tool-call", "tool-result"];

/// The block a line sits in, found from indentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    TopLevel,
    Agent,
    Flow,
    Handler,
    Schema,
    Model,
    Tool,
    Policy,
    Executor,
}

pub(crate) fn completions(db: &RootDatabase, position: &FilePosition, config: CompletionConfig) -> Vec<CompletionItem> {
    let Some(file) = db.file(&position.path) else { return Vec::new() };
    let text = file.text(db).clone();
    let offset = position.offset.min(TextSize::of(&*text));
    let at = usize::from(offset);
    if !text.is_char_boundary(at) {
        return Vec::new();
    }
    let word_start = text[..at]
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let prefix = &text[word_start..at];
    let replace_range = TextRange::new(TextSize::from(word_start as u32), offset);
    let program = crate::namespace::analysis_program(db, file);
    let line_start = text[..word_start].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..word_start];
    if let Some(paths) = import_paths::complete(db, file, &text[line_start..at], line_start) {
        return paths;
    }
    let agent = enclosing_agent(&text[..line_start]);
    let mut cx = Completions { db, file, config, program, prefix, line, agent, replace_range, out: Vec::new() };

    if let Some(string) = string_at(db, file, offset) {
        cx.in_string(&text, string, at);
        return cx.finish();
    }
    let before: Vec<SyntaxKind> =
        sr_syntax::lexer::tokenize(line).iter().map(|t| t.kind).filter(|k| !k.is_trivia() && *k != NEWLINE).collect();
    let block = enclosing_block(&text, line_start, word_start);
    if matches!(block, Block::Flow | Block::Handler) && (fields::complete(&mut cx) || tool_members::complete(&mut cx)) {
        return cx.finish();
    }
    cx.after(&before, block);
    cx.finish()
}

struct Completions<'a, 'db> {
    db: &'db RootDatabase,
    file: File,
    config: CompletionConfig,
    program: &'a Program<'db>,
    prefix: &'a str,
    /// The line up to the word being completed.
    line: &'a str,
    /// The agent whose definition the line is in.
    agent: Option<&'a str>,
    replace_range: TextRange,
    out: Vec<CompletionItem>,
}

impl<'a> Completions<'a, '_> {
    fn add(&mut self, label: &str, kind: CompletionKind, detail: Option<String>, insert_text: String) {
        let replace_range = self.replace_range;
        self.add_item(CompletionItem {
            label: label.to_string(),
            kind,
            detail,
            documentation: None,
            insert_text,
            replace_range,
            snippet: false,
            additional_edits: Vec::new(),
        });
    }

    /// Adds `item` when its label matches the word typed so far (fuzzily) and
    /// no item of the same label, kind and edits is there yet.
    fn add_item(&mut self, item: CompletionItem) {
        let matches = fuzzy::rank(self.prefix, &item.label).is_some();
        let same = |c: &CompletionItem| {
            c.label == item.label && c.kind == item.kind && c.additional_edits == item.additional_edits
        };
        if matches && !self.out.iter().any(same) {
            self.out.push(item);
        }
    }

    /// The items, best matches first (`fuzzy::rank`).
    fn finish(mut self) -> Vec<CompletionItem> {
        let prefix = self.prefix;
        self.out.sort_by_cached_key(|c| fuzzy::rank(prefix, &c.label));
        self.out
    }

    fn keywords(&mut self, words: &[&str]) {
        for word in words {
            self.add(word, CompletionKind::Keyword, None, word.to_string());
        }
    }

    fn items(&mut self, kind: ItemKind) {
        let names: Vec<Name> = match kind {
            ItemKind::Prompt => self.program.prompts.keys().cloned().collect(),
            _ => self.program.defs(kind).map(|d| d.keys().cloned().collect()).unwrap_or_default(),
        };
        let completion_kind = match kind {
            ItemKind::Agent => CompletionKind::Agent,
            ItemKind::Prompt => CompletionKind::Prompt,
            ItemKind::Tool => CompletionKind::Tool,
            ItemKind::Model => CompletionKind::Model,
            ItemKind::Schema => CompletionKind::Schema,
            ItemKind::Flow => CompletionKind::Flow,
            _ => CompletionKind::Policy,
        };
        for name in &names {
            self.add(name, completion_kind, Some(kind.describe().to_string()), name.to_string());
        }
        // Names other workspace files define come with their import.
        for import in crate::auto_import::importable(self.db, self.file, kind) {
            if names.contains(&import.name) {
                continue;
            }
            self.add_item(CompletionItem {
                label: import.name.to_string(),
                kind: completion_kind,
                detail: Some(format!("{} (import {})", kind.describe(), import.path)),
                documentation: None,
                insert_text: import.name.to_string(),
                replace_range: self.replace_range,
                snippet: false,
                additional_edits: vec![import.edit],
            });
        }
    }

    /// Variables of the program (one namespace at run time) and the built-ins.
    fn variables(&mut self) {
        let mut names: Vec<Name> = Vec::new();
        for &item in &self.program.items {
            if !matches!(item.kind(self.db), ItemKind::Flow | ItemKind::Handler | ItemKind::Agent) {
                continue;
            }
            for occurrence in occurrences_of_item(self.db, item) {
                if let (true, Symbol::Variable(name)) = (occurrence.def, occurrence.symbol)
                    && !names.contains(&name)
                {
                    names.push(name);
                }
            }
        }
        names.extend(sr_hir::diagnostics::BUILTIN_VARIABLES.iter().map(|b| Name::from(*b)));
        for name in names {
            self.add(&name, CompletionKind::Variable, Some("variable".to_string()), name.to_string());
        }
    }

    fn in_string(&mut self, text: &'a str, string: (SyntaxKind, TextRange, Option<SyntaxKind>), at: usize) {
        let (kind, range, owner) = string;
        let inside = &text[usize::from(range.start())..at];
        if let Some(open) = inside.rfind("${")
            && !inside[open..].contains('}')
        {
            let name_start = usize::from(range.start()) + open + 2;
            let name_start = if text[name_start..at].starts_with('$') { name_start + 1 } else { name_start };
            if let Some(dot) = text[name_start..at].rfind('.') {
                let word_start = name_start + dot + 1;
                self.prefix = &text[word_start..at];
                self.replace_range = TextRange::new(TextSize::from(word_start as u32), TextSize::from(at as u32));
                fields::offer(self, &text[name_start..word_start - 1]);
                return;
            }
            self.prefix = &text[name_start..at];
            if !self.prefix.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
                return;
            }
            self.replace_range = TextRange::new(TextSize::from(name_start as u32), TextSize::from(at as u32));
            if kind == TRIPLE_STRING {
                self.items(ItemKind::Prompt);
            }
            self.variables();
            return;
        }
        if matches!(owner, Some(PROMPT_MODIFIER | USING_CLAUSE | POLICY_PROPERTY)) {
            self.items(ItemKind::Model);
        }
    }

    fn after(&mut self, before: &[SyntaxKind], block: Block) {
        let first = before.first().copied();
        let last = before.last().copied();
        let last2 = before.len().checked_sub(2).map(|i| before[i]);
        let list_of = |keyword: SyntaxKind| {
            first == Some(keyword) && before[1..].iter().all(|k| matches!(k, NAME | DOTTED_NAME | COMMA))
        };
        let executor_line = self.line.trim_start().starts_with(EXECUTOR);
        match (last2, last) {
            (None, Some(NAME)) if block == Block::Agent && executor_line => self.items(ItemKind::Executor),
            (Some(NAME), Some(COLON)) if block == Block::Executor && self.line.trim_start().starts_with("backend") => {
                for name in SandboxBackend::NAMES {
                    self.add(name, CompletionKind::Keyword, Some("executor backend".to_string()), name.to_string());
                }
            }
            (_, None) if block == Block::Executor => {
                for (key, about) in EXECUTOR_PROPERTIES {
                    self.add(key, CompletionKind::Keyword, Some(about.to_string()), format!("{key}: "));
                }
            }
            _ if block == Block::Agent && list_of(TOOLS_KW) => self.items(ItemKind::Tool),
            _ if block == Block::Agent && (list_of(DELEGATE_KW) || list_of(USE_KW)) => {
                // An agent naming itself makes a cycle (error E0011): never offered.
                self.items(ItemKind::Agent);
                let own = self.agent;
                self.out.retain(|c| Some(c.label.as_str()) != own);
            }
            (None, Some(INSTRUCTION_KW | PROMPT_KW)) if block == Block::Agent => self.items(ItemKind::Prompt),
            (None, Some(RETRY_KW)) if block == Block::Agent => self.items(ItemKind::RetryPolicy),
            (None, Some(TIMEOUT_KW)) if block == Block::Agent => self.items(ItemKind::TimeoutPolicy),
            (None, Some(HISTORY_KW)) if block == Block::Agent => self.items(ItemKind::Policy),
            (Some(RUN_KW), Some(AGENT_KW)) => self.items(ItemKind::Agent),
            (_, Some(RUN_KW)) => {
                self.keywords(&["agent"]);
                self.items(ItemKind::Flow);
            }
            (Some(CALL_KW), Some(LLM_KW)) => self.items(ItemKind::Prompt),
            (_, Some(CALL_KW)) => self.keywords(&["llm"]),
            (_, Some(EXPECTING_KW)) => self.items(ItemKind::Schema),
            (Some(USING_KW), Some(MODEL_KW)) => {
                let names: Vec<Name> = self.program.models.keys().cloned().collect();
                for name in names {
                    self.add(&name, CompletionKind::Model, Some("model".to_string()), format!("\"{name}\""));
                }
            }
            (_, Some(USING_KW)) => self.keywords(&["model"]),
            (_, Some(DOLLAR)) => self.variables(),
            (Some(ON_KW | AFTER_KW), _) => {}
            (None, Some(ON_KW | AFTER_KW)) => match block {
                Block::Flow => self.keywords(&["failure"]),
                _ => self.keywords(EVENTS),
            },
            (_, Some(COLON)) if block == Block::Schema => self.types(),
            (Some(LIST_KW), Some(L_BRACK)) => self.types(),
            (Some(RUN_KW), Some(NAME)) | (Some(AGENT_KW), Some(NAME | DOTTED_NAME))
                if matches!(block, Block::Flow | Block::Handler) =>
            {
                self.keywords(&["with", "history"])
            }
            (Some(LLM_KW), Some(_)) => self.keywords(&["with", "using"]),
            (Some(FOR_KW), Some(_)) => self.keywords(&["in"]),
            (None, Some(LOOP_KW)) => self.keywords(&["max", "do"]),
            (_, Some(kind)) if matches!(block, Block::Flow | Block::Handler) && starts_expression(kind) => {
                self.variables();
                self.keywords(EXPRESSION_KEYWORDS);
            }
            (_, None) => {
                if self.config.snippets {
                    snippets::add(self, block);
                }
                self.keywords(match block {
                    Block::TopLevel => TOP_LEVEL,
                    Block::Agent => AGENT_BODY,
                    Block::Flow => FLOW_BODY,
                    Block::Handler => HANDLER_BODY,
                    Block::Model => MODEL_BODY,
                    Block::Tool => TOOL_BODY,
                    Block::Policy => POLICY_BODY,
                    Block::Schema | Block::Executor => &[],
                })
            }
            _ => {}
        }
    }

    fn types(&mut self) {
        for ty in TYPES {
            self.add(ty, CompletionKind::Type, None, ty.to_string());
        }
        self.items(ItemKind::Schema);
    }
}

/// Tokens after which an expression starts.
fn starts_expression(kind: SyntaxKind) -> bool {
    matches!(
        kind,
        EQ | WITH_KW
            | IF_KW
            | RETURN_KW
            | LOG_KW
            | NOTIFY_KW
            | IN_KW
            | PUSH_KW
            | NOT_KW
            | AND_KW
            | OR_KW
            | WHERE_KW
            | FILTER_KW
            | L_PAREN
            | L_BRACK
            | COMMA
            | EQ2
            | NEQ
            | LT
            | GT
            | LTEQ
            | GTEQ
            | PLUS
            | MINUS
            | STAR
            | SLASH
            | PERCENT
            | TILDE
            | CONTAINS_KW
            | MATCH_KW
    )
}

/// The string token the cursor is inside (after its opening quote), with the
/// kind of the node that owns the literal.
fn string_at(db: &dyn Db, file: File, offset: TextSize) -> Option<(SyntaxKind, TextRange, Option<SyntaxKind>)> {
    let root = parse(db, file).syntax();
    let token = root.token_at_offset(offset).find(|t| matches!(t.kind(), STRING | INTERP_STRING | TRIPLE_STRING))?;
    let range = token.text_range();
    let quote: u32 = if token.kind() == TRIPLE_STRING { 3 } else { 1 };
    let closed = token.text().len() >= 2 * quote as usize;
    let body_end = if closed { range.end() - TextSize::from(quote) } else { range.end() };
    if offset < range.start() + TextSize::from(quote) || offset > body_end {
        return None;
    }
    let owner = token.parent().and_then(|literal| literal.parent()).map(|n| n.kind());
    Some((token.kind(), range, owner))
}

/// The name of the `agent NAME:` definition `before` (the text up to a line)
/// ends inside: its last unindented line, when that starts one.
fn enclosing_agent(before: &str) -> Option<&str> {
    let top = before.lines().rev().find(|l| !l.trim().is_empty() && !l.starts_with([' ', '\t', '#']))?;
    let rest = top.strip_prefix("agent")?.strip_prefix([' ', '\t'])?.trim_start();
    let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(rest.len());
    Some(&rest[..end]).filter(|name| !name.is_empty())
}

/// The block of the line starting at `line_start`, from the nearest earlier
/// line indented less than it (its first word names the block).
fn enclosing_block(text: &str, line_start: usize, word_start: usize) -> Block {
    let indent = |line: &str| {
        line.chars().take_while(|c| *c == ' ' || *c == '\t').map(|c| if c == '\t' { 4 } else { 1 }).sum::<usize>()
    };
    let current = indent(&text[line_start..word_start]);
    let mut limit = current;
    let mut inside_statement = false;
    for line in text[..line_start].lines().rev() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || indent(line) >= limit {
            continue;
        }
        limit = indent(line);
        let first = trimmed.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).next().unwrap_or("");
        let block = match first {
            "agent" => Block::Agent,
            "flow" => Block::Flow,
            "schema" => Block::Schema,
            "model" => Block::Model,
            "tool" => Block::Tool,
            "policy" => Block::Policy,
            EXECUTOR => Block::Executor,
            "on" | "after" if trimmed.trim_end().ends_with("do") => Block::Handler,
            _ => {
                inside_statement = true;
                if limit == 0 {
                    return Block::TopLevel;
                }
                continue;
            }
        };
        return if inside_statement && block == Block::Agent { Block::Handler } else { block };
    }
    Block::TopLevel
}

#[cfg(test)]
mod keywords_tests;
#[cfg(test)]
mod tests;
