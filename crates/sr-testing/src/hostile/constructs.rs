//! One generator per node kind of the syntax tree, named by the kind
//! (`ASSIGN_STMT`, `AGENT_DEF`, `BIN_EXPR`): at size `n` its file holds `n`
//! such nodes, items as `n` definitions, statements as `n` statements of one
//! flow, expressions as `n` assignments. A test in sr-syntax
//! (`tests/constructs.rs`) parses each and fails when a node kind has no
//! generator here (but `SOURCE_FILE` and `VERSION_DECL`, which a file has
//! once) or its generator makes fewer than `n` of its nodes.

use super::{Generator, repeat};

/// The node kinds a file holds at most once.
pub const ONCE: &[&str] = &["SOURCE_FILE", "VERSION_DECL"];

const FLOW: &str = "model m = openai/gpt-4o\nprompt p: \"\"\"P.\"\"\"\nagent a:\n    instruction p\nflow main:\n";
const HANDLER: &str = "model m = openai/gpt-4o\nprompt p: \"\"\"P.\"\"\"\nagent:\n    instruction p\non input do\n";

/// `n` copies of `unit` (`{i}` numbered) as top-level definitions.
macro_rules! items {
    ($kind:literal, $unit:literal) => {
        Generator::new($kind, "items", |n| repeat(n, "", $unit, ""))
    };
    ($kind:literal, $head:literal, $unit:literal) => {
        Generator::new($kind, "items", |n| repeat(n, $head, $unit, ""))
    };
}

/// `n` copies of `unit` as statements of `flow main` (after `head`'s
/// statements, if any), in a program with a prompt `p`, an agent `a` and a
/// model `m`.
macro_rules! statements {
    ($kind:literal, $unit:literal) => {
        Generator::new($kind, "statements", |n| repeat(n, FLOW, $unit, ""))
    };
    ($kind:literal, $head:literal, $unit:literal) => {
        Generator::new($kind, "statements", |n| repeat(n, &format!("{FLOW}{}", $head), $unit, ""))
    };
}

/// `n` copies of `unit` as statements of an `on input` handler.
macro_rules! handler {
    ($kind:literal, $unit:literal) => {
        Generator::new($kind, "statements", |n| repeat(n, HANDLER, $unit, "end\n"))
    };
}

/// `n` assignments of `value` (`{i}` numbered) in `flow main`.
macro_rules! expressions {
    ($kind:literal, $value:literal) => {
        Generator::new($kind, "expressions", |n| repeat(n, FLOW, concat!("    $x{i} = ", $value, "\n"), ""))
    };
}

pub const CONSTRUCTS: &[Generator] = &[
    // Definitions and their parts.
    items!("ERROR", "flow f{i}:\n    log )\n"),
    items!("NAME_DEF", "flow f{i}:\n    log {i}\n"),
    items!("IMPORT", "import ./lib{i}.sr\n"),
    items!("MODEL_DEF", "model m{i} = openai/gpt-4o\n"),
    items!("MODEL_PROPERTY", "model m{i}:\n    provider: openai\n    temperature: 0.5\n"),
    items!("SCHEMA_DEF", "schema S{i}:\n    a: string\n"),
    items!("SCHEMA_FIELD", "schema S{i}:\n    a: int\n"),
    items!("NAMED_TYPE", "schema S{i}:\n    a: bool\n"),
    items!("LIST_TYPE", "schema S{i}:\n    a: list[string]\n"),
    items!("OPTIONAL_TYPE", "schema S{i}:\n    a: string?\n"),
    items!("TOOL_DEF", "tool t{i} = builtin streetrace.fs\n"),
    items!("TOOL_OPTION", "tool t{i} = mcp \"http://localhost/mcp\" with auth bearer \"k{i}\"\n"),
    items!("TOOL_PROPERTY", "tool t{i}:\n    type: mcp\n    url: \"http://localhost/mcp\"\n"),
    items!("HEADER_ENTRY", "tool t{i}:\n    headers:\n        X: \"{i}\"\n"),
    items!("RETRY_POLICY_DEF", "retry r{i} = 3 times, exponential backoff\n"),
    items!("TIMEOUT_POLICY_DEF", "timeout t{i} = {i} minutes\n"),
    items!("TIME_SPAN", "timeout t{i} = 5 seconds\n"),
    items!("POLICY_DEF", "policy p{i}:\n    strategy: summarize\n"),
    items!("POLICY_PROPERTY", "policy p{i}:\n    use model: \"m\"\n"),
    items!("PRESERVE_LIST", "policy p{i}:\n    preserve: [last 3 messages]\n"),
    items!("PRESERVE_ITEM", "policy p{i}:\n    preserve: [$goal{i}]\n"),
    items!("EXECUTOR_DEF", "executor e{i}:\n    backend: bubblewrap\n"),
    items!("EXECUTOR_PROPERTY", "executor e{i}:\n    timeout: {i}\n"),
    items!("EVENT_HANDLER", "on input do\n    log {i}\nend\n"),
    items!("FLOW_DEF", "flow f{i}:\n    return {i}\n"),
    items!("BLOCK", "flow f{i}:\n    log 1\n"),
    items!("AGENT_DEF", "prompt p: \"\"\"P.\"\"\"\n", "agent a{i}:\n    instruction p\n"),
    items!("AGENT_PROPERTY", "prompt p: \"\"\"P.\"\"\"\n", "agent a{i}:\n    instruction p\n    description \"d\"\n"),
    items!("NAME_LIST", "prompt p: \"\"\"P.\"\"\"\n", "agent a{i}:\n    instruction p\n    use a0\n"),
    items!("NAME_REF", "prompt p: \"\"\"P.\"\"\"\n", "agent a{i}:\n    instruction p\n"),
    items!("PROMPT_DEF", "prompt p{i}: \"\"\"Say {i}.\"\"\"\n"),
    items!("PROMPT_BODY", "prompt p{i}: \"\"\"Say ${p0}.\"\"\"\n"),
    items!("PROMPT_MODIFIER", "model m = openai/gpt-4o\n", "prompt p{i} using model \"m\": \"\"\"P.\"\"\"\n"),
    items!("ESCALATION_CLAUSE", "prompt p{i}: \"\"\"P.\"\"\"\n    escalate if ~ \"DONE\"\n"),
    // Statements.
    statements!("ASSIGN_STMT", "    $x{i} = {i}\n"),
    statements!("RUN_STMT", "    $r{i} = run agent a\n"),
    statements!("CALL_STMT", "    $c{i} = call llm p\n"),
    statements!("RETURN_STMT", "    return {i}\n"),
    statements!("FOR_STMT", "    for $x in [{i}] do\n        log $x\n    end\n"),
    statements!("PARALLEL_STMT", "    parallel do\n        log {i}\n    end\n"),
    statements!("LOOP_STMT", "    loop max 2 do\n        log {i}\n    end\n"),
    statements!("MATCH_STMT", "    match $input_prompt\n        when \"a\" -> log {i}\n    end\n"),
    statements!(
        "MATCH_ARM",
        "    match $input_prompt\n        when \"a\" -> log {i}\n        else -> log 0\n    end\n"
    ),
    statements!("IF_STMT", "    if $input_prompt:\n        log {i}\n"),
    statements!("PUSH_STMT", "    $q = []\n", "    push {i} to $q\n"),
    statements!("ESCALATE_STMT", "    escalate to human \"{i}\"\n"),
    statements!("LOG_STMT", "    log {i}\n"),
    statements!("NOTIFY_STMT", "    notify \"{i}\"\n"),
    statements!("EXPR_STMT", "    len([{i}])\n"),
    statements!("FAILURE_BLOCK", "    run agent a\n    on failure:\n        log {i}\n"),
    statements!("CONTINUE_STMT", "    loop do\n        continue\n    end\n"),
    statements!("BREAK_STMT", "    loop do\n        break\n    end\n"),
    statements!("ABORT_STMT", "    if $input_prompt:\n        abort\n"),
    statements!("RETRY_STEP_STMT", "    retry step {i}\n"),
    statements!("WITH_CLAUSE", "    run agent a with {i}\n"),
    statements!("HISTORY_CLAUSE", "    $h = []\n", "    run agent a history $h\n"),
    statements!("USING_CLAUSE", "    $c{i} = call llm p using model \"m\"\n"),
    statements!("ON_ESCALATE", "    $r{i} = run agent a, on escalate return {i}\n"),
    handler!("MASK_STMT", "    mask pii\n"),
    handler!("BLOCK_STMT", "    block if jailbreak\n"),
    handler!("WARN_STMT", "    warn if $message contains \"{i}\"\n"),
    handler!("RETRY_WITH_STMT", "    retry with \"again {i}\" if $message contains \"x\"\n"),
    // Expressions.
    expressions!("VAR", "$input_prompt"),
    expressions!("PROPERTY_EXPR", "$input_prompt .a{i}"),
    expressions!("IMPLICIT_PROPERTY", "filter [] where .a > {i}"),
    expressions!("FILTER_EXPR", "filter [{i}] where true"),
    expressions!("LITERAL", "\"{i}\""),
    expressions!("INITIAL_PROMPT", "initial user prompt"),
    expressions!("LIST_EXPR", "[{i}]"),
    expressions!("OBJECT_EXPR", "{a: {i}}"),
    expressions!("OBJECT_ENTRY", "{b{i}: 1}"),
    expressions!("PAREN_EXPR", "({i})"),
    expressions!("PREFIX_EXPR", "-{i}"),
    expressions!("BIN_EXPR", "{i} * 2"),
    expressions!("CALL_EXPR", "len([{i}])"),
    expressions!("ARG_LIST", "split(\"a\", \"{i}\")"),
];
