//! Full semantic check speed: `cargo bench -p sr-hir`.
//! `cold`: a fresh database; `edit`: one character changed inside a flow body
//! of an already checked file.
#![allow(clippy::unwrap_used)]

use divan::Bencher;
use sr_hir::{RootDatabase, file_diagnostics};

fn main() {
    divan::main();
}

fn source(input: &str) -> String {
    match input {
        "v2-parallel.sr" => sr_testing::v2_parallel(),
        _ => sr_testing::generated_workload(10_000),
    }
}

#[divan::bench(args = ["v2-parallel.sr", "generated-10k"])]
fn cold(bencher: Bencher, input: &str) {
    let text = source(input);
    bencher.bench(|| {
        let mut db = RootDatabase::default();
        let file = db.set_file("/bench/main.sr", text.as_str());
        file_diagnostics(&db, file).len()
    });
}

#[divan::bench(args = ["v2-parallel.sr", "generated-10k"])]
fn edit(bencher: Bencher, input: &str) {
    let text = source(input);
    // A `log`/`return` line inside the last flow; flipping one character there
    // changes one body.
    let at = text.rfind("return").unwrap() + "return ".len();
    let variants = [text.clone(), format!("{}{}{}", &text[..at], "$", &text[at..])];
    let mut db = RootDatabase::default();
    let file = db.set_file("/bench/main.sr", text.as_str());
    let _ = file_diagnostics(&db, file);
    let mut i = 0;
    bencher.bench_local(|| {
        i += 1;
        db.set_file("/bench/main.sr", variants[i % 2].as_str());
        file_diagnostics(&db, file).len()
    });
}
