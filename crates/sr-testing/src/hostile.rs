//! Generated hostile inputs of a chosen size: deep nesting of every expression
//! and block construct, long lines, NUL bytes, an unterminated string, quotes
//! with unclosed interpolations, a delegate ring, many prompts, mixed line endings. The hostile-input suite and
//! the scaling benchmark share them, so a name means the same text everywhere.

/// One generator: a name and a function from a size to a source text.
pub struct Generator {
    pub name: &'static str,
    /// What the size counts (levels, terms, bytes, agents, …).
    pub unit: &'static str,
    pub make: fn(usize) -> String,
}

/// Generators whose size is a nesting depth of an expression construct.
pub const EXPRESSIONS: &[Generator] = &[
    Generator { name: "list", unit: "levels", make: |n| assign(&wrap(n, "[", "1", "]")) },
    Generator { name: "paren", unit: "levels", make: |n| assign(&wrap(n, "(", "1", ")")) },
    Generator { name: "object", unit: "levels", make: |n| assign(&wrap(n, "{a: ", "1", "}")) },
    Generator { name: "call", unit: "levels", make: |n| assign(&wrap(n, "f(", "1", ")")) },
    Generator { name: "bare-call", unit: "levels", make: |n| call_statement(&format!("{}x", "f ".repeat(n))) },
    Generator { name: "minus", unit: "levels", make: |n| assign(&format!("{}1", "- ".repeat(n))) },
    Generator { name: "not", unit: "levels", make: |n| assign(&format!("{}true", "not ".repeat(n))) },
    Generator { name: "plus-chain", unit: "terms", make: |n| assign(&chain(n, "1", " + ")) },
    Generator { name: "times-chain", unit: "terms", make: |n| assign(&chain(n, "2", " * ")) },
    Generator { name: "or-chain", unit: "terms", make: |n| assign(&chain(n, "true", " or ")) },
    Generator { name: "and-chain", unit: "terms", make: |n| assign(&chain(n, "true", " and ")) },
    Generator { name: "property-chain", unit: "levels", make: |n| assign(&format!("$input{}", " .a".repeat(n))) },
    Generator { name: "filter", unit: "levels", make: |n| assign(&format!("{}[]", "filter [] where ".repeat(n))) },
    Generator {
        name: "list-type",
        unit: "levels",
        make: |n| format!("schema S:\n    a: {}string{}\n", "list[".repeat(n), "]".repeat(n)),
    },
    Generator {
        name: "optional-type",
        unit: "levels",
        make: |n| format!("schema S:\n    a: string{}\n", "?".repeat(n)),
    },
    Generator { name: "mixed", unit: "levels", make: |n| assign(&wrap(n / 4, "[(- {a: not f(", "1", ")})]")) },
];

/// Generators whose size is a nesting depth of blocks. Each level is indented
/// one space more than the one before, so `n` levels take about n²/2 bytes.
pub const BLOCKS: &[Generator] = &[
    Generator { name: "if", unit: "levels", make: |n| blocks(n, "if true:", None) },
    Generator { name: "for", unit: "levels", make: |n| blocks(n, "for $x in [] do", Some("end")) },
    Generator { name: "parallel", unit: "levels", make: |n| blocks(n, "parallel do", Some("end")) },
    Generator { name: "loop", unit: "levels", make: |n| blocks(n, "loop do", Some("end")) },
    Generator { name: "loop-max", unit: "levels", make: |n| blocks(n, "loop max 3 do", Some("end")) },
    Generator { name: "on-failure", unit: "levels", make: |n| blocks(n, "on failure:", None) },
    Generator { name: "mixed-blocks", unit: "levels", make: mixed_blocks },
];

/// Everything else: sizes in bytes or item counts.
pub const OTHERS: &[Generator] = &[
    Generator { name: "long-line", unit: "bytes", make: |n| assign(&format!("\"{}\"", "a".repeat(n))) },
    Generator { name: "unterminated-string", unit: "bytes", make: |n| assign(&format!("\"{}", "a".repeat(n))) },
    Generator {
        name: "unterminated-triple",
        unit: "bytes",
        make: |n| format!("prompt p: \"\"\"{}", "a\n".repeat(n / 2)),
    },
    // Each quote's `${` looks for a `}` that never comes: the interpolated
    // pattern would read to the end of the file from every line.
    Generator {
        name: "unclosed-interpolations",
        unit: "lines",
        make: |n| "flow main:\n".to_string() + &"    log \"${a\"\n".repeat(n),
    },
    Generator { name: "dotted-name", unit: "bytes", make: |n| assign(&format!("$input{}", ".a".repeat(n / 2))) },
    Generator { name: "nul-bytes", unit: "bytes", make: |n| format!("flow main:\n    log \"{}\"\n", "\0".repeat(n)) },
    Generator { name: "nul-lines", unit: "lines", make: |n| "\0 flow\0\n".repeat(n) },
    Generator { name: "delegate-ring", unit: "agents", make: delegate_ring },
    Generator { name: "nested-if-statements", unit: "levels", make: |n| blocks(n, "if $x > 1:", None) },
    Generator { name: "prompts", unit: "prompts", make: prompts },
    Generator { name: "flow-fan-out", unit: "flows", make: flow_fan_out },
    Generator { name: "mixed-line-endings", unit: "lines", make: mixed_line_endings },
    Generator { name: "many-errors", unit: "lines", make: |n| "flow main:\n".to_string() + &"    ) ] } ,\n".repeat(n) },
];

/// The generator called `name` in any of the lists.
pub fn generator(name: &str) -> &'static Generator {
    EXPRESSIONS
        .iter()
        .chain(BLOCKS)
        .chain(OTHERS)
        .find(|g| g.name == name)
        .unwrap_or_else(|| panic!("no generator {name}"))
}

fn wrap(n: usize, open: &str, inner: &str, close: &str) -> String {
    format!("{}{inner}{}", open.repeat(n), close.repeat(n))
}

fn chain(n: usize, term: &str, op: &str) -> String {
    vec![term; n.max(1)].join(op)
}

/// `flow main:` assigning `value` to `$x`, then a statement after it (which
/// must still be analysed).
fn assign(value: &str) -> String {
    format!("flow main:\n    $x = {value}\n    log \"after ${{x}}\"\n")
}

fn call_statement(call: &str) -> String {
    format!("flow main:\n    {call}\n    log \"after\"\n")
}

/// `n` nested blocks opened by `header` (closed by `close` when it has one),
/// inside `flow main`, with a `log` at the bottom and an agent after the flow.
fn blocks(n: usize, header: &str, close: Option<&str>) -> String {
    let mut out = String::from("flow main:\n    $x = 2\n");
    for level in 0..n {
        push_line(&mut out, level, header);
    }
    push_line(&mut out, n, "log \"deep\"");
    if let Some(close) = close {
        for level in (0..n).rev() {
            push_line(&mut out, level, close);
        }
    }
    out.push_str("\nagent after:\n    instruction missing_prompt\n");
    out
}

fn mixed_blocks(n: usize) -> String {
    let headers = [("if true:", None), ("for $x in [] do", Some("end")), ("parallel do", Some("end"))];
    let mut out = String::from("flow main:\n");
    for level in 0..n {
        push_line(&mut out, level, headers[level % 3].0);
    }
    push_line(&mut out, n, "log \"deep\"");
    for level in (0..n).rev() {
        if let Some(close) = headers[level % 3].1 {
            push_line(&mut out, level, close);
        }
    }
    out
}

/// A line at block level `level` of a flow body (one space per level).
fn push_line(out: &mut String, level: usize, line: &str) {
    out.push_str("    ");
    out.push_str(&" ".repeat(level));
    out.push_str(line);
    out.push('\n');
}

/// `n` agents, each delegating to the next and the last to the first.
pub fn delegate_ring(n: usize) -> String {
    let mut out = String::from("model m = \"x\"\nprompt p: \"\"\"hi\"\"\"\n");
    for i in 0..n {
        out.push_str(&format!("agent a{i}:\n    instruction p\n    delegate a{}\n", (i + 1) % n.max(1)));
    }
    out
}

fn prompts(n: usize) -> String {
    let mut out = String::from("model m = \"x\"\n");
    for i in 0..n {
        out.push_str(&format!("prompt p{i}: \"\"\"Prompt {i} says ${{input_prompt}}\"\"\"\n"));
    }
    out.push_str("agent main:\n    instruction p0\n");
    out
}

/// A `main` that runs `n` flows, keeping each result in a variable of its
/// own: every flow is run by one that assigns `n` variables.
fn flow_fan_out(n: usize) -> String {
    let mut out = String::from("flow main:\n");
    for i in 0..n {
        out.push_str(&format!("    $r{i} = run f{i}\n"));
    }
    for i in 0..n {
        out.push_str(&format!("flow f{i}:\n    $x{i} = {i}\n    return $x{i}\n"));
    }
    out
}

fn mixed_line_endings(n: usize) -> String {
    let endings = ["\n", "\r\n", "\r", "\n\r"];
    let mut out = String::from("flow main:");
    for i in 0..n {
        out.push_str(endings[i % endings.len()]);
        out.push_str(&format!("    $x{i} = {i}"));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<_> = EXPRESSIONS.iter().chain(BLOCKS).chain(OTHERS).map(|g| g.name).collect();
        names.sort();
        let count = names.len();
        names.dedup();
        assert_eq!(names.len(), count);
    }

    #[test]
    fn sizes_grow_the_text() {
        for g in EXPRESSIONS.iter().chain(BLOCKS).chain(OTHERS) {
            assert!((g.make)(40).len() > (g.make)(20).len(), "{}", g.name);
        }
    }
}
