//! Generated hostile inputs of a chosen size: deep nesting of every expression
//! and block construct, long lines, NUL bytes, an unterminated string, quotes
//! with unclosed interpolations, a delegate ring, many prompts, mixed line
//! endings; and, generated from the language's own tables, a file with `n`
//! occurrences of every diagnostic code ([`codes`]) and `n` repetitions of
//! every construct of the syntax tree ([`constructs`]). The hostile-input
//! suites and the scaling benchmark share them, so a name means the same text
//! everywhere.

pub mod codes;
pub mod constructs;

/// The name a generated text is written under: a generator's imports of
/// [`BESIDE`] are relative to it.
pub const FILE: &str = "case.sr";

/// The name of a generator's second file, written beside [`FILE`].
pub const BESIDE: &str = "lib.sr";

/// One generator: a name and a function from a size to a source text.
pub struct Generator {
    pub name: &'static str,
    /// What the size counts (levels, terms, bytes, agents, …).
    pub unit: &'static str,
    pub make: fn(usize) -> String,
    /// The text of [`BESIDE`], for the codes about imports (the generated
    /// text imports it).
    pub beside: Option<fn(usize) -> String>,
}

impl Generator {
    pub const fn new(name: &'static str, unit: &'static str, make: fn(usize) -> String) -> Generator {
        Generator { name, unit, make, beside: None }
    }

    /// The files of size `n`: [`FILE`], then [`BESIDE`] when the generator has one.
    pub fn files(&self, n: usize) -> Vec<(&'static str, String)> {
        let mut files = vec![(FILE, (self.make)(n))];
        files.extend(self.beside.map(|beside| (BESIDE, beside(n))));
        files
    }
}

/// Generators whose size is a nesting depth of an expression construct.
pub const EXPRESSIONS: &[Generator] = &[
    Generator::new("list", "levels", |n| assign(&wrap(n, "[", "1", "]"))),
    Generator::new("paren", "levels", |n| assign(&wrap(n, "(", "1", ")"))),
    Generator::new("object", "levels", |n| assign(&wrap(n, "{a: ", "1", "}"))),
    Generator::new("call", "levels", |n| assign(&wrap(n, "f(", "1", ")"))),
    Generator::new("bare-call", "levels", |n| call_statement(&format!("{}x", "f ".repeat(n)))),
    Generator::new("minus", "levels", |n| assign(&format!("{}1", "- ".repeat(n)))),
    Generator::new("not", "levels", |n| assign(&format!("{}true", "not ".repeat(n)))),
    Generator::new("plus-chain", "terms", |n| assign(&chain(n, "1", " + "))),
    Generator::new("times-chain", "terms", |n| assign(&chain(n, "2", " * "))),
    Generator::new("or-chain", "terms", |n| assign(&chain(n, "true", " or "))),
    Generator::new("and-chain", "terms", |n| assign(&chain(n, "true", " and "))),
    Generator::new("property-chain", "levels", |n| assign(&format!("$input{}", " .a".repeat(n)))),
    Generator::new("filter", "levels", |n| assign(&format!("{}[]", "filter [] where ".repeat(n)))),
    Generator::new("list-type", "levels", |n| {
        format!("schema S:\n    a: {}string{}\n", "list[".repeat(n), "]".repeat(n))
    }),
    Generator::new("optional-type", "levels", |n| format!("schema S:\n    a: string{}\n", "?".repeat(n))),
    Generator::new("mixed", "levels", |n| assign(&wrap(n / 4, "[(- {a: not f(", "1", ")})]"))),
];

/// Generators whose size is a nesting depth of blocks. Each level is indented
/// one space more than the one before, so `n` levels take about n²/2 bytes.
pub const BLOCKS: &[Generator] = &[
    Generator::new("if", "levels", |n| blocks(n, "if true:", None)),
    Generator::new("for", "levels", |n| blocks(n, "for $x in [] do", Some("end"))),
    Generator::new("parallel", "levels", |n| blocks(n, "parallel do", Some("end"))),
    Generator::new("loop", "levels", |n| blocks(n, "loop do", Some("end"))),
    Generator::new("loop-max", "levels", |n| blocks(n, "loop max 3 do", Some("end"))),
    Generator::new("on-failure", "levels", |n| blocks(n, "on failure:", None)),
    Generator::new("mixed-blocks", "levels", mixed_blocks),
];

/// Everything else: sizes in bytes or item counts.
pub const OTHERS: &[Generator] = &[
    Generator::new("long-line", "bytes", |n| assign(&format!("\"{}\"", "a".repeat(n)))),
    Generator::new("unterminated-string", "bytes", |n| assign(&format!("\"{}", "a".repeat(n)))),
    Generator::new("unterminated-triple", "bytes", |n| format!("prompt p: \"\"\"{}", "a\n".repeat(n / 2))),
    // Each quote's `${` looks for a `}` that never comes: the interpolated
    // pattern would read to the end of the file from every line.
    Generator::new("unclosed-interpolations", "lines", |n| "flow main:\n".to_string() + &"    log \"${a\"\n".repeat(n)),
    Generator::new("dotted-name", "bytes", |n| assign(&format!("$input{}", ".a".repeat(n / 2)))),
    Generator::new("nul-bytes", "bytes", |n| format!("flow main:\n    log \"{}\"\n", "\0".repeat(n))),
    Generator::new("nul-lines", "lines", |n| "\0 flow\0\n".repeat(n)),
    // Every byte an invalid character, all on one line.
    Generator::new("nul-line", "bytes", |n| format!("{}\n", "\0".repeat(n))),
    Generator::new("delegate-ring", "agents", delegate_ring),
    Generator::new("nested-if-statements", "levels", |n| blocks(n, "if $x > 1:", None)),
    Generator::new("prompts", "prompts", prompts),
    Generator::new("flow-fan-out", "flows", flow_fan_out),
    Generator::new("mixed-line-endings", "lines", mixed_line_endings),
    Generator::new("many-errors", "lines", |n| "flow main:\n".to_string() + &"    ) ] } ,\n".repeat(n)),
];

/// Every generator: the hand-written lists, then one per diagnostic code and
/// one per construct.
pub fn all() -> impl Iterator<Item = &'static Generator> {
    EXPRESSIONS.iter().chain(BLOCKS).chain(OTHERS).chain(codes::CODES).chain(constructs::CONSTRUCTS)
}

/// The generator called `name` in any of the lists.
pub fn generator(name: &str) -> &'static Generator {
    all().find(|g| g.name == name).unwrap_or_else(|| panic!("no generator {name}"))
}

/// `head`, then `unit` `n` times with `{i}` replaced by 0, 1, …, then `tail`.
fn repeat(n: usize, head: &str, unit: &str, tail: &str) -> String {
    let mut out = String::with_capacity(head.len() + n * (unit.len() + 4) + tail.len());
    out.push_str(head);
    for i in 0..n {
        out.push_str(&unit.replace("{i}", &i.to_string()));
    }
    out.push_str(tail);
    out
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
        let mut names: Vec<_> = all().map(|g| g.name).collect();
        names.sort();
        let count = names.len();
        names.dedup();
        assert_eq!(names.len(), count);
    }

    #[test]
    fn sizes_grow_the_text() {
        for g in all() {
            let size = |n| g.files(n).iter().map(|(_, text)| text.len()).sum::<usize>();
            assert!(size(40) > size(20), "{}", g.name);
        }
    }
}
