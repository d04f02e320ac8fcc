//! Lexing and parsing speed: `cargo bench -p sr-syntax`.

use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

#[divan::bench(args = ["v2-parallel.sr", "generated-10k"])]
fn lex(bencher: Bencher, input: &str) {
    let text = source(input);
    bencher.counter(divan::counter::BytesCount::of_str(&text)).bench(|| sr_syntax::lexer::tokenize(black_box(&text)));
}

#[divan::bench(args = ["v2-parallel.sr", "generated-10k"])]
fn parse(bencher: Bencher, input: &str) {
    let text = source(input);
    bencher.counter(divan::counter::BytesCount::of_str(&text)).bench(|| sr_syntax::parse(black_box(&text)));
}

fn source(input: &str) -> String {
    match input {
        "v2-parallel.sr" => sr_testing::v2_parallel(),
        _ => sr_testing::generated_workload(10_000),
    }
}
