//! `cargo xtask ci`: everything CI checks, in the order that fails fastest.

use std::process::Command;

use crate::root;

/// What the tests need beyond Rust, Node.js and Python: each program, and
/// what it is for. `.ci/setup` installs them all.
const PROGRAMS: &[(&str, &str)] = &[
    ("bwrap", "the bubblewrap sandbox (bubblewrap)"),
    ("prlimit", "the sandbox's limits (util-linux)"),
    ("setpriv", "the hardening tests' unprivileged user (util-linux)"),
    ("podman", "the container backend's tests (podman, runc)"),
    ("python3", "the sandboxed interpreter"),
    ("nvim", "the Neovim plugin and language server tests (neovim)"),
    ("dot", "`sr graph --format dot` (graphviz)"),
    ("time", "peak memory in the hostile suites (GNU time, at /usr/bin/time)"),
    ("chromium", "the HTML reports and the studio in a browser (chromium)"),
    ("node", "the editor and MCP tests (Node.js)"),
    ("/usr/lib/postgresql/15/bin/pg_ctl", "sr serve's PostgreSQL tests (postgresql)"),
    ("npm", "the editor and MCP tests (npm)"),
];

/// Everything the tests need is here, or an error naming what is missing and
/// the one command that installs it.
fn prerequisites() -> Result<(), String> {
    let on_path = |program: &str| {
        std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
    };
    let mut missing: Vec<String> = PROGRAMS
        .iter()
        .filter(|(program, _)| {
            !(on_path(program)
                || *program == "time" && root_file("/usr/bin/time")
                || program.starts_with('/') && root_file(program))
        })
        .map(|(program, what)| format!("{program}: {what}"))
        .collect();
    let fuzz = Command::new("cargo").args(["fuzz", "--version"]).output().is_ok_and(|o| o.status.success());
    if !fuzz {
        missing.push("cargo fuzz: the fuzz targets (cargo-fuzz)".to_string());
    }
    let target = std::env::var("CARGO_TARGET_DIR").map_or_else(|_| root().join("target"), Into::into);
    let servers = std::env::var_os("SR_MCP_SERVERS").map_or_else(|| target.join("mcp-servers"), Into::into);
    if !servers.join("installed-package-lock.json").is_file() {
        missing.push(format!("the MCP test servers in {}", servers.display()));
    }
    let a2a = sr_testing::a2a_venv();
    if !a2a.join("bin/python").is_file() {
        missing.push(format!("the A2A Python SDK (a2a-sdk) in {}", a2a.display()));
    }
    let a2a_js = std::env::var_os("SR_A2A_JS").map_or_else(|| target.join("a2a-js"), Into::into);
    if !a2a_js.join("installed-package-lock.json").is_file() {
        missing.push(format!("the A2A JavaScript SDK (@a2a-js/sdk) in {}", a2a_js.display()));
    }
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the tests need what this machine lacks:\n  {}\ninstall it with `sudo bash .ci/setup` (Debian), then run `cargo xtask ci` again",
        missing.join("\n  ")
    ))
}

fn root_file(path: &str) -> bool {
    std::path::Path::new(path).is_file()
}

pub fn run(_args: &[String]) -> Result<(), String> {
    prerequisites()?;
    step("cargo", &["fmt", "--all", "--", "--check"], &[])?;
    step("cargo", &["cycles"], &[])?;
    // `Result<_, String>` outside tests may only go down (ARCHITECTURE.md, "Errors at seams").
    step("cargo", &["xtask", "string-errors", "--max", "80"], &[])?;
    step("cargo", &["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"], &[])?;
    // The installable artifacts, and the wheel installed with no index in a fresh venv.
    // Built before the tests: the hostile suites drive these binaries (what users
    // install), about nine times faster than the debug build.
    step("cargo", &["xtask", "dist", "--check"], &[])?;
    let target = std::env::var("CARGO_TARGET_DIR").map_or_else(|_| root().join("target"), Into::into);
    let shipped = target.join("dist").display().to_string();
    step("cargo", &["test", "--workspace"], &[("SR_HOSTILE_BIN_DIR", shipped)])?;
    // Generated workflows replayed, killed and resumed, forked and sent back in
    // time (the known escapes left out): the first 45 cases of a fixed seed, so
    // that a landing never rests on which workflows a clock picked (fresh seeds
    // are the longer job run on demand); 240 s at most.
    step(
        "cargo",
        &["xtask", "simulate", "--seed", "20261129", "--cases", "45", "--budget", "240", "--kills", "2"],
        &[],
    )?;
    // The workspace build has every default feature; `sr` without them (no MCP client,
    // container backend or OTLP export) also builds, and sr-mcp without its client reads
    // recordings.
    let no_defaults = ["clippy", "--no-default-features", "--all-targets", "-p", "sr-mcp", "-p", "sr-sandbox"];
    step("cargo", &[&no_defaults[..], &["--", "-D", "warnings"]].concat(), &[])?;
    step("cargo", &["clippy", "-p", "sr-cli", "--no-default-features", "--bins", "--", "-D", "warnings"], &[])?;
    step("cargo", &["test", "-p", "sr-mcp", "--no-default-features"], &[])?;
    // The editor-side tests drive the binaries `cargo test` just built.
    step("cargo", &["build", "-p", "sr-cli", "-p", "sr-lsp", "--bins"], &[])?;
    let bin = |name: &str| target.join("debug").join(name).display().to_string();
    step("bash", &["editors/vscode/test/dap/run.sh"], &[("SR_BIN", bin("sr"))])?;
    step("bash", &["editors/ci.sh"], &[("SR_BIN", bin("sr"))])?;
    // The studio: its committed build is what studio/ builds, and it works in a browser.
    step("cargo", &["xtask", "studio-check"], &[])?;
    step("cargo", &["xtask", "studio-e2e"], &[])?;
    // Each fuzz target for 15 s after a cold build of about two minutes:
    // three minutes in all on two cores.
    step("cargo", &["xtask", "fuzz", "--seconds", "15"], &[])?;
    Ok(())
}

pub fn step(program: &str, args: &[&str], env: &[(&str, String)]) -> Result<(), String> {
    eprintln!("==> {program} {}", args.join(" "));
    let started = std::time::Instant::now();
    let status = Command::new(program)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    eprintln!("<== {program} {} took {:.0} s", args.join(" "), started.elapsed().as_secs_f64());
    if status.success() { Ok(()) } else { Err(format!("`{program} {}` failed ({status})", args.join(" "))) }
}
