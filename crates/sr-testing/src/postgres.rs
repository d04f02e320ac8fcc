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
    /// `-c` settings given after the defaults (they win).
    settings: Vec<String>,
}

/// Settings of a server that syncs every commit to disk, as a production one does.
pub const DURABLE: &[&str] = &["fsync=on", "synchronous_commit=on", "full_page_writes=on"];

/// Settings of a server whose statements [`Postgres::counted`] can count.
pub const COUNTING: &[&str] = &["shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=all"];

/// What the server did between [`Postgres::counter`] and [`Postgres::counted`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    /// Statements executed, by every client (`BEGIN` and `COMMIT` included).
    pub statements: u64,
    /// Of those, `BEGIN`, `COMMIT` and `ROLLBACK`.
    pub transaction_control: u64,
    /// Transactions that wrote and committed (commit records in the WAL:
    /// a read-only transaction writes none).
    pub commits: u64,
}

/// Where counting started: the WAL's position then.
pub struct Counter {
    lsn: String,
}

/// Whether the machine can start one (the programs exist; as root, setpriv too).
pub fn available() -> bool {
    let programs = ["initdb", "pg_ctl", "postgres"].iter().all(|p| Path::new(BIN).join(p).exists());
    programs && (!is_root() || Command::new("setpriv").arg("--version").output().is_ok_and(|o| o.status.success()))
}

/// Starts a server, or returns `None` after [`crate::required`] said why not
/// (in CI a missing PostgreSQL fails the test).
pub fn start(name: &str) -> Option<Postgres> {
    start_with(name, &[])
}

/// [`start`], with `settings` (`name=value`, e.g. [`DURABLE`], [`COUNTING`]) over the defaults.
pub fn start_with(name: &str, settings: &[&str]) -> Option<Postgres> {
    if !crate::required(available(), "PostgreSQL 15 (/usr/lib/postgresql/15/bin: .ci/setup installs `postgresql`)") {
        return None;
    }
    Some(Postgres::start(name, settings))
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

impl Postgres {
    fn start(name: &str, settings: &[&str]) -> Postgres {
        // Short: a unix socket's path is at most 107 bytes.
        static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let count = COUNT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let unique = format!("{:x}-{count}", std::process::id());
        let dir = std::env::temp_dir().join(format!("srpg-{name}-{unique}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let settings = settings.iter().map(|s| format!("-c {s}")).collect();
        let server = Postgres { dir, as_nobody: is_root(), settings };
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
            "-k {} -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 {}",
            self.dir.display(),
            self.settings.join(" ")
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

    /// Starts counting the server's work (a server started with [`COUNTING`]).
    pub fn counter(&self) -> Counter {
        self.sql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        self.sql("SELECT pg_stat_statements_reset()");
        Counter { lsn: self.sql("SELECT pg_current_wal_insert_lsn()") }
    }

    /// The work of every client since `counter` (the counting's own queries left out).
    pub fn counted(&self, counter: &Counter) -> Work {
        let own = "query ~* '(pg_stat_statements|pg_current_wal|pg_switch_wal)'";
        let sum = |filter: &str| -> u64 {
            let sql = format!("SELECT coalesce(sum(calls), 0) FROM pg_stat_statements WHERE NOT {own} {filter}");
            self.sql(&sql).parse().expect("a sum of calls is a number")
        };
        let statements = sum("");
        let transaction_control = sum("AND query ~* '^(BEGIN|COMMIT|ROLLBACK)'");
        let end = self.sql("SELECT pg_current_wal_insert_lsn()");
        // Writes the WAL up to `end` to its files, where pg_waldump reads it.
        self.sql("SELECT pg_switch_wal()");
        let wal = self.dir.join("data/pg_wal");
        let stats =
            self.pg("pg_waldump", &["-p", wal.to_str().unwrap(), "-s", &counter.lsn, "-e", &end, "--stats=record"]);
        let commits = stats
            .lines()
            .find_map(|line| line.strip_prefix("Transaction/COMMIT "))
            .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
            .unwrap_or(0);
        Work { statements, transaction_control, commits }
    }

    /// The statements counted since the last [`Postgres::counter`], the most
    /// called first, a line each (`calls|the query's start`): what a cost
    /// test that fails shows.
    pub fn statements(&self) -> String {
        self.sql(
            "SELECT calls, regexp_replace(left(query, 120), '\\s+', ' ', 'g') FROM pg_stat_statements
             ORDER BY calls DESC, query",
        )
    }

    /// The one value `sql` answers, as `psql` prints it.
    fn sql(&self, sql: &str) -> String {
        let host = self.dir.to_str().unwrap();
        self.pg("psql", &["-X", "-A", "-t", "-h", host, "-U", "postgres", "-d", "postgres", "-c", sql])
            .trim()
            .to_string()
    }

    /// Runs one of PostgreSQL's programs (as `nobody` when we are root); it
    /// must succeed. Its standard output.
    fn pg(&self, program: &str, args: &[&str]) -> String {
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
        String::from_utf8_lossy(&out.stdout).into_owned()
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
