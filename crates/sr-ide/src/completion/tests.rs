//! Completion tests: the items offered at `$0`, as `Kind label[ -> insert]`.

use expect_test::{Expect, expect};

use crate::CompletionConfig;
use crate::tests::{analysis, position};

fn check(fixture: &str, expect: Expect) {
    check_with(fixture, CompletionConfig::default(), expect)
}

/// As `check`, for a client that takes `config`; an item's edits elsewhere
/// follow it as `+ "text"@range`.
pub(super) fn check_with(fixture: &str, config: CompletionConfig, expect: Expect) {
    let (analysis, fixture) = analysis(fixture);
    let items = analysis.completions(&position(&fixture), config).unwrap();
    let out: Vec<String> = items
        .iter()
        .map(|c| {
            let insert = if c.insert_text == c.label { String::new() } else { format!(" -> {}", c.insert_text) };
            let edits: Vec<String> =
                c.additional_edits.iter().map(|e| format!(" + {:?}@{:?}", e.new_text, e.range)).collect();
            let edits = edits.concat();
            format!("{:?} {}{insert}{edits}", c.kind, c.label)
        })
        .collect();
    expect.assert_eq(&out.join("\n"));
}

const DEFS: &str = r#"
    model main = anthropic/claude
    model fast = anthropic/haiku
    tool fs = builtin streetrace.fs
    tool web = builtin streetrace.web
    schema Finding:
        note: string
    prompt review: """Review"""
    prompt summary: """Sum"""
    agent reviewer:
        instruction review
    agent fixer:
        instruction review
    flow helper:
        $found = 1
        return $found
    "#;

fn with_defs(rest: &str) -> String {
    format!("{}\n{}", sr_testing::fixture::trim_indent(DEFS), sr_testing::fixture::trim_indent(rest))
}

#[test]
fn names_of_the_right_kind_after_agent_properties() {
    check(
        &with_defs("agent a:\n    tools fs, $0\n"),
        expect![[r#"
        Tool fs
        Tool web"#]],
    );
    check(&with_defs("agent a:\n    delegate rev$0\n"), expect!["Agent reviewer"]);
    check(
        &with_defs("agent a:\n    instruction $0\n"),
        expect![[r#"
        Prompt review
        Prompt summary"#]],
    );
}

#[test]
fn names_after_run_call_expecting_and_using() {
    check(
        &with_defs("flow main:\n    $x = run agent $0\n"),
        expect![[r#"
        Agent reviewer
        Agent fixer"#]],
    );
    check(
        &with_defs("flow main:\n    $x = run $0\n"),
        expect![[r#"
        Keyword agent
        Flow helper
        Flow main"#]],
    );
    check(&with_defs("flow main:\n    $x = call llm s$0\n"), expect!["Prompt summary"]);
    check(&with_defs("prompt p expecting $0: \"\"\"x\"\"\"\n"), expect!["Schema Finding"]);
    check(
        &with_defs("prompt p using model \"$0\": \"\"\"x\"\"\"\n"),
        expect![[r#"
        Model main
        Model fast"#]],
    );
    check(
        &with_defs("flow main:\n    $x = call llm review using model $0\n"),
        expect![[r#"
        Model main -> "main"
        Model fast -> "fast""#]],
    );
}

#[test]
fn variables_in_flows_and_names_in_interpolations() {
    check(
        &with_defs("flow main:\n    $count = 1\n    log $c$0\n"),
        expect![[r#"
            Variable count
            Variable conversation
            Variable current_agent
            Variable turn_count"#]],
    );
    check(
        &with_defs("prompt p: \"\"\"Use ${re$0} now\"\"\"\n"),
        expect![[r#"
        Prompt review
        Variable current_agent"#]],
    );
    check(&with_defs("flow main:\n    log \"${fo$0}\"\n"), expect!["Variable found"]);
}

#[test]
fn keywords_valid_at_the_start_of_a_line() {
    check("ag$0", expect!["Keyword agent"]);
    check(
        "agent a:\n    instruction p\n    de$0\n",
        expect![[r#"
            Keyword description
            Keyword delegate
            Keyword produces"#]],
    );
    check(
        "flow main:\n    for $i in [1] do\n        r$0\n    end\n",
        expect![[r#"
            Keyword run
            Keyword return
            Keyword retry
            Keyword for
            Keyword parallel
            Keyword abort"#]],
    );
    check("agent a:\n    on input do\n        ma$0\n    end\n", expect!["Keyword mask"]);
    check(
        "schema S:\n    field: $0\n",
        expect![[r#"
        Type string
        Type int
        Type float
        Type bool
        Type list
        Schema S"#]],
    );
}

#[test]
fn executors_their_properties_and_backends() {
    let defs = "executor box:\n    backend: bubblewrap\nprompt p: \"\"\"x\"\"\"\n";
    check(&format!("{defs}agent a:\n    instruction p\n    executor $0"), expect!["Policy box"]);
    check(
        &format!("{defs}executor other:\n    max$0"),
        expect![[r#"
            Keyword max_steps -> max_steps: 
            Keyword max_errors -> max_errors: "#]],
    );
    check(
        &format!("{defs}executor other:\n    backend: $0"),
        expect![[r#"
            Keyword bubblewrap
            Keyword container
            Keyword unsandboxed"#]],
    );
    check("exec$0", expect!["Keyword executor"]);
}

#[test]
fn functions_of_tools_and_executors_after_a_dot() {
    let defs = "executor box:\n    backend: bubblewrap\ntool ro = builtin streetrace.fs_readonly\n";
    check(
        &with_defs("flow main:\n    $t = fs.$0\n"),
        expect![[r#"
        Function read_file
        Function create_directory
        Function write_file
        Function append_to_file
        Function list_directory
        Function find_in_files"#]],
    );
    check(&with_defs("flow main:\n    $t = fs.wr$0\n"), expect!["Function write_file"]);
    check(
        &format!("{defs}flow main:\n    $t = ro.$0\n"),
        expect![[r#"
        Function read_file
        Function list_directory
        Function find_in_files"#]],
    );
    check(&format!("{defs}flow main:\n    $r = box.$0\n"), expect!["Function run"]);
    check(&format!("{defs}agent a:\n    on output do\n        box.$0\n    end\n"), expect!["Function run"]);
    // A tool that gives no functions, a name that is no tool, a variable's field.
    check(&with_defs("flow main:\n    web.$0\n"), expect![[""]]);
    check(&with_defs("flow main:\n    nothing.$0\n"), expect![[""]]);
    check(&with_defs("flow main:\n    log $found.$0\n"), expect![[""]]);
}

#[test]
fn tool_function_items_carry_signature_and_doc() {
    let (analysis, fixture) = analysis(&with_defs("flow main:\n    $t = fs.append$0\n"));
    let items = analysis.completions(&position(&fixture), CompletionConfig::default()).unwrap();
    let [item] = &items[..] else { panic!("{items:?}") };
    expect![[r#"
        Some("fs.append_to_file(path, content)")
        ```streetrace
        fs.append_to_file(path, content)
        ```

        Append text to a file.

        - `path`: Path relative to the working directory.
        - `content`: The text to append.

        **gives** the message `wrote N bytes`"#]]
    .assert_eq(&format!("{:?}\n{}", item.detail, item.documentation.as_deref().unwrap_or("")));
}

#[test]
fn an_agent_is_not_offered_in_its_own_delegate_or_use_list() {
    check(
        &with_defs("agent a:\n    instruction review\n    delegate $0\n"),
        expect![[r#"
            Agent reviewer
            Agent fixer"#]],
    );
    check(&with_defs("agent fixer2:\n    use fi$0\n"), expect!["Agent fixer"]);
    // The agent being defined is left out, wherever it is in the file.
    check("agent first:\n    delegate $0\n\n# between\nagent second:\n    instruction p\n", expect!["Agent second"]);
    check(
        "agent first:\n    instruction p\nagent second:\n    # a comment\n\n    use $0, first\n",
        expect!["Agent first"],
    );
}

#[test]
fn labels_match_fuzzily_prefix_matches_first() {
    // find_in_files is offered last but is the one prefix match.
    check(
        &with_defs("flow main:\n    $t = fs.fi$0\n"),
        expect![[r#"
        Function find_in_files
        Function read_file
        Function write_file
        Function append_to_file"#]],
    );
    check(&with_defs("flow main:\n    $t = fs.xq$0\n"), expect![[""]]);
}

#[test]
fn parameters_of_tool_functions_as_object_keys() {
    check(
        &with_defs("flow main:\n    fs.write_file({$0\n"),
        expect![[r#"
        Parameter path -> path: 
        Parameter content -> content: "#]],
    );
    check(&with_defs("flow main:\n    fs.write_file({path: $p, c$0\n"), expect!["Parameter content -> content: "]);
    check(
        &with_defs("flow main:\n    $r = fs.find_in_files({ $0})\n"),
        expect![[r#"
        Parameter pattern -> pattern: 
        Parameter search_string -> search_string: "#]],
    );
    // Not a key position, an unknown function, a nested object.
    check(&with_defs("flow main:\n    fs.write_file({path: $0\n"), expect![[""]]);
    check(&with_defs("flow main:\n    fs.nope({$0\n"), expect![[""]]);
    check(&with_defs("flow main:\n    fs.write_file({path: [1, {$0\n"), expect![[""]]);
}

#[test]
fn names_from_other_workspace_files_come_with_their_import() {
    let workspace = r#"
        //- /app/main.sr
        streetrace v1
        import ./shared.sr
        prompt p: """x"""
        agent local_agent:
            instruction p
        flow main:
            $x = run agent $0
        //- /app/shared.sr
        agent shared_agent:
            instruction p
        //- /app/lib/helpers.sr
        agent helper:
            instruction q
        prompt q: """y"""
        //- /elsewhere/outside.sr
        agent outside:
            instruction q
    "#;
    check(
        workspace,
        expect![[r#"
            Agent shared_agent
            Agent local_agent
            Agent helper + "import ./lib/helpers.sr\n"@33..33"#]],
    );
    // A file imported already gives its names without an edit.
    check(
        &workspace
            .replace("$x = run agent $0", "$x = run agent help$0")
            .replace("import ./shared.sr", "import ./lib/helpers.sr"),
        expect!["Agent helper"],
    );
    check(
        "//- /app/main.sr\nagent a:\n    instruction q$0\n//- /app/lib.sr\nprompt quick: \"\"\"x\"\"\"\n",
        expect![[r#"Prompt quick + "import ./lib.sr\n"@0..0"#]],
    );
}

/// Every word of completion's keyword lists is one the lexer knows
/// (`sr_syntax::KEYWORDS`), but `executor`, our contextual extension: a word
/// renamed or dropped from the table fails here, naming the list.
#[test]
fn offered_keywords_are_keywords_of_the_table() {
    let lists: [(&str, &[&str]); 10] = [
        ("TOP_LEVEL", super::TOP_LEVEL),
        ("AGENT_BODY", super::AGENT_BODY),
        ("FLOW_BODY", super::FLOW_BODY),
        ("HANDLER_BODY", super::HANDLER_BODY),
        ("MODEL_BODY", super::MODEL_BODY),
        ("TOOL_BODY", super::TOOL_BODY),
        ("POLICY_BODY", super::POLICY_BODY),
        ("EXPRESSION_KEYWORDS", super::EXPRESSION_KEYWORDS),
        ("TYPES", super::TYPES),
        ("EVENTS", super::EVENTS),
    ];
    let mut unknown = Vec::new();
    for (list, words) in lists {
        for word in words {
            if *word != super::EXECUTOR && sr_syntax::SyntaxKind::from_keyword(word).is_none() {
                unknown.push(format!("{list}: {word}"));
            }
        }
    }
    assert!(unknown.is_empty(), "offered as keywords but not in sr_syntax::KEYWORDS: {unknown:?}");
}
