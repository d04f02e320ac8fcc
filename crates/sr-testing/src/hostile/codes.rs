//! One generator per diagnostic code, named by the code (`E0001`, `SR104`):
//! at size `n` its file reports the code `n` times, each occurrence a new
//! name, and most of them against `n` definitions a suggestion could be
//! drawn from. A test in sr-hir (`tests/scaling.rs`) fails when a code of
//! `Code::ALL` has no generator here or its generator does not produce it.
//!
//! Exceptions the test knows: `SR105` (no entry point) is reported once per
//! program, so its file has `n` agents and one occurrence.

use super::{BESIDE, Generator, repeat};

/// The codes reported once per program, whatever the size.
pub const ONCE: &[&str] = &["SR105"];

const PROMPT: &str = "model m = openai/gpt-4o\nprompt p: \"\"\"P.\"\"\"\n";

pub const CODES: &[Generator] = &[
    // Undefined delegates: no agent shares the first letters, so each help
    // lists the defined agents.
    Generator::new("E0001", "agents", |n| {
        repeat(n, PROMPT, "agent a{i}:\n    instruction p\n    delegate zz{i}\n", "flow main:\n    run agent a0\n")
    }),
    // `run agent`, `run` and `call llm` naming nothing, beside `n` of each.
    Generator::new("E0001-run", "statements", |n| {
        let defs = repeat(n, PROMPT, "agent a{i}:\n    instruction p\nflow f{i}:\n    log {i}\n", "flow main:\n");
        defs + &repeat(n, "", "    run agent zz{i}\n    run qq{i}\n    $c{i} = call llm xx{i}\n", "")
    }),
    Generator::new("E0002", "statements", |n| repeat(n, "flow main:\n", "    $y{i} = $w{i}\n    $w{i} = 1\n", "")),
    Generator::new("E0003", "flows", |n| repeat(n, "flow f:\n    log 0\n", "flow f:\n    log {i}\n", "")),
    Generator::new("E0007", "flows", |n| repeat(n, "", "flow f{i}:\n    log )\n", "")),
    Generator::new("E0008", "flows", |n| repeat(n, "", "flow f{i}:\n        log 1\n      log 2\n", "")),
    Generator::new("E0010", "agents", |n| repeat(n, PROMPT, "agent a{i}:\n    description \"d\"\n", "")),
    Generator::new("E0011", "agents", |n| repeat(n, PROMPT, "agent a{i}:\n    instruction p\n    delegate a{i}\n", "")),
    Generator::new("E0012", "statements", |n| {
        let head = format!("{PROMPT}agent a:\n    instruction p\nflow main:\n");
        repeat(n, &head, "    run agent a with {i}, on escalate continue\n", "")
    }),
    Generator::new("E0013", "prompts", |n| repeat(n, PROMPT, "prompt q{i} using model \"m\"\n", "")),
    Generator::new("E0014", "prompts", |n| {
        let unit = "prompt q{i} using model \"m\"\nprompt q{i} using model \"n\": \"\"\"Q.\"\"\"\n";
        repeat(n, "model m = openai/gpt-4o\nmodel n = openai/gpt-4o-mini\n", unit, "")
    }),
    // The red team's case: each prompt interpolates a variable nothing defines.
    Generator::new("E0015", "prompts", |n| {
        repeat(n, "model m = openai/gpt-4o\n", "prompt p{i}: \"\"\"text ${x{i}}\"\"\"\n", "")
    }),
    Generator::new("E0016", "agents", |n| {
        let unit = "prompt p{i}: \"\"\"Answer ${input_prompt}.\"\"\"\nagent a{i}:\n    instruction p{i}\n";
        repeat(n, "model m = openai/gpt-4o\n", unit, "")
    }),
    Generator::new("W0002", "agents", |n| {
        let head = format!("{PROMPT}agent h:\n    instruction p\n");
        repeat(n, &head, "agent a{i}:\n    instruction p\n    delegate h\n    use h\n", "")
    }),
    Generator::new("SR100", "flows", |n| repeat(n, "flow main:\n    log 0\n", "flow f{i}:\n    log {i}\n", "")),
    Generator::new("SR101", "statements", |n| repeat(n, "flow main:\n", "    log $x{i}\n", "")),
    // Instructions naming no prompt, beside `n` prompts none of which shares
    // their first letters (the help lists them).
    Generator::new("SR102", "agents", |n| {
        repeat(n, PROMPT, "prompt p{i}: \"\"\"P.\"\"\"\nagent a{i}:\n    instruction qq{i}\n", "")
    }),
    Generator::new("SR103", "statements", |n| repeat(n, "flow main:\n", "    return {i}\n    log {i}\n", "")),
    // Unknown fields of a schema of `n` fields (the help lists them).
    Generator::new("SR104", "fields", |n| {
        let schema = repeat(n, "schema S:\n", "    f{i}: string\n", "");
        let head =
            format!("{schema}{PROMPT}prompt one expecting S: \"\"\"One.\"\"\"\nflow main:\n    $s = call llm one\n");
        repeat(n, &head, "    log $s.g{i}\n", "")
    }),
    Generator::new("SR105", "agents", |n| repeat(n, PROMPT, "agent a{i}:\n    instruction p\n", "")),
    Generator::new("SR106", "fields", |n| repeat(n, "schema S:\n    a: string\n", "    a: string\n", "")),
    Generator::new("SR107", "imports", |n| repeat(n, "", "import ./missing{i}.sr\n", "")),
    Generator {
        beside: Some(|n| repeat(n, "", "import ./lib.sr\n", "")),
        ..Generator::new("SR108", "imports", |_| format!("import ./{BESIDE}\nflow main:\n    log 1\n"))
    },
    Generator::new("SR109", "statements", |n| {
        let head = format!("{PROMPT}agent:\n    instruction p\non input do\n");
        repeat(n, &head, "    mask secret{i}\n", "end\n")
    }),
    Generator::new("SR110", "executors", |n| repeat(n, "", "executor e{i}:\n    backend: docker\n", "")),
    Generator::new("SR111", "flows", |n| {
        let deep = format!("{}1{}", "(".repeat(257), ")".repeat(257));
        repeat(n, "", &format!("flow f{{i}}:\n    $x = {deep}\n"), "")
    }),
    Generator::new("SR112", "statements", |n| repeat(n, "flow main:\n", "    $x{i} = nofn{i}(1)\n", "")),
    Generator::new("SR113", "statements", |n| repeat(n, "flow main:\n", "    $x{i} = len(1, 2)\n", "")),
    Generator::new("SR114", "statements", |n| repeat(n, "flow main:\n", "    break\n", "")),
    Generator::new("SR115", "flows", |n| repeat(n, "", "flow f{i}:\n    run f{i}\n", "")),
    Generator {
        beside: Some(|n| repeat(n, "", "tool t{i} = mcp \"stdio:./server{i}\"\n", "")),
        ..Generator::new("SR116", "tools", |_| format!("import ./{BESIDE}\nflow main:\n    log 1\n"))
    },
    // Calls of tools nothing declares, beside `n` declared tools (the
    // message lists them).
    Generator::new("SR117", "calls", |n| {
        let tools = repeat(n, "", "tool t{i} = builtin streetrace.fs\n", "flow main:\n");
        repeat(n, &tools, "    $x{i} = nosuch{i}.read_file(\"a\")\n", "")
    }),
    Generator::new("SR117-function", "calls", |n| {
        repeat(n, "tool fs = builtin streetrace.fs\nflow main:\n", "    $x{i} = fs.nofn{i}(\"a\")\n", "")
    }),
    Generator::new("SR118", "calls", |n| {
        repeat(n, "tool fs = builtin streetrace.fs\nflow main:\n", "    $x{i} = fs.read_file()\n", "")
    }),
    // Fields of unknown types beside `n` schemas (the help may list them).
    Generator::new("SR119", "fields", |n| repeat(n, "", "schema S{i}:\n    f: Nope{i}\n    g: stringy\n", "")),
];
