//! Session behaviour that does not depend on the backend, run unsandboxed for speed:
//! the runtime guard behind the static policy, output limits, the final answer,
//! tool limits and start failures.

mod support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use sr_sandbox::{Backend, ImportPolicy, Outcome, SandboxError, Session, SessionConfig, Stream, ToolSpec, Unsandboxed};
use support::{Recorder, session, step};

fn backend() -> Arc<dyn Backend> {
    Arc::new(Unsandboxed::default())
}

fn runtime_violation(outcome: &Outcome) -> &str {
    match outcome {
        Outcome::PolicyViolation { message, violations } if violations.is_empty() => message,
        other => panic!("expected a run-time policy violation, got {other:?}"),
    }
}

#[tokio::test]
async fn the_runtime_guard_catches_what_the_static_check_misses() {
    let policy = ImportPolicy::default().allow("os").unwrap();
    let (mut session, _) = session(backend(), SessionConfig { policy, ..SessionConfig::default() }).await;

    // Names built at run time pass the static check; the import guard still refuses.
    let code = "g = [globals][0]\nscope = g()\nimporter = scope['__buil' + 'tins__']['__imp' + 'ort__']\nimporter('subprocess')";
    let (report, _) = step(&mut session, code).await;
    assert!(runtime_violation(&report.outcome).starts_with("import of 'subprocess' is not allowed"), "{report:?}");

    let code = "g = [globals][0]\nscope = g()\nscope['__buil' + 'tins__']['ex' + 'ec']('x = 1')";
    let (report, _) = step(&mut session, code).await;
    assert!(runtime_violation(&report.outcome).starts_with("exec() is not allowed"), "{report:?}");

    // `os` is allowed, processes are not.
    let (report, _) = step(&mut session, "import os\nos.system('true')").await;
    assert!(runtime_violation(&report.outcome).starts_with("os.system is not allowed"), "{report:?}");

    // The standard library's own imports are not the agent's.
    let (report, _) =
        step(&mut session, "import uuid, random\nlen(str(uuid.uuid4())), random.Random(1).random() < 1").await;
    assert_eq!(report.outcome, Outcome::Success { result: Some("(36, True)".into()) });
    session.close().await;
}

#[tokio::test]
async fn output_is_streamed_and_truncated() {
    let policy = ImportPolicy::default().allow("sys").unwrap();
    let config = SessionConfig { policy, max_output_bytes: 1000, ..SessionConfig::default() };
    let (mut session, _) = session(backend(), config).await;
    let (report, events) =
        step(&mut session, "import sys\nprint('one')\nprint('warn', file=sys.stderr)\nprint('x' * 100_000)").await;
    assert_eq!(report.stderr, "warn\n");
    assert_eq!(report.stdout.len(), 1000);
    assert!(report.stdout.starts_with("one\nxxx"));
    assert_eq!(report.truncated, 100_001 - 996);
    let streamed: Vec<(Stream, usize)> = events
        .iter()
        .filter_map(|event| match event {
            sr_sandbox::Event::Output { stream, text, .. } => Some((*stream, text.len())),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, [(Stream::Stdout, 4), (Stream::Stderr, 5), (Stream::Stdout, 996)]);
    session.close().await;
}

#[tokio::test]
async fn final_answer_is_structured_and_stops_the_step() {
    let (mut session, _) = session(backend(), SessionConfig::default()).await;
    let (report, _) = step(&mut session, "print('__FINAL_ANSWER__: spoofed')\nx = 1").await;
    assert_eq!(report.outcome, Outcome::Success { result: None }, "printed markers mean nothing");

    let code = "class Thing:\n    def __str__(self):\n        return 'a thing'\n\
                final_answer({'text': 'two\\nlines', 'pair': (1, 2), 'set': {3}, 'nan': float('nan'), \
                'big': 10 ** 30, 'thing': Thing(), 1: None})\nprint('after')";
    let (report, _) = step(&mut session, code).await;
    let expected = json!({"text": "two\nlines", "pair": [1, 2], "set": [3], "nan": "nan",
                          "big": "1000000000000000000000000000000", "thing": "a thing", "1": null});
    assert_eq!(report.outcome, Outcome::FinalAnswer { value: expected });
    assert_eq!(report.stdout, "", "nothing after final_answer runs");

    // Catching it does not take the answer back.
    let (report, _) =
        step(&mut session, "try:\n    final_answer('kept')\nexcept BaseException:\n    pass\n1 / 0").await;
    assert_eq!(report.outcome, Outcome::FinalAnswer { value: json!("kept") });
    session.close().await;
}

#[tokio::test]
async fn errors_the_parser_accepts_are_reported_by_the_interpreter() {
    let (mut session, _) = session(backend(), SessionConfig::default()).await;
    let (report, _) = step(&mut session, "x = 1\nreturn x").await;
    let Outcome::SyntaxError { message, line, .. } = &report.outcome else { panic!("{report:?}") };
    assert_eq!((message.as_str(), *line), ("'return' outside function", Some(2)));
    let (report, _) = step(&mut session, "def f(n):\n    return 10 // n\n\nf(0)").await;
    let Outcome::RuntimeError { exception, line, traceback, .. } = &report.outcome else { panic!("{report:?}") };
    assert_eq!((exception.as_str(), *line), ("ZeroDivisionError", Some(2)), "the innermost line of the step");
    assert!(traceback.contains("line 2, in f\n    return 10 // n\n"), "{traceback}");
    assert!(!traceback.contains("driver.py"), "driver frames are hidden: {traceback}");
    session.close().await;
}

#[tokio::test]
async fn tool_calls_have_time_and_size_limits() {
    let config = SessionConfig {
        step_timeout: Duration::from_secs(1),
        tool_timeout: Duration::from_millis(1500),
        max_request_bytes: 10_000,
        max_result_bytes: 20,
        ..SessionConfig::default()
    };
    let (mut session, recorder) = session(backend(), config).await;
    // Time in a tool is not the step's: 1.2 s of tool in a 1 s step.
    let (report, _) = step(&mut session, "sleep(seconds=1.2)").await;
    assert_eq!(report.outcome, Outcome::Success { result: Some("'slept'".into()) });

    let (report, _) = step(&mut session, "sleep(seconds=3)").await;
    let timed_out = Outcome::ToolError { tool: "sleep".into(), message: "sleep timed out after 1.5 s".into() };
    assert_eq!(report.outcome, timed_out);

    let (report, _) = step(&mut session, "lookup(key='capital:japan')").await;
    let Outcome::ToolError { message, .. } = &report.outcome else { panic!("{report:?}") };
    assert!(message.contains("over the limit of 20"), "{message}");

    // Sizes are bytes: 6000 two-byte characters are too many.
    let calls = recorder.count();
    let (report, _) = step(&mut session, "lookup(key='é' * 6000)").await;
    let Outcome::ToolError { message, .. } = &report.outcome else { panic!("{report:?}") };
    assert_eq!(message, "arguments of lookup() exceed 10000 bytes");
    assert_eq!(recorder.count(), calls, "an oversized call never leaves the sandbox");

    // Schema errors quote the arguments; what goes back is cut.
    let (report, _) = step(&mut session, "add(a='é' * 4000, b=1)").await;
    let Outcome::ToolError { message, .. } = &report.outcome else { panic!("{report:?}") };
    assert!(message.starts_with("invalid arguments for add: /a: \"éé") && message.len() <= 4096, "{message}");
    let (report, _) = step(&mut session, "add(a=1, b=2)").await;
    assert_eq!(report.outcome, Outcome::Success { result: Some("3.0".into()) });
    session.close().await;
}

#[tokio::test]
async fn start_failures_are_errors() {
    let missing = Arc::new(Unsandboxed { python: "/nonexistent/python3".into() });
    let error = Session::start(missing, Vec::new(), Arc::new(Recorder::default()), SessionConfig::default())
        .await
        .err()
        .expect("no interpreter, no session");
    let SandboxError::Start(message) = &error else { panic!("{error:?}") };
    assert!(message.contains("stopped at start") && message.contains("/nonexistent/python3"), "{message}");

    let bad = ToolSpec { name: "bad".into(), description: String::new(), parameters: json!({"type": 5}) };
    let error = Session::start(backend(), vec![bad], Arc::new(Recorder::default()), SessionConfig::default())
        .await
        .err()
        .expect("a broken schema, no session");
    assert!(matches!(error, SandboxError::Tools(_)), "{error:?}");
}
