//! Scenarios every backend must pass; `tests/<backend>.rs` run them.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use sr_sandbox::{Backend, Event, ImportPolicy, Limits, Outcome, SessionConfig};

use super::{session, step};

fn config(policy: ImportPolicy) -> SessionConfig {
    SessionConfig { policy, ..SessionConfig::default() }
}

/// Tools work over the bridge, globals persist, and `final_answer` keeps
/// multi-line, structured values intact.
pub async fn tools_and_state(backend: Arc<dyn Backend>) {
    let (mut session, recorder) = session(backend, SessionConfig::default()).await;
    let (report, events) = step(&mut session, "total = add(2, 3)\nprint('total is', total)").await;
    assert_eq!(report.outcome, Outcome::Success { result: None }, "{report:?}");
    assert_eq!(report.stdout, "total is 5.0\n");
    assert_eq!(report.tool_calls.len(), 1);
    assert_eq!(report.tool_calls[0].result, Ok(json!(5.0)));
    let kinds: Vec<&str> = events.iter().map(event_kind).collect();
    assert_eq!(kinds, ["code", "tool_call", "tool_result", "output", "outcome"]);

    let (report, _) = step(
        &mut session,
        "city = lookup(key='capital:norway')['city']\nfinal_answer({'total': total, 'text': f'line 1\\n{city}'})",
    )
    .await;
    assert_eq!(report.outcome, Outcome::FinalAnswer { value: json!({"total": 5.0, "text": "line 1\nOslo"}) });
    assert_eq!(recorder.count(), 2);
    session.close().await;
}

/// Arguments are checked against the schema before the host sees them; failures
/// reach the code as `ToolError`, and an uncaught one is the step's outcome.
pub async fn tool_errors(backend: Arc<dyn Backend>) {
    let (mut session, recorder) = session(backend, SessionConfig::default()).await;
    let code = "try:\n    lookup(key=5)\nexcept ToolError as error:\n    print('refused:', error)\n";
    let (report, _) = step(&mut session, code).await;
    assert!(report.stdout.starts_with("refused: invalid arguments for lookup: /key: 5 is not of type"), "{report:?}");
    assert_eq!(recorder.count(), 0, "an invalid call never reaches the host");

    let (report, _) = step(&mut session, "fail(reason='testing')\nprint('not reached')").await;
    let expected = Outcome::ToolError { tool: "fail".into(), message: "failed on purpose: testing".into() };
    assert_eq!(report.outcome, expected);
    assert_eq!(report.stdout, "");
    session.close().await;
}

/// A connection to the bridge without the run's token is refused.
pub async fn wrong_token_refused(backend: Arc<dyn Backend>) {
    let policy = ImportPolicy::default().allow("socket").unwrap().allow("sys").unwrap();
    let (mut session, _) = session(backend, config(policy)).await;
    let code = "import socket, json, sys\n\
                s = socket.socket(socket.AF_UNIX)\n\
                s.connect(sys.argv[-1])\n\
                s.sendall(json.dumps({'type': 'hello', 'token': '0' * 64, 'protocol': 1}).encode() + b'\\n')\n\
                final_answer(json.loads(s.makefile().readline()))";
    let (report, _) = step(&mut session, code).await;
    assert_eq!(report.outcome, Outcome::FinalAnswer { value: json!({"type": "refused", "reason": "wrong token"}) });
    // The session's own connection is unaffected.
    let (report, _) = step(&mut session, "print(1 + 1)").await;
    assert_eq!(report.stdout, "2\n");
    session.close().await;
}

/// A step that overruns is interrupted and the state survives; one that ignores the
/// interrupt gets the sandbox killed, and the next step runs in a new sandbox with
/// the earlier steps replayed from recorded tool results.
pub async fn timeout_kills_and_recovers(backend: Arc<dyn Backend>) {
    let config = SessionConfig {
        step_timeout: Duration::from_millis(1000),
        kill_grace: Duration::from_millis(1000),
        ..SessionConfig::default()
    };
    let (mut session, recorder) = session(backend, config).await;
    let (report, _) = step(&mut session, "total = add(1, 2)\ncounter = 10").await;
    assert_eq!(report.outcome, Outcome::Success { result: None });

    let (report, _) = step(&mut session, "counter += 1\nwhile True:\n    pass").await;
    assert_eq!(report.outcome, Outcome::Timeout { limit: Duration::from_secs(1), restarted: false });
    let (report, events) = step(&mut session, "counter").await;
    assert_eq!(report.outcome, Outcome::Success { result: Some("11".into()) }, "interrupted, not restarted");
    assert!(!events.iter().any(|event| matches!(event, Event::Restarted { .. })));

    let stubborn =
        "while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass";
    let (report, _) = step(&mut session, stubborn).await;
    assert_eq!(report.outcome, Outcome::Timeout { limit: Duration::from_secs(1), restarted: true });
    assert!(report.duration < Duration::from_secs(5), "{:?}", report.duration);

    let (report, events) = step(&mut session, "print(total, counter)").await;
    assert_eq!(report.stdout, "3.0 10\n", "state rebuilt from the completed steps");
    assert!(events.contains(&Event::Restarted { replayed: 2, diverged: 0 }), "{events:?}");
    assert_eq!(recorder.count(), 1, "the replay used the recorded result");
    session.close().await;
}

/// An interpreter that dies is recreated for the next step.
pub async fn crash_recovers(backend: Arc<dyn Backend>) {
    let policy = ImportPolicy::default().allow("ctypes").unwrap();
    let (mut session, recorder) = session(backend, config(policy)).await;
    step(&mut session, "value = lookup(key='capital:japan')").await;
    let (report, _) = step(&mut session, "import ctypes\nprint('going', flush=True)\nctypes.string_at(0)").await;
    assert_eq!(report.stdout, "going\n", "{report:?}");
    let Outcome::Crashed { reason } = &report.outcome else { panic!("{report:?}") };
    assert!(reason.contains("killed by signal 11"), "{reason}");
    let (report, _) = step(&mut session, "value['city']").await;
    assert_eq!(report.outcome, Outcome::Success { result: Some("'Tokyo'".into()) });
    assert_eq!(recorder.count(), 1);
    session.close().await;
}

/// Allocating past the memory limit fails the step, not the session.
pub async fn memory_limit(backend: Arc<dyn Backend>) {
    let config =
        SessionConfig { limits: Limits { memory_bytes: 256 << 20, ..Limits::default() }, ..SessionConfig::default() };
    let (mut session, _) = session(backend, config).await;
    step(&mut session, "kept = 'still here'").await;
    let (report, _) = step(&mut session, "block = b'x' * (1 << 30)\nprint(len(block))").await;
    match &report.outcome {
        Outcome::RuntimeError { exception, .. } => assert_eq!(exception, "MemoryError"),
        Outcome::Crashed { reason } => assert!(reason.contains("memory") || reason.contains("signal 9"), "{reason}"),
        other => panic!("the allocation succeeded: {other:?}"),
    }
    assert_eq!(report.stdout, "");
    let (report, _) = step(&mut session, "kept").await;
    assert_eq!(report.outcome, Outcome::Success { result: Some("'still here'".into()) });
    session.close().await;
}

/// The memory limit bounds the sandbox's processes together, not only each
/// one: six children of 300 MiB each under 512 MiB stop the sandbox with a
/// message saying so, and the session goes on in a new one. A step within the
/// limit, children included, is left alone. The policy allows processes here,
/// as code that got past it would have them.
pub async fn tree_memory(backend: Arc<dyn Backend>) {
    let config = SessionConfig {
        policy: ImportPolicy::default().allow("os").unwrap().allow("subprocess").unwrap(),
        limits: Limits { memory_bytes: 512 << 20, ..Limits::default() },
        step_timeout: Duration::from_secs(30),
        ..SessionConfig::default()
    };
    let (mut session, _) = session(backend, config).await;
    step(&mut session, "kept = 'still here'").await;
    let children = |count: u32, mib: u32| {
        format!(
            "import os, time\npids = []\nfor _ in range({count}):\n    pid = os.fork()\n    if pid == 0:\n\
             \x20       block = b'x' * ({mib} << 20)\n        time.sleep(2)\n        os.kill(os.getpid(), 9)\n    pids.append(pid)\n\
             for pid in pids:\n    os.waitpid(pid, 0)\nprint('all', len(pids))"
        )
    };
    let (report, _) = step(&mut session, &children(3, 100)).await;
    assert_eq!(report.outcome, Outcome::Success { result: None }, "{report:?}");
    assert_eq!(report.stdout, "all 3\n");

    let (report, _) = step(&mut session, &children(6, 300)).await;
    let Outcome::Crashed { reason } = &report.outcome else { panic!("{report:?}") };
    assert!(reason.contains("the sandbox used more than 512 MiB in all; it was stopped"), "{reason}");
    assert!(report.duration < Duration::from_secs(20), "{:?}", report.duration);
    let (report, _) = step(&mut session, "kept").await;
    assert_eq!(report.outcome, Outcome::Success { result: Some("'still here'".into()) }, "{report:?}");
    session.close().await;
}

/// The network is unreachable: a listener on the host's loopback cannot be reached,
/// and the sandbox sees no interface but a loopback.
pub async fn network_unreachable(backend: Arc<dyn Backend>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let policy = ImportPolicy::default().allow("socket").unwrap();
    let (mut session, _) = session(backend, config(policy)).await;
    let code = format!(
        "import socket\n\
         s = socket.socket()\n\
         s.settimeout(2)\n\
         try:\n    s.connect(('127.0.0.1', {port}))\n    print('connected')\n\
         except OSError as error:\n    print('refused', error.errno)\n\
         print(sorted(name for _, name in socket.if_nameindex()))"
    );
    let (report, _) = step(&mut session, &code).await;
    assert!(report.stdout.starts_with("refused "), "{report:?}");
    assert!(report.stdout.ends_with("['lo']\n"), "{report:?}");
    let accepted = tokio::time::timeout(Duration::from_millis(200), listener.accept()).await;
    assert!(accepted.is_err(), "nothing reached the host");
    session.close().await;
}

/// The root and the run directory are read-only; only the scratch directories are
/// writable.
pub async fn root_read_only(backend: Arc<dyn Backend>) {
    let (mut session, _) = session(backend, config(ImportPolicy::default().with_open(true))).await;
    let code = "results = []\n\
                for path in ['/probe', '/usr/probe', '/run/sr/probe', '/work/probe', '/tmp/probe']:\n\
                \x20   try:\n\
                \x20       with open(path, 'w') as f:\n\
                \x20           f.write('x')\n\
                \x20       results.append('written')\n\
                \x20   except OSError as error:\n\
                \x20       results.append(error.errno)\n\
                results";
    let (report, _) = step(&mut session, code).await;
    // 30 is EROFS.
    assert_eq!(report.outcome, Outcome::Success { result: Some("[30, 30, 30, 'written', 'written']".into()) });
    session.close().await;
}

/// The agent's code runs as an unprivileged user without capabilities.
pub async fn unprivileged(backend: Arc<dyn Backend>) {
    let policy = ImportPolicy::default().allow("os").unwrap().with_open(true);
    let (mut session, _) = session(backend, config(policy)).await;
    let code = "import os\nstatus = open('/proc/self/status').read()\n\
                (os.getuid(), [line.split()[1] for line in status.splitlines() if line.startswith('CapEff')])";
    let (report, _) = step(&mut session, code).await;
    assert_eq!(report.outcome, Outcome::Success { result: Some("(65534, ['0000000000000000'])".into()) });
    session.close().await;
}

fn event_kind(event: &Event) -> &'static str {
    match event {
        Event::Reply { .. } => "reply",
        Event::Code { .. } => "code",
        Event::Output { .. } => "output",
        Event::ToolCall { .. } => "tool_call",
        Event::ToolResult { .. } => "tool_result",
        Event::Restarted { .. } => "restarted",
        Event::Outcome { .. } => "outcome",
    }
}

/// Forks stop at the process limit, which the step reports, and the session goes
/// on; a fork bomb that ignores the failures is stopped at the step's time cap by
/// taking the whole sandbox down, and the next step runs in a fresh one. The
/// policy allows processes here, as code that got past it would have them.
pub async fn fork_bomb(backend: Arc<dyn Backend>) {
    let config = SessionConfig {
        policy: ImportPolicy::default().allow("os").unwrap().allow("subprocess").unwrap(),
        limits: Limits { processes: 32, ..Limits::default() },
        step_timeout: Duration::from_secs(3),
        kill_grace: Duration::from_millis(500),
        ..SessionConfig::default()
    };
    let (mut session, _) = session(backend, config).await;
    step(&mut session, "kept = 'still here'").await;
    // Children exit at once but count until they are reaped.
    let bounded = "import os\npids = []\ntry:\n    while True:\n        pid = os.fork()\n        if pid == 0:\n            os.kill(os.getpid(), 9)\n        pids.append(pid)\n\
                   except OSError as error:\n    print('refused after', len(pids), error.errno)\n\
                   for pid in pids:\n    os.waitpid(pid, 0)";
    let (report, _) = step(&mut session, bounded).await;
    assert_eq!(report.outcome, Outcome::Success { result: None }, "{report:?}");
    // 11 is EAGAIN; the interpreter and its threads count too.
    let words: Vec<&str> = report.stdout.split_whitespace().collect();
    assert_eq!((words[0], words[1], words[3]), ("refused", "after", "11"), "{report:?}");
    assert!(words[2].parse::<u32>().unwrap() < 32, "{report:?}");

    let bomb = "import os\nwhile True:\n    try:\n        os.fork()\n    except BaseException:\n        pass";
    let (report, _) = step(&mut session, bomb).await;
    assert!(matches!(report.outcome, Outcome::Timeout { .. }), "{report:?}");
    assert!(report.duration < Duration::from_secs(10), "{:?}", report.duration);
    let (report, _) = step(&mut session, "kept").await;
    assert_eq!(report.outcome, Outcome::Success { result: Some("'still here'".into()) }, "{report:?}");
    session.close().await;
}

/// `/dev` has the usual devices but no room: it is read-only, and `/dev/shm` is
/// a small tmpfs.
pub async fn dev_bounded(backend: Arc<dyn Backend>) {
    let (mut session, _) = session(backend, config(ImportPolicy::default().with_open(true))).await;
    let code = "results = []\n\
                for path, size in [('/dev/fill', 10), ('/dev/shm/fill', 4 << 20), ('/dev/null', 10)]:\n\
                \x20   try:\n\
                \x20       with open(path, 'wb') as f:\n\
                \x20           f.write(b'x' * size)\n\
                \x20       results.append('written')\n\
                \x20   except OSError as error:\n\
                \x20       results.append(error.errno)\n\
                results";
    let (report, _) = step(&mut session, code).await;
    // 30 is EROFS, 28 ENOSPC.
    assert_eq!(report.outcome, Outcome::Success { result: Some("[30, 28, 'written']".into()) }, "{report:?}");
    session.close().await;
}
