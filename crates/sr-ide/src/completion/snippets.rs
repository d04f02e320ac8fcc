//! Snippets for the block constructs, offered at the start of a line of the
//! block where the construct may stand (language.md §5: colon blocks, `do …
//! end` blocks, `match … end`). Labels are the prefixes of the VS Code
//! extension's snippets (`editors/vscode/snippets/streetrace.json`). Bodies
//! are in LSP snippet syntax; their lines after the first get the current
//! line's indentation, so the client inserts them as they are.

use super::{Block, CompletionItem, CompletionKind, Completions};

/// A snippet: label, what it writes, and its lines (indented by four spaces
/// per level relative to the line the cursor is on).
pub(super) struct Snippet {
    pub label: &'static str,
    pub detail: &'static str,
    pub lines: &'static [&'static str],
}

const fn snippet(label: &'static str, detail: &'static str, lines: &'static [&'static str]) -> Snippet {
    Snippet { label, detail, lines }
}

pub(super) const TOP_LEVEL: &[Snippet] = &[
    snippet(
        "model",
        "a model bound to a provider/model id",
        &["model ${1:main} = ${2|anthropic,openai,gemini,ollama|}/${3:model-id}$0"],
    ),
    snippet(
        "model-long",
        "a model with its properties",
        &["model ${1:main}:", "    provider: ${2:anthropic}", "    name: ${3:model-id}$0"],
    ),
    snippet(
        "prompt",
        "a prompt with a triple-quoted body",
        &["prompt ${1:name}${2: using model \"${3:main}\"}: \"\"\"${4:You are a helpful assistant.}\"\"\"$0"],
    ),
    snippet(
        "prompt-expecting",
        "a prompt whose answer is validated against a schema",
        &["prompt ${1:name} expecting ${2:Schema}: \"\"\"${3:Answer in JSON.}\"\"\"$0"],
    ),
    snippet("tool", "a built-in tool", &["tool ${1:fs} = builtin streetrace.${2|fs,fs_readonly,cli|}$0"]),
    snippet(
        "tool-mcp",
        "a remote MCP server with bearer authentication",
        &["tool ${1:server} = mcp \"${2:https://example.com/mcp}\" with auth bearer \"\\${env:${3:TOKEN}}\"$0"],
    ),
    snippet(
        "schema",
        "a structured-output schema",
        &["schema ${1:Result}:", "    ${2:summary}: ${3|string,int,float,bool,list[string]|}$0"],
    ),
    snippet(
        "agent",
        "an agent with an instruction and tools",
        &["agent ${1:helper}:", "    instruction ${2:prompt_name}", "    tools ${3:fs}$0"],
    ),
    snippet(
        "flow",
        "a flow that runs an agent and returns its result",
        &[
            "flow ${1:main}:",
            "    \\$${2:result} = run agent ${3:name} with \\$input_prompt",
            "    return \\$${2:result}$0",
        ],
    ),
    snippet(
        "retry",
        "a retry policy",
        &["retry ${1:default} = ${2:3} times, ${3|exponential,linear,fixed|} backoff$0"],
    ),
    snippet("timeout", "a timeout policy", &["timeout ${1:default} = ${2:2} ${3|seconds,minutes,hours|}$0"]),
    snippet("policy", "a history policy", &["policy ${1:compaction}:", "    strategy: ${2|summarize,truncate|}$0"]),
    snippet(
        "executor",
        "a sandbox that runs the code an agent writes",
        &["executor ${1:sandbox}:", "    backend: ${2|bubblewrap,container,unsandboxed|}", "    timeout: ${3:20}$0"],
    ),
    snippet(
        "on",
        "a guardrail handler",
        &["on ${1|input,output,tool-call,tool-result|} do", "    ${2:mask pii}", "end$0"],
    ),
    snippet(
        "after",
        "a handler run after an event",
        &["after ${1|input,output,tool-call,tool-result|} do", "    ${2:mask pii}", "end$0"],
    ),
];

/// Handlers scoped to an agent.
pub(super) const AGENT_BODY: &[Snippet] = &[
    snippet(
        "on",
        "a guardrail handler for this agent",
        &["on ${1|input,output,tool-call,tool-result|} do", "    ${2:mask pii}", "end$0"],
    ),
    snippet(
        "after",
        "a handler run after an event of this agent",
        &["after ${1|input,output,tool-call,tool-result|} do", "    ${2:mask pii}", "end$0"],
    ),
];

const IF: Snippet = snippet("if", "run statements when a condition holds", &["if ${1:\\$condition}:", "    $0"]);
const FOR: Snippet = snippet("for", "iterate over a list", &["for \\$${1:item} in \\$${2:items} do", "    $0", "end"]);
const PARALLEL: Snippet = snippet(
    "parallel",
    "run agents at the same time",
    &["parallel do", "    \\$${1:result} = run agent ${2:name}", "    $0", "end"],
);
const LOOP: Snippet = snippet("loop", "repeat at most N times", &["loop max ${1:3} do", "    $0", "end"]);

pub(super) const FLOW_BODY: &[Snippet] = &[
    IF,
    FOR,
    PARALLEL,
    LOOP,
    snippet(
        "match",
        "choose a statement by a value",
        &[
            "match ${1:\\$value}",
            "    when \"${2:text}\" -> ${3:log \"matched\"}",
            "    else -> ${4:log \"other\"}",
            "end$0",
        ],
    ),
    snippet("on-failure", "handle a failure of the statements before", &["on failure:", "    $0"]),
];

/// Handler bodies take no `match` and no `on failure` (language.md §5).
pub(super) const HANDLER_BODY: &[Snippet] = &[IF, FOR, PARALLEL, LOOP];

/// The snippets valid at the start of a line in `block`.
pub(super) fn of(block: Block) -> &'static [Snippet] {
    match block {
        Block::TopLevel => TOP_LEVEL,
        Block::Agent => AGENT_BODY,
        Block::Flow => FLOW_BODY,
        Block::Handler => HANDLER_BODY,
        Block::Schema | Block::Model | Block::Tool | Block::Policy | Block::Executor => &[],
    }
}

/// The snippet's text for a line indented by `indent`.
pub(super) fn body(snippet: &Snippet, indent: &str) -> String {
    snippet.lines.join(&format!("\n{indent}"))
}

pub(super) fn add(cx: &mut Completions<'_, '_>, block: Block) {
    let indent: String = cx.line.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
    for snippet in of(block) {
        cx.add_item(CompletionItem {
            label: snippet.label.to_string(),
            kind: CompletionKind::Snippet,
            detail: Some(snippet.detail.to_string()),
            documentation: None,
            insert_text: body(snippet, &indent),
            replace_range: cx.replace_range,
            snippet: true,
            additional_edits: Vec::new(),
        });
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::{AGENT_BODY, FLOW_BODY, HANDLER_BODY, Snippet, TOP_LEVEL, body};
    use crate::CompletionConfig;
    use crate::completion::tests::check_with;

    const SNIPPETS: CompletionConfig = CompletionConfig { snippets: true };

    /// Only the snippet items, with their text.
    fn check(fixture: &str, config: CompletionConfig, expect: Expect) {
        let (analysis, fixture) = crate::tests::analysis(fixture);
        let items = analysis.completions(&crate::tests::position(&fixture), config).unwrap();
        let out: Vec<String> =
            items.iter().filter(|c| c.snippet).map(|c| format!("{}:\n{}", c.label, c.insert_text)).collect();
        expect.assert_eq(&out.join("\n"));
    }

    #[test]
    fn block_snippets_where_the_block_may_stand_indented_as_the_line() {
        check(
            "flow main:\n    for $i in $xs do\n        fo$0\n    end\n",
            SNIPPETS,
            expect![[r#"
                for:
                for \$${1:item} in \$${2:items} do
                            $0
                        end"#]],
        );
        check(
            "ag$0",
            SNIPPETS,
            expect![[r#"
                agent:
                agent ${1:helper}:
                    instruction ${2:prompt_name}
                    tools ${3:fs}$0"#]],
        );
        check(
            "agent a:\n    instruction p\n    af$0\n",
            SNIPPETS,
            expect![[r#"
                after:
                after ${1|input,output,tool-call,tool-result|} do
                        ${2:mask pii}
                    end$0"#]],
        );
    }

    #[test]
    fn no_snippet_where_the_construct_is_invalid_or_the_client_takes_none() {
        // Handlers take no `match` or `on failure`; no flow statement at the top level;
        // nothing inside schemas or after the start of a line.
        check("on input do\n    ma$0\nend\n", SNIPPETS, expect![[""]]);
        check("on input do\n    on$0\nend\n", SNIPPETS, expect![[""]]);
        check("parall$0", SNIPPETS, expect![[""]]);
        check("schema S:\n    fo$0\n", SNIPPETS, expect![[""]]);
        check("flow main:\n    log fo$0\n", SNIPPETS, expect![[""]]);
        check("flow main:\n    fo$0\n", CompletionConfig::default(), expect![[""]]);
        // The keyword is still there for a plain-text client.
        check_with("flow main:\n    paral$0\n", CompletionConfig::default(), expect!["Keyword parallel"]);
        check_with(
            "flow main:\n    paral$0\n",
            SNIPPETS,
            expect![[r#"
                Snippet parallel -> parallel do
                        \$${1:result} = run agent ${2:name}
                        $0
                    end
                Keyword parallel"#]],
        );
    }

    /// The snippet with every placeholder at its default (first choice) and
    /// an empty final tab stop given a statement.
    fn expand(snippet: &Snippet, indent: &str) -> String {
        let text = body(snippet, indent);
        let mut out = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' => out.extend(chars.next()),
                '$' if chars.peek() == Some(&'{') => {
                    chars.next();
                    while chars.peek().is_some_and(char::is_ascii_digit) {
                        chars.next();
                    }
                    match chars.next() {
                        // `${1|a,b|}`: the first choice.
                        Some('|') => {
                            let choices: String = chars.by_ref().take_while(|&c| c != '|').collect();
                            out.push_str(choices.split(',').next().unwrap());
                            chars.next();
                        }
                        // `${1:default}`, defaults nest: the text is kept, the markers dropped.
                        Some(':') => {
                            let mut depth = 1;
                            while depth > 0 {
                                match chars.next().unwrap() {
                                    '\\' => out.extend(chars.next()),
                                    '$' if chars.peek() == Some(&'{') => {
                                        chars.next();
                                        chars.by_ref().take_while(|&c| c != ':').for_each(drop);
                                        depth += 1;
                                    }
                                    '}' => depth -= 1,
                                    c => out.push(c),
                                }
                            }
                        }
                        other => panic!("unexpected {other:?} in {text}"),
                    }
                }
                '$' => {
                    if chars.peek() == Some(&'0') && out.ends_with("    ") {
                        out.push_str("log \"x\"");
                    }
                    while chars.peek().is_some_and(char::is_ascii_digit) {
                        chars.next();
                    }
                }
                c => out.push(c),
            }
        }
        out
    }

    #[test]
    fn every_snippet_expanded_parses_in_its_block() {
        let defs = "prompt p: \"\"\"x\"\"\"\n";
        let contexts: [(&[Snippet], &str, &str, &str); 4] = [
            (TOP_LEVEL, "", "", ""),
            (AGENT_BODY, "agent a:\n    instruction p\n    ", "    ", ""),
            (FLOW_BODY, "flow main:\n    $input_prompt = 1\n    ", "    ", ""),
            (HANDLER_BODY, "on input do\n    ", "    ", "\nend"),
        ];
        for (snippets, before, indent, after) in contexts {
            for snippet in snippets {
                let text = format!("{defs}{before}{}{after}\n", expand(snippet, indent));
                let parse = sr_syntax::parse(&text);
                assert!(parse.errors().is_empty(), "{}: {:?}\n{text}", snippet.label, parse.errors());
            }
        }
    }
}
