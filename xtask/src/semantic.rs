//! Differential testing of semantic analysis against upstream's `check`:
//! random programs built from definitions, references (defined or not) and
//! scoping constructs; upstream's (code, line) pairs must equal ours in
//! `--compat upstream` mode.

use std::collections::BTreeSet;

use serde_json::json;
use sr_hir::{RootDatabase, file_diagnostics};
use sr_syntax::LineIndex;

use crate::differential::{Rng, ask_upstream, write_results};
use crate::flag;

const NAMES: &[&str] = &["alpha", "beta", "gamma", "main", "default", "helper", "x", "y", "result", "items"];

fn pick<'a>(rng: &mut Rng, from: &[&'a str]) -> &'a str {
    from[rng.below(from.len())]
}

fn program(rng: &mut Rng) -> String {
    let mut out = String::new();
    for _ in 0..rng.below(3) {
        out.push_str(&format!("model {} = anthropic/claude\n", pick(rng, &["main", "fast", "main"])));
    }
    for _ in 0..rng.below(2) {
        out.push_str(&format!("schema {}:\n    a: string\n    b: list[int]\n", pick(rng, &["S", "T", "S"])));
    }
    for _ in 0..rng.below(2) {
        out.push_str(&format!("tool {} = builtin streetrace.fs\n", pick(rng, &["fs", "web"])));
    }
    if rng.below(3) == 0 {
        out.push_str(&format!("retry {} = 3 times\n", pick(rng, &["r", "r", "q"])));
    }
    if rng.below(3) == 0 {
        out.push_str(&format!("timeout {} = 2 minutes\n", pick(rng, &["t", "t", "u"])));
    }
    for _ in 0..1 + rng.below(4) {
        let name = pick(rng, &["p", "q", "inst", "p"]);
        let mut modifiers = String::new();
        if rng.below(4) == 0 {
            modifiers.push_str(&format!(" using model \"{}\"", pick(rng, &["main", "fast", "other"])));
        }
        if rng.below(4) == 0 {
            modifiers.push_str(&format!(" expecting {}{}", pick(rng, &["S", "T", "U"]), pick(rng, &["", "[]"])));
        }
        if rng.below(5) == 0 {
            out.push_str(&format!("prompt {name}{modifiers}\n"));
        } else {
            let var = pick(rng, &["input_prompt", "x", "y", "p", "result", "goal", "nme"]);
            let lead = pick(rng, &["", "\n", "\n\n  "]);
            out.push_str(&format!(
                "prompt {name}{modifiers}: \"\"\"{lead}Hello ${{{var}}}\nand ${{{}}}\"\"\"\n",
                pick(rng, NAMES)
            ));
        }
    }
    for _ in 0..rng.below(4) {
        let named = rng.below(4) != 0;
        out.push_str(&if named {
            format!("agent {}:\n", pick(rng, &["alpha", "beta", "main", "alpha"]))
        } else {
            "agent:\n".into()
        });
        let mut any = false;
        if rng.below(5) != 0 {
            out.push_str(&format!("    instruction {}\n", pick(rng, &["p", "inst", "q", "zz"])));
            any = true;
        }
        if rng.below(3) == 0 {
            out.push_str(&format!("    tools {}\n", pick(rng, &["fs", "web", "fs, web", "nope"])));
            any = true;
        }
        if rng.below(3) == 0 {
            out.push_str(&format!("    delegate {}\n", pick(rng, &["alpha", "beta", "default", "gamma"])));
            any = true;
        }
        if rng.below(3) == 0 {
            out.push_str(&format!("    use {}\n", pick(rng, &["alpha", "beta", "default", "gamma"])));
            any = true;
        }
        if rng.below(4) == 0 {
            out.push_str(&format!("    prompt {}\n", pick(rng, &["p", "input_prompt", "inp", "result"])));
            any = true;
        }
        if rng.below(4) == 0 {
            out.push_str(&format!("    produces {}\n", pick(rng, &["result", "x"])));
            any = true;
        }
        if rng.below(5) == 0 {
            out.push_str(&format!("    retry {}\n", pick(rng, &["r", "nope"])));
            any = true;
        }
        if rng.below(5) == 0 {
            out.push_str(&format!("    timeout {}\n", pick(rng, &["t", "nope"])));
            any = true;
        }
        if !any {
            out.push_str("    description \"d\"\n");
        }
    }
    if rng.below(3) == 0 {
        out.push_str(&format!("on start do\n    ${} = 1\nend\n", pick(rng, &["x", "goal"])));
    }
    for _ in 0..1 + rng.below(3) {
        out.push_str(&format!("flow {}:\n", pick(rng, &["main", "helper", "main", "other"])));
        for _ in 0..1 + rng.below(6) {
            out.push_str(&statement(rng, 1));
        }
    }
    if rng.below(3) == 0 {
        out.push_str(&format!(
            "on input do\n    ${} = ${}\nend\n",
            pick(rng, &["x", "y"]),
            pick(rng, &["x", "y", "goal"])
        ));
    }
    out
}

fn var(rng: &mut Rng) -> String {
    let name = pick(rng, &["x", "y", "result", "items", "goal", "input_prompt", "z"]);
    match rng.below(4) {
        0 => name.to_string(),
        1 => format!("${name}.a"),
        _ => format!("${name}"),
    }
}

fn statement(rng: &mut Rng, depth: usize) -> String {
    let pad = "    ".repeat(depth);
    let target = pick(rng, &["x", "y", "result", "z"]);
    let kind = if depth >= 3 { rng.below(8) } else { rng.below(13) };
    match kind {
        0 | 1 => format!("{pad}${target} = {} + 1\n", var(rng)),
        2 => format!("{pad}${target} = run agent {} with {}\n", pick(rng, &["alpha", "beta", "nope"]), var(rng)),
        3 => format!("{pad}run agent {}\n", pick(rng, &["alpha", "beta", "default"])),
        4 => format!("{pad}${target} = call llm {} with {}\n", pick(rng, &["p", "q", "nope"]), var(rng)),
        5 => format!("{pad}return {}\n", var(rng)),
        6 => format!("{pad}push {} to ${}\n", var(rng), pick(rng, &["x", "list1"])),
        7 => format!(
            "{pad}$r = run {}, on escalate {}\n",
            pick(rng, &["helper", "main", "nope"]),
            pick(rng, &["continue", "abort"])
        ),
        8 => format!("{pad}if {} > 1:\n{}", var(rng), statement(rng, depth + 1)),
        9 => format!("{pad}for $item in {} do\n{}{pad}end\n", var(rng), statement(rng, depth + 1)),
        10 => format!("{pad}loop max 2 do\n{}{pad}end\n", statement(rng, depth + 1)),
        11 => format!("{pad}parallel do\n{}{pad}end\n", statement(rng, depth + 1)),
        _ => format!("{pad}match {}\n{pad}    when \"a\" -> log x\n{pad}end\n", var(rng)),
    }
}

pub fn run(args: &[String]) -> Result<(), String> {
    let count: usize = flag(args, "--cases").map_or(Ok(500), str::parse).map_err(|e| format!("--cases: {e}"))?;
    let seed: u64 = flag(args, "--seed").map_or(Ok(1), str::parse).map_err(|e| format!("--seed: {e}"))?;
    let mut rng = Rng::new(seed);
    let cases: Vec<(String, String)> =
        (0..count).map(|i| (format!("semantic-{seed}-{i}"), program(&mut rng))).collect();

    let verdicts = ask_upstream("check_oracle.py", &cases)?;

    let mut db = RootDatabase::default();
    let mut mismatches = Vec::new();
    let mut saved = Vec::new();
    let mut agreed = 0;
    for ((id, source), verdict) in cases.iter().zip(&verdicts) {
        let Some(diagnostics) = verdict["diagnostics"].as_array() else { continue };
        let upstream: BTreeSet<(String, i64)> = diagnostics
            .iter()
            .map(|d| (d["code"].as_str().unwrap_or("").to_string(), d["line"].as_i64().unwrap_or(0)))
            .collect();
        let ours = compat_pairs(&mut db, source);
        if ours == upstream {
            agreed += 1;
            if saved.len() < 300 {
                saved.push(json!({"id": id, "source": source, "diagnostics": diagnostics}));
            }
        } else {
            mismatches.push(json!({"id": id, "source": source, "upstream": diagnostics, "ours": format!("{ours:?}")}));
        }
    }
    let report = write_results("semantic-mismatches.jsonl", &mismatches, flag(args, "--save"), &saved)?;
    println!("{} programs: {agreed} agree, {} disagree (see {})", cases.len(), mismatches.len(), report.display());
    Ok(())
}

/// Our diagnostics in upstream mode as (code, line) pairs.
pub fn compat_pairs(db: &mut RootDatabase, source: &str) -> BTreeSet<(String, i64)> {
    let file = db.set_file("/differential/case.sr", source);
    let index = LineIndex::new(source);
    let diagnostics: Vec<_> = file_diagnostics(db, file).iter().filter(|d| d.in_mode(true)).cloned().collect();
    let line = |d: &sr_hir::Diagnostic| match d.upstream_position {
        Some((line, _)) => line as i64,
        None => index.line_col(d.range.start()).line as i64 + 1,
    };
    if let Some(syntax) = diagnostics.iter().find(|d| d.code().is_syntax()) {
        return BTreeSet::from([(syntax.code().to_string(), line(syntax))]);
    }
    diagnostics.iter().map(|d| (d.code().to_string(), line(d))).collect()
}
