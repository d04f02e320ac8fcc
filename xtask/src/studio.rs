//! The studio (`studio/`, embedded by `crates/sr-studio`):
//! `cargo xtask studio-check` type-checks the app and rebuilds it into a scratch
//! directory, failing when the build differs from the committed `crates/sr-studio/assets`
//! (`--write` replaces them instead); `cargo xtask studio-e2e [--screenshots DIR]` runs
//! the Playwright tests in Debian's Chromium against the fixture server, which serves the
//! embedded app as `sr serve` does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::{flag, root};

pub fn check(args: &[String]) -> Result<(), String> {
    let studio = root().join("studio");
    let assets = root().join("crates/sr-studio/assets");
    npm_ci(&studio)?;
    step(Command::new("npm").args(["run", "--silent", "check"]).current_dir(&studio))?;
    if args.iter().any(|a| a == "--write") {
        step(Command::new("npm").args(["run", "--silent", "build"]).current_dir(&studio))?;
        return Ok(());
    }
    let scratch = crate::target_dir().join("studio-check");
    step(Command::new("npm").args(["run", "--silent", "build"]).env("SR_STUDIO_OUT", &scratch).current_dir(&studio))?;
    let (built, committed) = (files(&scratch)?, files(&assets)?);
    let mut problems = Vec::new();
    for (name, bytes) in &built {
        match committed.get(name) {
            None => problems.push(format!("{name}: built, not committed")),
            Some(old) if old != bytes => problems.push(format!("{name}: differs from the build")),
            Some(_) => {}
        }
    }
    problems.extend(
        committed
            .keys()
            .filter(|name| !built.contains_key(*name))
            .map(|name| format!("{name}: committed, no longer built")),
    );
    if problems.is_empty() {
        eprintln!("studio-check: the {} committed assets are what studio/ builds", built.len());
        return Ok(());
    }
    Err(format!(
        "crates/sr-studio/assets is not what studio/ builds:\n  {}\nrun `cargo xtask studio-check --write` and commit the result",
        problems.join("\n  ")
    ))
}

pub fn e2e(args: &[String]) -> Result<(), String> {
    let started = Instant::now();
    let studio = root().join("studio");
    if !Path::new(&chromium()).is_file() {
        return Err(format!(
            "{} is missing: the studio's browser tests need it (apt-get install chromium)",
            chromium()
        ));
    }
    npm_ci(&studio)?;
    step(Command::new("cargo").args(["build", "-p", "sr-studio", "--example", "fixture_server"]).current_dir(root()))?;
    let server = crate::target_dir().join("debug/examples/fixture_server");
    let results = crate::target_dir().join("studio-e2e");
    let mut playwright = Command::new("npx");
    playwright
        .args(["--no-install", "playwright", "test"])
        .env("SR_STUDIO_SERVER", &server)
        .env("SR_STUDIO_RESULTS", &results)
        .env("CHROMIUM", chromium())
        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
        .current_dir(&studio);
    if let Some(dir) = flag(args, "--screenshots") {
        playwright.env("SR_STUDIO_SCREENSHOTS", std::path::absolute(dir).map_err(|e| format!("{dir}: {e}"))?);
    }
    step(&mut playwright)?;
    let figure = std::fs::read_to_string(results.join("first-render.json")).unwrap_or_default();
    eprintln!(
        "studio-e2e passed in {:.0} s; first render of a 10,000-event run: {figure}",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn chromium() -> String {
    std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_string())
}

fn npm_ci(studio: &Path) -> Result<(), String> {
    step(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
            .current_dir(studio),
    )
}

/// Every file under `dir`, by its path relative to `dir`.
fn files(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut out = BTreeMap::new();
    let mut pending: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at).map_err(|e| format!("{}: {e}", at.display()))? {
            let path = entry.map_err(|e| format!("{}: {e}", at.display()))?.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let name = path.strip_prefix(dir).unwrap_or(&path).display().to_string();
                out.insert(name, std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?);
            }
        }
    }
    Ok(out)
}

fn step(command: &mut Command) -> Result<(), String> {
    let status = command.status().map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("{command:?} failed ({status})")) }
}
