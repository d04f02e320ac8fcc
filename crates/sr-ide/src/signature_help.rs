//! Signature help: inside the arguments of a call, the function's signature
//! with the argument under the cursor. Calls of a declared tool's functions
//! (`fs.write_file(…)`, from `sr_hir::tool_functions`) and of the standard
//! library (`split(…)`, from `sr_hir::stdlib`), and the one input of
//! `run agent A with …`. MCP tools are left out: their functions are known
//! only at run time. A flow takes no input (`run F with X` ignores `X`).

use std::fmt::Write;

use sr_hir::hir::ItemData;
use sr_hir::resolve::Program;
use sr_hir::tool_functions::ToolFunction;
use sr_hir::{Db, RootDatabase, item_at, item_data, item_syntax};
use sr_syntax::{SyntaxKind, SyntaxNode, SyntaxToken, TextRange, TextSize};

use crate::FilePosition;
use crate::namespace::analysis_program;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureHelp {
    /// `fs.write_file(path, content?)`.
    pub label: String,
    /// Markdown.
    pub documentation: Option<String>,
    pub parameters: Vec<SignatureParameter>,
    /// The parameter the cursor's argument binds to.
    pub active_parameter: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureParameter {
    /// The parameter's place in the signature's `label` (bytes).
    pub range: TextRange,
    /// Markdown.
    pub documentation: Option<String>,
}

pub(crate) fn signature_help(db: &RootDatabase, position: &FilePosition) -> Option<SignatureHelp> {
    let file = db.file(&position.path)?;
    // After `f(x, ` at the end of a line the cursor is past the item's text.
    let line = file.text(db).get(..usize::from(position.offset))?;
    let before_blanks = TextSize::of(line.trim_end_matches([' ', '\t']));
    let item = item_at(db, file, position.offset).or_else(|| item_at(db, file, before_blanks))?;
    let offset = position.offset.checked_sub(item.offset(db))?;
    let root = item_syntax(db, item);
    let program = analysis_program(db, file);
    let token = significant_token_before(&root, offset)?;
    for node in token.parent_ancestors() {
        match node.kind() {
            SyntaxKind::ARG_LIST => {
                if let Some(help) = call_help(db, program, &node, offset) {
                    return Some(help);
                }
            }
            SyntaxKind::RUN_STMT => return run_help(db, program, &node, offset),
            _ => {}
        }
    }
    None
}

/// The last token that is not trivia ending at or before `offset` (or the
/// item's end): after `f(x, ` the cursor is in white space that may lie
/// outside the argument list.
fn significant_token_before(root: &SyntaxNode, offset: TextSize) -> Option<SyntaxToken> {
    let mut token = root.token_at_offset(offset.min(root.text_range().end())).left_biased()?;
    while token.kind().is_trivia() || token.kind() == SyntaxKind::NEWLINE {
        token = token.prev_token()?;
    }
    Some(token)
}

fn call_help(db: &dyn Db, program: &Program<'_>, args: &SyntaxNode, offset: TextSize) -> Option<SignatureHelp> {
    let call = args.parent().filter(|p| p.kind() == SyntaxKind::CALL_EXPR)?;
    let tokens: Vec<SyntaxToken> = args.children_with_tokens().filter_map(|e| e.into_token()).collect();
    let open = tokens.iter().find(|t| t.kind() == SyntaxKind::L_PAREN);
    let close = tokens.iter().find(|t| t.kind() == SyntaxKind::R_PAREN);
    let inside = match (open, close) {
        (Some(open), Some(close)) => open.text_range().end() <= offset && offset <= close.text_range().start(),
        (Some(open), None) => open.text_range().end() <= offset,
        // `process x`: the arguments are the list itself.
        (None, _) => args.text_range().start() <= offset && offset <= args.text_range().end(),
    };
    if !inside {
        return None;
    }
    let argument = match open {
        Some(_) => tokens.iter().filter(|t| t.kind() == SyntaxKind::COMMA && t.text_range().end() <= offset).count(),
        None => args.children().filter(|a| a.text_range().end() < offset).count(),
    };
    let callee = call.children().find(|c| c.kind() == SyntaxKind::NAME_REF)?.text().to_string();
    let callee = callee.trim();
    match callee.split_once('.') {
        Some((tool, function)) => {
            let functions = crate::tool_functions::functions_of(db, program, tool)?;
            let function = functions.into_iter().find(|f| f.name == function)?;
            Some(tool_help(tool, function, argument))
        }
        None => Some(stdlib_help(sr_hir::stdlib::function(callee)?, argument)),
    }
}

/// Builds a label `prefix(p1, p2)` and the ranges of its parameters.
fn label_with_params<'a>(prefix: &str, params: impl Iterator<Item = &'a str>) -> (String, Vec<TextRange>) {
    let mut label = format!("{prefix}(");
    let mut ranges = Vec::new();
    for (i, param) in params.enumerate() {
        if i > 0 {
            label.push_str(", ");
        }
        let start = TextSize::of(label.as_str());
        label.push_str(param);
        ranges.push(TextRange::at(start, TextSize::of(param)));
    }
    label.push(')');
    (label, ranges)
}

fn tool_help(tool: &str, function: &ToolFunction, argument: usize) -> SignatureHelp {
    let names: Vec<String> =
        function.params.iter().map(|p| format!("{}{}", p.name, if p.required { "" } else { "?" })).collect();
    let (label, ranges) = label_with_params(&format!("{tool}.{}", function.name), names.iter().map(String::as_str));
    let parameters = ranges
        .into_iter()
        .zip(function.params)
        .map(|(range, param)| SignatureParameter { range, documentation: Some(param.doc.to_string()) })
        .collect();
    SignatureHelp {
        label,
        documentation: Some(format!("{}\n\n**gives** {}", function.doc, function.value)),
        parameters,
        active_parameter: (argument < function.params.len()).then_some(argument),
    }
}

fn stdlib_help(function: &sr_hir::stdlib::Function, argument: usize) -> SignatureHelp {
    let params: Vec<&str> = function.params.split(", ").filter(|p| !p.is_empty()).collect();
    let (label, ranges) = label_with_params(function.name, params.iter().copied());
    let count = ranges.len();
    // A function taking any number of arguments binds the extra ones to its last.
    let active = if function.max.is_none() { Some(argument.min(count.saturating_sub(1))) } else { Some(argument) };
    let mut documentation = format!("{}\n\n```streetrace\n{}\n```", function.doc, function.example);
    let _ = write!(documentation, "\n\n**gives** {}", function.result);
    SignatureHelp {
        label,
        documentation: Some(documentation),
        parameters: ranges.into_iter().map(|range| SignatureParameter { range, documentation: None }).collect(),
        active_parameter: active.filter(|&a| a < count),
    }
}

/// `run agent A with …`: the message A is given.
fn run_help(db: &dyn Db, program: &Program<'_>, run: &SyntaxNode, offset: TextSize) -> Option<SignatureHelp> {
    let is_agent = run.children_with_tokens().any(|e| e.kind() == SyntaxKind::AGENT_KW);
    let with = run.children().find(|c| c.kind() == SyntaxKind::WITH_CLAUSE)?;
    let keyword = with.first_token().filter(|t| t.kind() == SyntaxKind::WITH_KW)?;
    // The input runs to what follows it: `history`, `, on escalate` or the line's end.
    let mut next = with.next_sibling_or_token();
    while let Some(element) = next.as_ref().filter(|e| e.kind().is_trivia()) {
        next = element.next_sibling_or_token();
    }
    let end = next.map_or(run.text_range().end(), |e| e.text_range().start());
    if !is_agent || offset < keyword.text_range().end() || offset > end {
        return None;
    }
    let name = run.children().find(|c| c.kind() == SyntaxKind::NAME_REF)?.text().to_string();
    let name = name.trim();
    let label = format!("run agent {name} with input");
    let range = TextRange::at(TextSize::of(label.as_str()) - TextSize::of("input"), TextSize::of("input"));
    let agent = program.agents.get(name).map(|&item| item_data(db, item));
    let data = match agent.as_deref() {
        Some(ItemData::Agent(data)) => Some(data),
        _ => None,
    };
    let mut param = "The message the agent is given".to_string();
    match data.and_then(|d| d.prompt.as_ref()) {
        Some(prompt) => {
            let _ = write!(param, " (without `with`: its `prompt {}`).", prompt.name);
        }
        None => param.push_str(" (without `with` and without a `prompt` property, none)."),
    }
    let mut documentation = data.and_then(|d| d.description.clone()).unwrap_or_default();
    if let Some(instruction) = data.and_then(|d| d.instruction.as_ref()) {
        let expecting = program.prompts.get(&instruction.name).and_then(|p| p.data(db).expecting);
        let _ = write!(documentation, "\n\n**instruction** `{}`", instruction.name);
        if let Some(expecting) = expecting {
            let array = if expecting.array { "[]" } else { "" };
            let _ = write!(documentation, "  \n**gives** `{}{array}`", expecting.schema.name);
        }
    }
    let documentation = documentation.trim().to_string();
    Some(SignatureHelp {
        label,
        documentation: (!documentation.is_empty()).then_some(documentation),
        parameters: vec![SignatureParameter { range, documentation: Some(param) }],
        active_parameter: Some(0),
    })
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::{analysis, at_every_offset, position};

    /// The label with the active parameter in `⟨…⟩`, then the documentation
    /// of the function and of each parameter.
    fn check(fixture: &str, expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        at_every_offset(&analysis, &fixture, |analysis, at| {
            if let Some(help) = analysis.signature_help(&at).unwrap() {
                assert!(help.parameters.iter().all(|p| usize::from(p.range.end()) <= help.label.len()));
                assert!(help.active_parameter.is_none_or(|a| a < help.parameters.len()));
            }
        });
        let Some(help) = analysis.signature_help(&position(&fixture)).unwrap() else {
            expect.assert_eq("none");
            return;
        };
        let mut label = help.label.clone();
        if let Some(active) = help.active_parameter {
            let range = help.parameters[active].range;
            label.insert(usize::from(range.end()), '⟩');
            label.insert(usize::from(range.start()), '⟨');
        }
        let mut out = format!("{label}\n{}\n", help.documentation.unwrap_or_default());
        for param in &help.parameters {
            let doc = param.documentation.as_deref().unwrap_or("-");
            out.push_str(&format!("- {}: {doc}\n", &help.label[param.range]));
        }
        expect.assert_eq(&out);
    }

    const TOOLS: &str = "tool fs = builtin streetrace.fs\ntool ro = builtin streetrace.fs_readonly\n";

    #[test]
    fn tool_functions_with_the_argument_under_the_cursor() {
        check(
            &format!("{TOOLS}flow main:\n    $x = fs.write_file($0\n"),
            expect![[r#"
                fs.write_file(⟨path⟩, content?)
                Write text to a file, replacing its contents and creating missing directories.

                **gives** the message `wrote N bytes`
                - path: Path relative to the working directory.
                - content?: The text to write.
            "#]],
        );
        check(
            &format!("{TOOLS}flow main:\n    $x = fs.write_file(\"a\", $0)\n"),
            expect![[r#"
                fs.write_file(path, ⟨content?⟩)
                Write text to a file, replacing its contents and creating missing directories.

                **gives** the message `wrote N bytes`
                - path: Path relative to the working directory.
                - content?: The text to write.
            "#]],
        );
        // Past the last parameter: the signature, no parameter active.
        check(
            &format!("{TOOLS}flow main:\n    $x = ro.read_file(\"a\", 1$0)\n"),
            expect![[r#"
                ro.read_file(path)
                Read the contents of a text file.

                **gives** the file's text (`"<binary>"` when it is not UTF-8)
                - path: Path relative to the working directory.
            "#]],
        );
    }

    #[test]
    fn an_imported_tool_inside_an_expression() {
        check(
            "//- /tools.sr\ntool fs = builtin streetrace.fs\n//- /main.sr\nimport ./tools.sr\nflow main:\n    $x = \"é\" + fs.write_file(\"a\", $0\n",
            expect![[r#"
                fs.write_file(path, ⟨content?⟩)
                Write text to a file, replacing its contents and creating missing directories.

                **gives** the message `wrote N bytes`
                - path: Path relative to the working directory.
                - content?: The text to write.
            "#]],
        );
    }

    #[test]
    fn unknown_functions_mcp_tools_and_outside_the_parentheses_give_none() {
        // `write_file` is not a function of `fs_readonly`.
        check(&format!("{TOOLS}flow main:\n    $x = ro.write_file($0)\n"), expect!["none"]);
        check("tool gh = mcp \"https://example.com/mcp\"\nflow main:\n    $x = gh.search($0)\n", expect!["none"]);
        check(&format!("{TOOLS}flow main:\n    $x = fs.read_file(\"a\")$0\n"), expect!["none"]);
        check(&format!("{TOOLS}flow main:\n    $x = fs.read_file$0(\"a\")\n"), expect!["none"]);
        check("flow main:\n    $x = nope(1, $0)\n", expect!["none"]);
    }

    #[test]
    fn stdlib_functions_nested_calls_take_the_innermost() {
        check(
            "flow main:\n    $x = len(split($0\"a,b\", \",\"))\n",
            expect![[r#"
                split(⟨text⟩, sep)
                the pieces of the text between separators

                ```streetrace
                split("a,b,,c", ",")
                ```

                **gives** ["a","b","","c"]
                - text: -
                - sep: -
            "#]],
        );
        check(
            "flow main:\n    $x = len(split(\"a,b\", \",\"), $0)\n",
            expect![[r#"
                len(x)
                characters of a string, items of a list, keys of an object

                ```streetrace
                len("héllo")
                ```

                **gives** 5
                - x: -
            "#]],
        );
        // Any number of arguments: the extra ones bind to the last parameter.
        check(
            "flow main:\n    $x = max(1, 2, 3, $0)\n",
            expect![[r#"
                max(list | a, b, ⟨...⟩)
                the largest item of a list, or of the arguments

                ```streetrace
                max(3, 9, 2)
                ```

                **gives** 9
                - list | a: -
                - b: -
                - ...: -
            "#]],
        );
        check(
            "flow main:\n    $x = uuid($0)\n",
            expect![[r#"
                uuid()
                a new random UUID (version 4)

                ```streetrace
                uuid()
                ```

                **gives** "a 36-character string such as 1b4e28ba-2fa1-41d2-883f-0016d3cca427"
            "#]],
        );
    }

    #[test]
    fn the_input_of_an_agent_run_across_files() {
        check(
            r#"
//- /agents.sr
schema Reply:
    text: string
prompt sys expecting Reply: """You reply."""
agent replier:
    description "Answers one question."
    instruction sys
    prompt question
//- /main.sr
import ./agents.sr
flow main:
    $question = "why?"
    $r = run agent replier with $0
"#,
            expect![[r#"
                run agent replier with ⟨input⟩
                Answers one question.

                **instruction** `sys`  
                **gives** `Reply`
                - input: The message the agent is given (without `with`: its `prompt question`).
            "#]],
        );
        // A flow takes no input; before `with` there is nothing to help with.
        check("flow other:\n    log 1\nflow main:\n    run other with $0\n", expect!["none"]);
        check(
            "prompt p: \"\"\"x\"\"\"\nagent a:\n    instruction p\nflow main:\n    run agent$0 a with 1\n",
            expect!["none"],
        );
    }
}
