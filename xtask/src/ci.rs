//! `cargo xtask ci`: everything CI checks, in the order that fails fastest.

use std::process::Command;

use crate::root;

pub fn run(_args: &[String]) -> Result<(), String> {
    step("cargo", &["fmt", "--all", "--", "--check"], &[])?;
    step("cargo", &["xtask", "cycles"], &[])?;
    step("cargo", &["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"], &[])?;
    step("cargo", &["test", "--workspace"], &[])?;
    // The workspace build has every default feature; `sr` without them (no MCP client,
    // container backend or OTLP export) also builds, and sr-mcp without its client reads
    // recordings.
    let no_defaults = ["clippy", "--no-default-features", "--all-targets", "-p", "sr-mcp", "-p", "sr-sandbox"];
    step("cargo", &[&no_defaults[..], &["--", "-D", "warnings"]].concat(), &[])?;
    step("cargo", &["clippy", "-p", "sr-cli", "--no-default-features", "--bins", "--", "-D", "warnings"], &[])?;
    step("cargo", &["test", "-p", "sr-mcp", "--no-default-features"], &[])?;
    // The editor-side tests drive the binaries `cargo test` just built.
    step("cargo", &["build", "-p", "sr-cli", "-p", "sr-lsp", "--bins"], &[])?;
    let target = std::env::var("CARGO_TARGET_DIR").map_or_else(|_| root().join("target"), Into::into);
    let bin = |name: &str| target.join("debug").join(name).display().to_string();
    step("bash", &["editors/vscode/test/dap/run.sh"], &[("SR_BIN", bin("sr"))])?;
    step("bash", &["editors/ci.sh"], &[("SR_BIN", bin("sr"))])?;
    // Each fuzz target for 15 s after a cold build of about two minutes:
    // three minutes in all on two cores.
    step("cargo", &["xtask", "fuzz", "--seconds", "15"], &[])?;
    // The installable artifacts, and the wheel installed with no index in a fresh venv.
    step("cargo", &["xtask", "dist", "--check"], &[])?;
    Ok(())
}

pub fn step(program: &str, args: &[&str], env: &[(&str, String)]) -> Result<(), String> {
    eprintln!("==> {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("`{program} {}` failed ({status})", args.join(" "))) }
}
