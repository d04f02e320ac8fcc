//! A file removed from the database takes its analysis with it: a language
//! server that opens and closes many unsaved documents keeps a flat footprint.
//! One test in its own binary, so no other test moves the resident set.

use std::path::PathBuf;

use sr_ide::{AnalysisHost, DiagnosticsMode};

fn resident_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS line");
    line.split_whitespace().nth(1).and_then(|kib| kib.parse::<u64>().ok()).expect("VmRSS in kB") / 1024
}

#[test]
fn removed_files_release_their_analysis() {
    let prompts = sr_testing::hostile::generator("prompts");
    let text = (prompts.make)(5_000);
    let mut host = AnalysisHost::new();
    let mut open_and_close = |i: usize| {
        let path = PathBuf::from(format!("/unsaved/doc{i}.sr"));
        host.set_file(&path, text.as_str());
        let analysis = host.analysis();
        assert!(!analysis.diagnostics(&path, DiagnosticsMode::Default).unwrap().is_empty());
        analysis.highlight(&path, None).unwrap();
        drop(analysis);
        host.remove_file(&path);
    };
    // One document's analysis (about 11 MiB) is what each close used to keep.
    open_and_close(0);
    let before = resident_mib();
    (1..=30).for_each(&mut open_and_close);
    let grown = resident_mib().saturating_sub(before);
    assert!(grown < 40, "30 closed documents kept {grown} MiB");
}
