//! Edit → diagnostics on a generated 10k-line file: `cargo bench -p sr-ide`.
//! One character toggles inside the last flow; each sample applies the edit
//! and computes the file's diagnostics on a fresh snapshot (no debounce).
#![allow(clippy::unwrap_used)]

use std::path::Path;

use divan::Bencher;
use sr_ide::{AnalysisHost, DiagnosticsMode};

fn main() {
    divan::main();
}

#[divan::bench]
fn edit_to_diagnostics(bencher: Bencher) {
    let text = sr_testing::generated_workload(10_700);
    let at = text.rfind("return").unwrap() + "return ".len();
    let variants = [text.clone(), format!("{}${}", &text[..at], &text[at..])];
    let path = Path::new("/bench/main.sr");
    let mut host = AnalysisHost::new();
    host.set_file(path, text.as_str());
    let _ = host.analysis().diagnostics(path, DiagnosticsMode::Default).unwrap();
    let mut i = 0;
    bencher.bench_local(|| {
        i += 1;
        host.set_file(path, variants[i % 2].as_str());
        host.analysis().diagnostics(path, DiagnosticsMode::Default).unwrap().len()
    });
}

#[divan::bench]
fn completion_after_edit(bencher: Bencher) {
    let text = sr_testing::generated_workload(10_700);
    let at = text.rfind("run group").unwrap() + "run ".len();
    let variants = [text.clone(), format!("{} {}", &text[..at], &text[at..])];
    let path = Path::new("/bench/main.sr");
    let mut host = AnalysisHost::new();
    host.set_file(path, text.as_str());
    let mut i = 0;
    bencher.bench_local(|| {
        i += 1;
        host.set_file(path, variants[i % 2].as_str());
        let position = sr_ide::FilePosition { path: path.to_path_buf(), offset: (at as u32).into() };
        host.analysis().completions(&position, sr_ide::CompletionConfig::default()).unwrap().len()
    });
}
