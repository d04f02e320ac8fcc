//! `cargo xtask bench`: every benchmark behind the README's figures, in one run.

use crate::ci::step;

/// Divan benches per crate, then the language server as a client meets it
/// (`lsp_bench`: the spawned binary over stdio, its latency, memory and 10
/// MB-file figures), then the evaluation harness's cost per case (`sr-eval`, docs/eval.md),
/// then the scaling check of `sr check` on hostile inputs, then `sr serve`
/// under load (`serve_bench`).
pub fn run(args: &[String]) -> Result<(), String> {
    if args.first().map(String::as_str) == Some("lsp") {
        return crate::lsp_bench::run(&args[1..]);
    }
    let crates = ["sr-syntax", "sr-hir", "sr-ide", "sr-runtime", "sr-sandbox"];
    let only: Vec<&str> = args.iter().map(String::as_str).collect();
    let wanted = |name: &str| only.is_empty() || only.contains(&name);
    for name in crates.into_iter().filter(|c| wanted(c)) {
        step("cargo", &["bench", "-p", name], &[])?;
    }
    if wanted("sr-lsp") {
        crate::lsp_bench::run(&[])?;
    }
    if wanted("sr-eval") {
        step("cargo", &["run", "--release", "-q", "-p", "sr-eval", "--example", "overhead", "1000"], &[])?;
    }
    if wanted("scaling") {
        crate::scaling::run()?;
    }
    if wanted("serve") {
        crate::serve_bench::run()?;
    }
    Ok(())
}
