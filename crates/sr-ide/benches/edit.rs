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

/// Edit → diagnostics (and the files of the edited file's programs, which is
/// what the language server asks first) of one of 5 open files of 10k lines,
/// beside: nothing (`alone`), or 20 more files of 10k lines and the 9.2 MB
/// file, read from disk (`closed`, as the server loads closed files) or held
/// as editor texts (`open`: each edit walks what was computed from them).
#[divan::bench(args = ["alone", "closed", "open"])]
fn edit_beside_other_files(bencher: Bencher, beside: &str) {
    let text = sr_testing::generated_workload(10_700);
    let at = text.rfind("return").unwrap() + "return ".len();
    let variants = [text.clone(), format!("{}${}", &text[..at], &text[at..])];
    let mut host = AnalysisHost::new();
    let open: Vec<String> = (0..5).map(|i| format!("/bench/open{i}.sr")).collect();
    for path in &open {
        host.set_file(Path::new(path), text.as_str());
    }
    let big = sr_testing::generated_workload((10 << 20) / 26);
    let others = (0..20).map(|i| (format!("/bench/other{i}.sr"), text.as_str()));
    for (path, text) in others.chain([("/bench/big.sr".to_string(), big.as_str())]) {
        match beside {
            "closed" => host.set_disk_file(Path::new(&path), text),
            "open" => host.set_file(Path::new(&path), text),
            _ => break,
        }
    }
    let analysis = host.analysis();
    for path in &open {
        analysis.program_files(Path::new(path)).unwrap();
        analysis.diagnostics(Path::new(path), DiagnosticsMode::Default).unwrap();
    }
    drop(analysis);
    let path = Path::new(&open[0]);
    let mut i = 0;
    bencher.bench_local(|| {
        i += 1;
        host.set_file(path, variants[i % 2].as_str());
        let analysis = host.analysis();
        analysis.program_files(path).unwrap().len()
            + analysis.diagnostics(path, DiagnosticsMode::Default).unwrap().len()
    });
}
