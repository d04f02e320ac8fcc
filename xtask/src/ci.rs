//! `cargo xtask ci`: everything CI checks, in the order that fails fastest.

use std::process::Command;

use crate::root;

pub fn run(_args: &[String]) -> Result<(), String> {
    step("cargo", &["fmt", "--all", "--", "--check"])?;
    step("cargo", &["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"])?;
    step("cargo", &["test", "--workspace"])?;
    Ok(())
}

fn step(program: &str, args: &[&str]) -> Result<(), String> {
    eprintln!("==> {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("`{program} {}` failed ({status})", args.join(" "))) }
}
