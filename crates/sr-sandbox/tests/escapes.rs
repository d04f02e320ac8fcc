//! The routes a red team took past the import policy, each run under the
//! unsandboxed backend, where the policy is the only barrier, and judged by its
//! effect: the file the code tries to write (itself, or through a process it
//! starts) does not exist afterwards.
#![allow(clippy::unwrap_used)]

mod support;

use std::path::Path;
use std::sync::Arc;

use sr_sandbox::{Backend, ImportPolicy, Outcome, SessionConfig, Unsandboxed};
use support::{session, step};

/// Runs `code` (with `{target}` replaced) under `policy`; whether `{target}` exists afterwards.
async fn escapes(policy: ImportPolicy, code: &str) -> (bool, Outcome) {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("escaped");
    let backend: Arc<dyn Backend> = Arc::new(Unsandboxed::default());
    let (mut session, _) = session(backend, SessionConfig { policy, ..SessionConfig::default() }).await;
    let (report, _) = step(&mut session, &code.replace("{target}", &target.display().to_string())).await;
    session.close().await;
    (Path::new(&target).exists(), report.outcome)
}

#[tokio::test]
async fn a_module_under_another_name() {
    let code = "import random\nr = random\nos = r._os\n\
                os.write(os.open('{target}', os.O_WRONLY | os.O_CREAT, 0o644), b'escaped')";
    let (escaped, outcome) = escapes(ImportPolicy::default(), code).await;
    assert!(!escaped, "{outcome:?}");
    assert!(matches!(outcome, Outcome::PolicyViolation { .. }), "{outcome:?}");
}

#[tokio::test]
async fn getattr_under_another_name() {
    let code = "g = getattr\nb = g(print, '__se' + 'lf__')\nb.open('{target}', 'w').write('escaped')";
    let (escaped, outcome) = escapes(ImportPolicy::default(), code).await;
    assert!(!escaped, "{outcome:?}");
    assert!(matches!(outcome, Outcome::PolicyViolation { .. }), "{outcome:?}");
}

#[tokio::test]
async fn operator_attrgetter() {
    let code = "import operator, random\nos = operator.attrgetter('_' + 'os')(random)\n\
                os.write(os.open('{target}', os.O_WRONLY | os.O_CREAT, 0o644), b'escaped')";
    let (escaped, outcome) = escapes(ImportPolicy::default(), code).await;
    assert!(!escaped, "{outcome:?}");
    assert!(matches!(outcome, Outcome::PolicyViolation { .. }), "{outcome:?}");
}

#[tokio::test]
async fn string_formatter_get_field() {
    let code = "import string, random\nos = string.Formatter().get_field('0._os', [random], {})[0]\n\
                os.write(os.open('{target}', os.O_WRONLY | os.O_CREAT, 0o644), b'escaped')";
    let (escaped, outcome) = escapes(ImportPolicy::default(), code).await;
    assert!(!escaped, "{outcome:?}");
    assert!(matches!(outcome, Outcome::PolicyViolation { .. }), "{outcome:?}");
}

/// `sys` is allowed here, as an executor may allow it, and `subprocess` is not:
/// `_posixsubprocess.fork_exec` starts a process without raising an audit
/// event of its own, so the module itself is refused, by whatever code imports it.
#[tokio::test]
async fn posixsubprocess_fork_exec() {
    let code = "import sys\nos = sys.modules['os']\n\
                fork_exec = sys.modules['importlib'].import_module('_posixsubprocess').fork_exec\n\
                r, w = os.pipe()\n\
                common = [[b'/bin/sh', b'-c', b'echo escaped > {target}'], [b'/bin/sh'], True, (), None, None,\n\
                \x20         -1, -1, -1, -1, -1, -1, r, w, False, False, -1, None, None, None, -1, None]\n\
                try:\n    pid = fork_exec(*common, False)\nexcept TypeError:\n    pid = fork_exec(*common)\n\
                os.waitpid(pid, 0)";
    let (escaped, outcome) = escapes(ImportPolicy::default().allow("sys").unwrap(), code).await;
    assert!(!escaped, "{outcome:?}");
    let Outcome::PolicyViolation { message, .. } = &outcome else { panic!("{outcome:?}") };
    assert!(message.starts_with("import of '_posixsubprocess' is not allowed"), "{message}");
}

/// The spawn functions of `os` raise their audit events, which are refused.
#[tokio::test]
async fn os_posix_spawn() {
    let code = "import os\nos.posix_spawn('/bin/sh', ['sh', '-c', 'echo escaped > {target}'], {})";
    let (escaped, outcome) = escapes(ImportPolicy::default().allow("os").unwrap(), code).await;
    assert!(!escaped, "{outcome:?}");
    let Outcome::PolicyViolation { message, .. } = &outcome else { panic!("{outcome:?}") };
    assert!(message.starts_with("os.posix_spawn is not allowed"), "{message}");
}
