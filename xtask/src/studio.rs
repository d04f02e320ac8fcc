//! The studio (`studio/`, embedded by `crates/sr-studio`):
//! `cargo xtask studio-check` type-checks the app and rebuilds it into a scratch
//! directory, failing when the build differs from the committed `crates/sr-studio/assets`
//! (`--write` replaces them instead); `cargo xtask studio-e2e [--screenshots DIR]` runs
//! the Playwright tests in Debian's Chromium against `sr serve` (after `sr eval --server`
//! ran two cases there) and against the fixture server, which serves the
//! embedded app as `sr serve` does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sr_llm::mock::{MockReply, MockServer};

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
    step(Command::new("cargo").args(["build", "-p", "sr-cli", "--bin", "sr"]).current_dir(root()))?;
    let server = crate::target_dir().join("debug/examples/fixture_server");
    let results = crate::target_dir().join("studio-e2e");

    // `sr serve` with the mock as its model. First `sr eval --server` runs its two
    // cases there (one reply each, the same, so their order does not matter); then
    // the approve run: the draft streams slowly, so the run's question comes while
    // the page watches; the polish follows the answer.
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("tokio: {e}"))?;
    let mock = runtime.block_on(MockServer::start());
    for _ in 0..2 {
        mock.push(MockReply::text(EVAL_REPLY).usage(30, 6));
    }
    mock.push(MockReply::chunks(["Dear ", "Ada, ", "hello."]).chunk_delay(Duration::from_millis(400)));
    mock.push(MockReply::text("Polished: Dear Ada, hello."));
    // Outside `results`, which Playwright empties when it starts.
    let work = crate::target_dir().join("studio-e2e-serve");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    for (name, text) in [("approve.sr", APPROVE), ("greet.sr", GREET), ("greet.jsonl", GREET_CASES)] {
        std::fs::write(work.join(name), text).map_err(|e| format!("{name}: {e}"))?;
    }
    let port = 4792;
    let mut serve = ServeGuard(
        Command::new(crate::target_dir().join("debug/sr"))
            .args(["serve", "approve.sr", "greet.sr", "--bind", &format!("127.0.0.1:{port}"), "--state-dir", "state"])
            .env("OPENAI_BASE_URL", format!("{}/v1", mock.url()))
            .env("OPENAI_API_KEY", "studio-e2e-key")
            .env("NO_COLOR", "1")
            .current_dir(&work)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(work.join("serve.log")).map_err(|e| format!("serve.log: {e}"))?)
            .spawn()
            .map_err(|e| format!("cannot start sr serve: {e}"))?,
    );
    wait_for(port, &mut serve.0)?;
    // The Evaluations page is given what `sr eval` wrote from the server's runs.
    let url = format!("http://127.0.0.1:{port}");
    step(
        Command::new(crate::target_dir().join("debug/sr"))
            .args(["eval", "greet.jsonl", "--workload", "greet.sr", "--jobs", "1", "--server", &url, "--out", "eval"])
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env("NO_COLOR", "1")
            .current_dir(&work),
    )?;

    let mut playwright = Command::new("npx");
    playwright
        .args(["--no-install", "playwright", "test"])
        .env("SR_STUDIO_SERVER", &server)
        .env("SR_SERVE_URL", &url)
        .env("SR_EVAL_RESULTS", work.join("eval/results.json"))
        .env("SR_STUDIO_RESULTS", &results)
        .env("CHROMIUM", chromium())
        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
        .current_dir(&studio);
    if let Some(dir) = flag(args, "--screenshots") {
        playwright.env("SR_STUDIO_SCREENSHOTS", std::path::absolute(dir).map_err(|e| format!("{dir}: {e}"))?);
    }
    step(&mut playwright)?;
    // The two eval cases' calls, then one run, two model calls: the draft before the
    // question and the polish after the answer; a resumed run that called the model
    // again for its draft would make three. The state view and the fork from the
    // polish (its reply replaced) make none: every step before the fork point is
    // served from the journal.
    let calls = mock.requests().len();
    if calls != 4 {
        return Err(format!(
            "sr serve made {calls} model calls for the eval's two cases, the studio's run, its state view and its \
             fork, not 4 (see {})",
            work.join("serve.log").display()
        ));
    }
    let figure = std::fs::read_to_string(results.join("first-render.json")).unwrap_or_default();
    eprintln!(
        "studio-e2e passed in {:.0} s; first render of a 10,000-event run: {figure}",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

const APPROVE: &str = r#"model main = openai/gpt-4o-mini
prompt draft_prompt: """Draft a reply to: ${input_prompt}"""
prompt polish_prompt: """Polish this draft using the reviewer's note (${human_input}): ${draft}"""
flow main:
    $draft = call llm draft_prompt
    escalate to human "Approve the draft?"
    $final = call llm polish_prompt
    return $final
"#;

/// One model call; the eval's cases run it on the server.
const GREET: &str = r#"model main = openai/gpt-4o-mini
prompt answer_prompt: """Answer the customer: ${input_prompt}"""
flow main:
    $answer = call llm answer_prompt
    return $answer
"#;

/// Two cases the one reply (`EVAL_REPLY`) passes and fails.
const GREET_CASES: &str = r#"{"id": "shipped", "prompt": "status of order 7?", "expect": [{"contains": "shipped"}]}
{"id": "cancelled", "prompt": "cancel order 7", "expect": [{"contains": "cancelled"}]}
"#;

const EVAL_REPLY: &str = "Order 7 has shipped.";

/// The `sr serve` child, killed when the tests end however they end.
struct ServeGuard(Child);

impl Drop for ServeGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits until something listens on `port` (at most 60 s), failing if `sr serve` exits.
fn wait_for(port: u16, child: &mut Child) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("sr serve exited ({status}) before it listened"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(format!("sr serve did not listen on port {port} within 60 s"))
}

fn chromium() -> String {
    std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_string())
}

fn npm_ci(studio: &Path) -> Result<(), String> {
    // `npm ci` empties `node_modules` first: through a symlink, that is
    // another checkout's.
    let modules = studio.join("node_modules");
    if modules.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(format!("{} is a symlink: `npm ci` would empty what it points to; remove it", modules.display()));
    }
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
