//! `cargo xtask dist`: the installable artifacts, built in the `dist` profile
//! and written to `target/dist/` (cargo's own output directory for that
//! profile): a tarball, a Python wheel and the linux-x64 `.vsix`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{root, target_dir};

mod licenses;
mod wheel;

const BINARIES: [&str; 3] = ["sr", "sr-lsp", "sr-dap"];
/// Size budgets in MiB: `sr` carries the runtime, `sr serve` and its studio (the
/// distribution issue's 25 MiB target predates the server; 27 MiB predates the
/// server's own accept loop, the reply limits, wrapped-secret redaction, the protected
/// paths' guard, the store's migrations and coding agents' journaled steps; 28 MiB
/// predates `sr try`, A2A push notifications and file parts), `sr-lsp` only the
/// compiler and IDE layers.
const BUDGET_MIB: [(&str, f64); 2] = [("sr", 29.0), ("sr-lsp", 10.0)];
const TRIPLE: &str = "x86_64-unknown-linux-gnu";

pub fn run(args: &[String]) -> Result<(), String> {
    let root = root();
    let out = target_dir().join("dist");
    if !args.iter().any(|a| a == "--no-build") {
        let started = std::time::Instant::now();
        crate::ci::step(
            "cargo",
            &["build", "--locked", "--profile", "dist", "-p", "sr-cli", "-p", "sr-lsp", "-p", "sr-dap", "--bins"],
            &[],
        )?;
        eprintln!("dist build: {:.0} s", started.elapsed().as_secs_f64());
    }
    let mut over = Vec::new();
    for name in BINARIES {
        let size = std::fs::metadata(out.join(name)).map_err(|e| format!("{name}: {e}"))?.len();
        let mib = size as f64 / (1024.0 * 1024.0);
        eprintln!("{name}: {mib:.1} MiB");
        if let Some((_, budget)) = BUDGET_MIB.iter().find(|(budget_name, _)| *budget_name == name)
            && mib > *budget
        {
            over.push(format!("{name} is {mib:.1} MiB, over its {budget} MiB budget"));
        }
    }
    if !over.is_empty() {
        return Err(over.join("\n"));
    }
    let version = crate::workspace_version(&root)?;
    let staging = out.join("staging");
    let _ = std::fs::remove_dir_all(&staging);
    let notices = licenses::third_party(&root)?;
    let tarball = tarball(&root, &out, &staging, &version, &notices)?;
    eprintln!("wrote {}", tarball.display());
    let wheel = wheel::build(&out, &version, &BINARIES, &notices)?;
    eprintln!("wrote {}", wheel.display());
    let vsix = crate::e2e_vscode::package(&root.join("editors/vscode"), &out.join("sr"), &out)?;
    eprintln!("wrote {}", vsix.display());
    let _ = std::fs::remove_dir_all(&staging);
    if args.iter().any(|a| a == "--check") {
        check_wheel(&root, &wheel)?;
    }
    Ok(())
}

/// What CI asks of the wheel: it installs with no index into a fresh venv and the
/// `sr` it puts on the venv's PATH runs and checks an example.
fn check_wheel(root: &Path, wheel: &Path) -> Result<(), String> {
    let venv = target_dir().join("dist/check-venv");
    let _ = std::fs::remove_dir_all(&venv);
    let venv_arg = venv.display().to_string();
    crate::ci::step("python3", &["-m", "venv", &venv_arg], &[])?;
    let pip = venv.join("bin/pip").display().to_string();
    crate::ci::step(&pip, &["install", "--quiet", "--no-index", &wheel.display().to_string()], &[])?;
    let sr = venv.join("bin/sr");
    let version = Command::new(&sr).arg("--version").output().map_err(|e| format!("{}: {e}", sr.display()))?;
    let printed = String::from_utf8_lossy(&version.stdout);
    if !version.status.success() || !printed.starts_with("sr ") {
        return Err(format!("the wheel's sr --version failed ({}): {printed}", version.status));
    }
    let example = root.join("examples/review/review.sr").display().to_string();
    crate::ci::step(&sr.display().to_string(), &["check", &example], &[])?;
    eprintln!("wheel: installed in a fresh venv; {}", printed.trim());
    let _ = std::fs::remove_dir_all(&venv);
    Ok(())
}

/// `streetrace-VERSION-TRIPLE.tar.gz`: the binaries, shell completions, the
/// licence and the third-party notices under one top-level directory.
fn tarball(root: &Path, out: &Path, staging: &Path, version: &str, notices: &str) -> Result<PathBuf, String> {
    let name = format!("streetrace-{version}-{TRIPLE}");
    let top = staging.join(&name);
    let io = |what: &Path, e: std::io::Error| format!("{}: {e}", what.display());
    for dir in ["bin", "completions"] {
        std::fs::create_dir_all(top.join(dir)).map_err(|e| io(&top.join(dir), e))?;
    }
    for binary in BINARIES {
        std::fs::copy(out.join(binary), top.join("bin").join(binary)).map_err(|e| io(&out.join(binary), e))?;
    }
    for (shell, file) in [("bash", "sr.bash"), ("zsh", "_sr"), ("fish", "sr.fish")] {
        let script = Command::new(out.join("sr"))
            .args(["completions", shell])
            .output()
            .map_err(|e| format!("sr completions {shell}: {e}"))?;
        if !script.status.success() {
            return Err(format!("sr completions {shell} failed ({})", script.status));
        }
        std::fs::write(top.join("completions").join(file), script.stdout).map_err(|e| io(Path::new(file), e))?;
    }
    let licence = root.join("LICENSE");
    std::fs::copy(&licence, top.join("LICENSE")).map_err(|e| io(&licence, e))?;
    std::fs::write(top.join("THIRD_PARTY_LICENSES.md"), notices).map_err(|e| io(&top, e))?;
    std::fs::copy(root.join("README.md"), top.join("README.md")).map_err(|e| io(&root.join("README.md"), e))?;
    let tarball = out.join(format!("{name}.tar.gz"));
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&tarball)
        .arg("-C")
        .arg(staging)
        .arg(&name)
        .status()
        .map_err(|e| format!("cannot run tar: {e}"))?;
    if status.success() { Ok(tarball) } else { Err(format!("tar failed ({status})")) }
}
