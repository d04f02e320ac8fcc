//! `sr-lsp`: the StreetRace language server over stdio (also `sr lsp`).
//! `--stdio`, the transport clients often pass, is the only one and may be omitted.
// `--version` and `--help` answer on stdout before anything is served.
#![allow(clippy::print_stdout)]

fn main() {
    let code = match std::env::args().nth(1).as_deref() {
        None | Some("--stdio") => sr_lsp::run_stdio(),
        Some("--version" | "-V") => {
            println!("sr-lsp {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Some("--help" | "-h") => {
            println!("sr-lsp {}: the StreetRace language server (LSP over stdio)", env!("CARGO_PKG_VERSION"));
            println!("usage: sr-lsp [--stdio | --version | --help]");
            0
        }
        Some(other) => {
            eprintln!("sr-lsp: unknown argument '{other}'; usage: sr-lsp [--stdio | --version | --help]");
            2
        }
    };
    std::process::exit(code);
}
