//! `sr-lsp`: the StreetRace language server over stdio.

fn main() {
    std::process::exit(sr_lsp::run_stdio());
}
