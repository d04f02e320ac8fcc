//! `sr`: the StreetRace toolchain's command line.
// Printing results is this binary's job (`sr lsp` and `sr dap` serve from their crates).
#![allow(clippy::print_stdout)]

mod check;
mod eval;
mod files;
mod graph;
mod load;
mod playground;
mod report;
mod run;
#[cfg(feature = "serve")]
mod serve;
mod sessions;
#[cfg(feature = "otlp")]
mod trace_args;
mod transcript;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(name = "sr", version, about = "Check, format, run and debug StreetRace (.sr) workloads")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check .sr files and report every problem found.
    Check(check::Args),
    /// Format .sr files (all under the current directory by default).
    Fmt {
        /// Files or directories.
        paths: Vec<PathBuf>,
        /// Only report files that would change (exit 1 if any).
        #[arg(long)]
        check: bool,
    },
    /// Print the agent/flow graph (delegate, use, run, call llm) as Mermaid or Graphviz.
    Graph(graph::Args),
    /// Run the language server on stdio.
    Lsp,
    /// Run the debug adapter (Debug Adapter Protocol) on stdio.
    Dap,
    /// Run a workload (a .sr file, a YAML agent, or a name).
    Run(Box<run::Args>),
    /// Run one agent or prompt of a workload with test inputs, without its flows.
    Try(Box<playground::Args>),
    /// Evaluate workloads on a dataset of cases; compare and merge results.
    Eval(Box<eval::Args>),
    /// Serve workloads over HTTP: sessions, runs, streamed events (see docs/serve.md).
    #[cfg(feature = "serve")]
    Serve(Box<serve::Args>),
    /// List and show stored sessions.
    Sessions {
        #[command(subcommand)]
        what: sessions::Command,
    },
    /// Print a shell completion script (`sr completions bash > /etc/bash_completion.d/sr`).
    Completions { shell: clap_complete::Shell },
    /// Print internal representations (debugging aid).
    Dump {
        #[command(subcommand)]
        what: Dump,
    },
}

#[derive(Subcommand)]
enum Dump {
    /// The lossless syntax tree of a file.
    Syntax { file: PathBuf },
}

/// When to color output.
#[derive(Clone, Copy, Debug, Default, ValueEnum)]
pub enum Color {
    #[default]
    Auto,
    Always,
    Never,
}

impl Color {
    /// Sets the choice for everything printed through `anstream`.
    pub fn apply(self) {
        let choice = match self {
            Color::Auto => return,
            Color::Always => anstream::ColorChoice::Always,
            Color::Never => anstream::ColorChoice::Never,
        };
        choice.write_global();
    }
}

/// Commands whose only output is a report end quietly when the reader of
/// their output goes away (`sr check | head`), as Unix tools do, instead of
/// panicking on the failed write. `run`, `eval`, `lsp` and `dap` keep SIGPIPE
/// ignored: they must finish storing what they did.
fn die_quietly_on_closed_pipe() {
    // SAFETY: restoring a signal's default disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    // Before any secret is read: the commands and code a run starts as this user
    // cannot read our environment or memory.
    if let Err(error) = sr_sandbox::harden_process() {
        eprintln!(
            "sr: warning: cannot make this process non-dumpable ({error}); the programs it runs as you can read its memory"
        );
    }
    let cli = Cli::parse();
    if !matches!(cli.command, Command::Run(_) | Command::Eval(_) | Command::Lsp | Command::Dap)
        && !is_serve(&cli.command)
    {
        die_quietly_on_closed_pipe();
    }
    match cli.command {
        Command::Check(args) => check::run(args),
        Command::Run(args) => run::run(*args),
        Command::Try(args) => playground::run(*args),
        Command::Eval(args) => eval::run(*args),
        Command::Graph(args) => graph::run(args),
        Command::Fmt { paths, check } => {
            let code = sr_fmt::run(&paths, check, &mut std::io::stdout(), &mut std::io::stderr());
            ExitCode::from(code as u8)
        }
        Command::Lsp => ExitCode::from(sr_lsp::run_stdio() as u8),
        Command::Dap => sr_dap::run_stdio(),
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::run(*args),
        Command::Sessions { what } => sessions::run(what),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut <Cli as clap::CommandFactory>::command(), "sr", &mut std::io::stdout());
            ExitCode::SUCCESS
        }
        Command::Dump { what: Dump::Syntax { file } } => match files::read(&file) {
            Ok(text) => {
                let parse = sr_syntax::parse(&text);
                // Streamed: the dump is the tokens times the tree's depth.
                let mut out = Stdout(std::io::BufWriter::new(std::io::stdout().lock()));
                if sr_syntax::write_debug_tree(&parse.syntax(), &mut out).is_err()
                    || std::io::Write::flush(&mut out.0).is_err()
                {
                    eprintln!("error: cannot write the dump");
                    return ExitCode::from(2);
                }
                drop(out);
                for error in parse.errors() {
                    println!("error {:?}: {} ({})", error.range, error.message(), error.help().unwrap_or_default());
                }
                ExitCode::SUCCESS
            }
            Err(message) => {
                eprintln!("error: {message}");
                ExitCode::from(2)
            }
        },
    }
}

/// `sr serve` keeps SIGPIPE ignored too: a client gone away must not end it.
fn is_serve(command: &Command) -> bool {
    #[cfg(feature = "serve")]
    if matches!(command, Command::Serve(_)) {
        return true;
    }
    let _ = command;
    false
}

/// `fmt::Write` over buffered standard output.
struct Stdout<'a>(std::io::BufWriter<std::io::StdoutLock<'a>>);

impl std::fmt::Write for Stdout<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        std::io::Write::write_all(&mut self.0, s.as_bytes()).map_err(|_| std::fmt::Error)
    }
}
