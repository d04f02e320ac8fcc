//! A throwaway PostgreSQL server for a test: `initdb` into a temporary
//! directory, `pg_ctl start` listening on a unix socket in it (no TCP port),
//! stopped (`pg_ctl stop -m immediate`) and removed when dropped. initdb
//! refuses to run as root, so as root the cluster belongs to `nobody` and its
//! programs run through `setpriv`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Debian's PostgreSQL 15 (the `postgresql` package `.ci/setup` installs).
const BIN: &str = "/usr/lib/postgresql/15/bin";

pub struct Postgres {
    dir: PathBuf,
    as_nobody: bool,
}

/// Whether the machine can start one (the programs exist; as root, setpriv too).
pub fn available() -> bool {
    let programs = ["initdb", "pg_ctl", "postgres"].iter().all(|p| Path::new(BIN).join(p).exists());
    programs && (!is_root() || Command::new("setpriv").arg("--version").output().is_ok_and(|o| o.status.success()))
}

/// Starts a server, or returns `None` after [`crate::required`] said why not
/// (in CI a missing PostgreSQL fails the test).
pub fn start(name: &str) -> Option<Postgres> {
    if !crate::required(available(), "PostgreSQL 15 (/usr/lib/postgresql/15/bin: .ci/setup installs `postgresql`)") {
        return None;
    }
    Some(Postgres::start(name))
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

impl Postgres {
    fn start(name: &str) -> Postgres {
        // Short: a unix socket's path is at most 107 bytes.
        static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let count = COUNT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let unique = format!("{:x}-{count}", std::process::id());
        let dir = std::env::temp_dir().join(format!("srpg-{name}-{unique}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let server = Postgres { dir, as_nobody: is_root() };
        if server.as_nobody {
            let status = Command::new("chown").arg("nobody:").arg(&server.dir).status().unwrap();
            assert!(status.success(), "chown nobody {}", server.dir.display());
        }
        let data = server.dir.join("data");
        server
            .pg("initdb", &["-D", data.to_str().unwrap(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
        server.resume();
        server
    }

    /// Starts the server (again, after [`Postgres::pause`]), waiting until it takes connections.
    pub fn resume(&self) {
        let options = format!(
            "-k {} -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
            self.dir.display()
        );
        let (data, log) = (self.dir.join("data"), self.dir.join("log"));
        self.pg(
            "pg_ctl",
            &["-D", data.to_str().unwrap(), "-l", log.to_str().unwrap(), "-o", &options, "-w", "-t", "60", "start"],
        );
    }

    /// Stops the server as a crash would (`-m immediate`), keeping its data for [`Postgres::resume`].
    pub fn pause(&self) {
        let data = self.dir.join("data");
        self.pg("pg_ctl", &["-D", data.to_str().unwrap(), "-m", "immediate", "-w", "stop"]);
    }

    /// Runs one of PostgreSQL's programs (as `nobody` when we are root); it must succeed.
    fn pg(&self, program: &str, args: &[&str]) {
        let path = Path::new(BIN).join(program);
        let mut command = if self.as_nobody {
            let mut command = Command::new("setpriv");
            command.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]).arg(path);
            command
        } else {
            Command::new(path)
        };
        let out = command.args(args).current_dir(&self.dir).output().unwrap();
        assert!(
            out.status.success(),
            "{program} failed: {}{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
        );
    }

    /// A connection URL for database `postgres` over the server's socket.
    pub fn url(&self) -> String {
        let host: String = self
            .dir
            .to_str()
            .unwrap()
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-_.".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        format!("postgres://postgres@{host}/postgres")
    }

    /// The server's log so far (for a failing test's message).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let path = Path::new(BIN).join("pg_ctl");
        let mut command = if self.as_nobody {
            let mut command = Command::new("setpriv");
            command.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]).arg(path);
            command
        } else {
            Command::new(path)
        };
        let _ = command.args(["-D", data.to_str().unwrap_or(""), "stop", "-m", "immediate"]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
