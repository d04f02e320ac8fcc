//! Differential testing of the parser against upstream's Lark/Earley parser.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use sr_syntax::{Code, LineIndex, SyntaxKind, lexer};

use crate::{flag, root};

pub use sr_testing::random::Rng;

const VOCABULARY: &[&str] = &[
    "x",
    "$x",
    "$x.y",
    "a.b",
    "\"s\"",
    "'s'",
    "\"${v}\"",
    "1",
    "2.5",
    "a/b",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    ",",
    "=",
    "==",
    "!=",
    "->",
    "<",
    ">",
    "+",
    "-",
    "*",
    "/",
    "%",
    "~",
    "?",
    ".",
    "$",
    "\n",
    "\n    ",
    "\n        ",
    "\"\"\"body\"\"\"",
    "v1",
    "./x.sr",
    "#c\n",
];

/// Upstream's verdicts on `cases` (id, source), one JSON value per case in
/// order, from `script` in `xtask/upstream/` run by the Python in
/// `$STREETRACE_PYTHON` (default `/opt/upstream/bin/python`).
pub fn ask_upstream(script: &str, cases: &[(String, String)]) -> Result<Vec<Value>, String> {
    let python = std::env::var("STREETRACE_PYTHON").unwrap_or_else(|_| "/opt/upstream/bin/python".to_string());
    let mut child = Command::new(&python)
        .arg(root().join("xtask/upstream").join(script))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start upstream oracle {python}: {e}"))?;
    let mut stdin = child.stdin.take().unwrap();
    let input: String =
        cases.iter().map(|(id, source)| json!({"id": id, "source": source}).to_string() + "\n").collect();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    writer.join().unwrap().map_err(|e| e.to_string())?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).map_err(|e| format!("the oracle answered {l:?}: {e}")))
        .collect()
}

/// Writes the disagreements to `target/differential/<report>` (returned) and
/// appends the saved agreements to `save`, when given.
pub fn write_results(
    report: &str,
    mismatches: &[Value],
    save: Option<&str>,
    saved: &[Value],
) -> Result<PathBuf, String> {
    let out = root().join("target/differential");
    std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
    let report = out.join(report);
    std::fs::write(&report, mismatches.iter().map(|m| m.to_string() + "\n").collect::<String>())
        .map_err(|e| e.to_string())?;
    if let Some(path) = save {
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(|e| e.to_string())?;
        for entry in saved {
            writeln!(file, "{entry}").map_err(|e| e.to_string())?;
        }
    }
    Ok(report)
}

pub fn seeds() -> Vec<String> {
    let corpus = root().join("fixtures/upstream");
    let mut seeds: Vec<String> = std::fs::read_to_string(corpus.join("snippets.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["source"].as_str().unwrap().to_string())
        .collect();
    let files: Value =
        serde_json::from_str(&std::fs::read_to_string(corpus.join("files-check.json")).unwrap()).unwrap();
    for file in files.as_array().unwrap() {
        let text = std::fs::read_to_string(corpus.join("files").join(file["path"].as_str().unwrap())).unwrap();
        // Large files make Earley slow; keep the small ones.
        if text.lines().count() <= 120 {
            seeds.push(text);
        }
    }
    seeds
}

fn mutate(source: &str, rng: &mut Rng) -> String {
    let tokens: Vec<_> = lexer::tokenize(source).into_iter().filter(|t| t.kind != SyntaxKind::WHITESPACE).collect();
    if tokens.is_empty() {
        return source.to_string();
    }
    let pick = tokens[rng.below(tokens.len())];
    let (start, end) = (usize::from(pick.range.start()), usize::from(pick.range.end()));
    let word = |rng: &mut Rng| {
        if rng.below(2) == 0 {
            VOCABULARY[rng.below(VOCABULARY.len())].to_string()
        } else {
            sr_syntax::KEYWORDS[rng.below(sr_syntax::KEYWORDS.len())].0.to_string()
        }
    };
    match rng.below(7) {
        0 => format!("{}{}", &source[..start], &source[end..]),
        1 => format!("{}{} {}", &source[..end], " ", &source[start..]),
        2 => format!("{}{}{}", &source[..start], word(rng), &source[end..]),
        3 => format!("{}{} {}", &source[..start], word(rng), &source[start..]),
        4 => {
            // Re-indent the line holding the token.
            let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
            let indent = ["", "  ", "    ", "      ", "        ", "\t"][rng.below(6)];
            let rest = source[line_start..].trim_start_matches([' ', '\t']);
            format!("{}{}{}", &source[..line_start], indent, rest)
        }
        5 => {
            // Delete the line holding the token.
            let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
            let line_end = source[start..].find('\n').map_or(source.len(), |i| start + i + 1);
            format!("{}{}", &source[..line_start], &source[line_end..])
        }
        _ => {
            let other = tokens[rng.below(tokens.len())];
            let (a, b) = (usize::from(other.range.start()), usize::from(other.range.end()));
            if a >= end {
                format!(
                    "{}{}{}{}{}",
                    &source[..start],
                    &source[a..b],
                    &source[end..a],
                    &source[start..end],
                    &source[b..]
                )
            } else {
                source.to_string()
            }
        }
    }
}

struct Ours {
    ok: bool,
    line: i64,
    eof: bool,
    e0008: bool,
    message: String,
}

fn ours(source: &str) -> Ours {
    let parse = sr_syntax::parse(source);
    match parse.errors().first() {
        None => Ours { ok: true, line: 0, eof: false, e0008: false, message: String::new() },
        Some(e) => {
            let index = LineIndex::new(source);
            Ours {
                ok: false,
                line: index.line_col(e.range.start()).line as i64 + 1,
                eof: e.message() == "unexpected end of input",
                e0008: e.code() == Code::E0008,
                message: format!("{}: {}", e.message(), e.help().unwrap_or_default()),
            }
        }
    }
}

/// A random expression over atoms, operators and soft keywords, where the
/// grammar's ambiguities live.
fn expression(rng: &mut Rng, depth: usize) -> String {
    const ATOMS: &[&str] = &[
        "x",
        "$x",
        "$x.y",
        "a.b",
        "f",
        "\"s\"",
        "'t'",
        "\"${v}\"",
        "1",
        "2.5",
        "true",
        "null",
        "result",
        "items",
        "do",
        "with",
        "to",
        "as",
        "if",
        "where",
        "not",
        "filter",
        "process",
        "initial user prompt",
        "len(x)",
        ".score",
        "history",
        "using",
        "end",
        "match",
        "run",
        "in",
        "model",
        "agent",
    ];
    if depth == 0 || rng.below(3) == 0 {
        return ATOMS[rng.below(ATOMS.len())].to_string();
    }
    let a = expression(rng, depth - 1);
    let b = expression(rng, depth - 1);
    match rng.below(12) {
        0 => format!("{a} + {b}"),
        1 => format!("{a} {b}"),
        2 => format!("not {a}"),
        3 => format!("-{a}"),
        4 => format!("({a})"),
        5 => format!("[{a}, {b}]"),
        6 => format!("{{k: {a}, if: {b}}}"),
        7 => format!("{a} == {b}"),
        8 => format!("{a} and {b} or {a}"),
        9 => format!("filter {a} where {b}"),
        10 => format!("f({a}, {b})"),
        _ => format!("{a} contains {b} * 2"),
    }
}

fn statement(rng: &mut Rng) -> String {
    let e = |rng: &mut Rng| expression(rng, 3);
    match rng.below(14) {
        0 => format!("$r = {}", e(rng)),
        1 => format!("r = run agent a with {} history $h", e(rng)),
        2 => format!("run f with {}, on escalate return {}", e(rng), e(rng)),
        3 => format!("$r = call llm p with {} using model \"m\"", e(rng)),
        4 => format!("push {} as user to $h", e(rng)),
        5 => format!("log {}", e(rng)),
        6 => format!("for item in {} do\n        log item\n    end", e(rng)),
        7 => format!("if {}:\n        return {}", e(rng), e(rng)),
        8 => format!("if {}: log x", e(rng)),
        9 => format!("return {}", e(rng)),
        10 => e(rng),
        11 => format!("match {}\n        when \"a\" -> log x\n        else -> abort\n    end", e(rng)),
        12 => format!("retry step {}", e(rng)),
        _ => format!("notify {}", e(rng)),
    }
}

pub fn run(args: &[String]) -> Result<(), String> {
    let count: usize = flag(args, "--cases").map_or(Ok(2000), str::parse).map_err(|e| format!("--cases: {e}"))?;
    let seed: u64 = flag(args, "--seed").map_or(Ok(1), str::parse).map_err(|e| format!("--seed: {e}"))?;
    let seeds = seeds();
    let mut rng = Rng::new(seed);
    let mut cases = Vec::with_capacity(count);
    for i in 0..count {
        if i % 2 == 0 {
            let mut source = seeds[rng.below(seeds.len())].clone();
            for _ in 0..1 + rng.below(2) {
                source = mutate(&source, &mut rng);
            }
            cases.push((format!("mutant-{seed}-{i}"), source));
        } else {
            let body = statement(&mut rng);
            let handler = rng.below(4) == 0;
            let source =
                if handler { format!("on input do\n    {body}\nend\n") } else { format!("flow main:\n    {body}\n") };
            cases.push((format!("generated-{seed}-{i}"), source));
        }
    }

    let verdicts = ask_upstream("oracle.py", &cases)?;
    if verdicts.len() != cases.len() {
        return Err(format!("the oracle answered {} of {} cases", verdicts.len(), cases.len()));
    }

    let mut mismatches = Vec::new();
    let (mut agree_ok, mut agree_err) = (0, 0);
    let mut saved = Vec::new();
    for ((id, source), verdict) in cases.iter().zip(&verdicts) {
        let code = verdict["code"].as_str().unwrap_or("");
        if matches!(code, "timeout" | "crash") {
            continue;
        }
        let upstream_ok = verdict["ok"].as_bool().unwrap();
        let upstream_line = verdict["line"].as_i64().unwrap_or(0);
        let ours = ours(source);
        let agree = match (upstream_ok, ours.ok) {
            (true, true) => {
                agree_ok += 1;
                true
            }
            (false, false) => {
                let same_line =
                    ours.e0008 || code == "E0008" || upstream_line == ours.line || (upstream_line == -1 && ours.eof);
                if same_line {
                    agree_err += 1;
                }
                same_line
            }
            _ => false,
        };
        let entry = json!({
            "id": id,
            "source": source,
            "upstream": verdict,
            "ours": if ours.ok { json!({"ok": true}) } else { json!({"ok": false, "line": ours.line, "message": ours.message}) },
        });
        if !agree {
            mismatches.push(entry);
        } else if saved.len() < 300 {
            // Agreements become regression cases for the conformance test.
            saved.push(json!({"id": id, "source": source, "upstream": verdict}));
        }
    }
    let report = write_results("mismatches.jsonl", &mismatches, flag(args, "--save"), &saved)?;
    println!(
        "{} cases: {agree_ok} accepted by both, {agree_err} rejected by both on the same line, {} disagreements (see {})",
        cases.len(),
        mismatches.len(),
        report.display()
    );
    Ok(())
}
