//! Resident memory for a 50k-line workspace (5 generated files of 10k lines,
//! every file checked): `cargo run --release -p sr-lsp --example memory`.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::path::PathBuf;

use sr_ide::{AnalysisHost, DiagnosticsMode};

fn status(field: &str) -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status.lines().find(|l| l.starts_with(field)).map(|l| l[field.len()..].trim().to_string()).unwrap_or_default()
}

fn main() {
    let before = status("VmRSS:");
    let mut host = AnalysisHost::new();
    let mut lines = 0;
    let paths: Vec<PathBuf> = (0..5).map(|i| PathBuf::from(format!("/bench/workload{i}.sr"))).collect();
    for path in &paths {
        let text = sr_testing::generated_workload(10_700);
        lines += text.lines().count();
        host.set_file(path, text);
    }
    let analysis = host.analysis();
    let diagnostics: usize =
        paths.iter().map(|p| analysis.diagnostics(p, DiagnosticsMode::Default).unwrap().len()).sum();
    let symbols = analysis.workspace_symbols("").unwrap().len();
    println!(
        "{lines} lines in {} files, {diagnostics} diagnostics, {symbols} symbols: RSS {} (before loading {before}), peak {}",
        paths.len(),
        status("VmRSS:"),
        status("VmHWM:")
    );
}
