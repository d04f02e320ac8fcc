use super::*;

#[test]
fn server_urls_are_checked_before_anything_is_sent() {
    let urls = |list: &[&str]| list.iter().map(|u| u.to_string()).collect::<Vec<_>>();
    let ok = Servers::new(&urls(&["http://127.0.0.1:8787/", "https://a.example/base"]), Some("k")).ok().unwrap();
    assert_eq!(ok.urls(), ["http://127.0.0.1:8787", "https://a.example/base"]);
    let bad = [
        ("127.0.0.1:8787", "--server 127.0.0.1:8787: "),
        ("ftp://host/", "--server ftp://host/: not an http:// or https:// URL"),
        ("http://user:pw@host/", "--server http://user:pw@host/: give the key with --api-key-file, not in the URL"),
        ("http://host/?x=1", "--server http://host/?x=1: a server's URL has no query or fragment"),
        ("not a url", "--server not a url: "),
    ];
    for (url, message) in bad {
        let error = Servers::new(&urls(&[url]), None).err().unwrap().to_string();
        assert!(error.starts_with(message), "{url}: {error}");
    }
    assert_eq!(Servers::new(&[], None).err().unwrap().to_string(), "no --server given");
    let newline = Servers::new(&urls(&["http://h/"]), Some("a\nb")).err().unwrap().to_string();
    assert_eq!(newline, "the API key holds characters an HTTP header cannot carry");
}

#[test]
fn the_key_is_the_files_first_line_that_is_not_a_comment() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("key");
    std::fs::write(&file, "# for the eval server\n\n  key-0123456789abcdef  \nsecond\n").unwrap();
    assert_eq!(read_key(&file).unwrap(), "key-0123456789abcdef");
    std::fs::write(&file, "# none\n\n").unwrap();
    assert!(read_key(&file).unwrap_err().to_string().ends_with("the file holds no key"));
    assert!(read_key(&dir.path().join("missing")).unwrap_err().to_string().starts_with("--api-key-file "));
}

#[test]
fn a_workload_is_served_by_its_file_stem() {
    assert_eq!(served_name("examples/review/review.sr"), "review");
    assert_eq!(served_name("flows.yaml"), "flows");
    assert_eq!(served_name("review"), "review");
}

/// How a hostile server answers a request line.
type Answer = fn(&str) -> String;

/// A server that answers each request by its request line from `answer`
/// (raw HTTP, connection closed after it); its URL.
async fn hostile(answer: Answer) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && socket.read(&mut byte).await.is_ok_and(|n| n == 1) {
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).into_owned();
                let length = head
                    .lines()
                    .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string()))
                    .and_then(|v| v.parse::<usize>().ok())
                    .unwrap_or(0);
                let mut body = vec![0u8; length];
                let _ = socket.read_exact(&mut body).await;
                let line = head.lines().next().unwrap_or("").to_string();
                let _ = socket.write_all(answer(&line).as_bytes()).await;
            });
        }
    });
    url
}

fn http(status: &str, content_type: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn json_ok(body: &str) -> String {
    http("200 OK", "application/json", body)
}

/// `GET /v1/workloads`' answer: workload `helper` with one entry, `entry`.
fn workloads(entry: &str) -> String {
    let workload = sr_api::Workload {
        name: "helper".to_string(),
        entry: None,
        entries: vec![sr_api::EntryPoint {
            name: entry.to_string(),
            kind: sr_api::EntryKind::Flow,
            input: "prompt".to_string(),
        }],
        input: sr_api::InputHelp { prompt: String::new(), input: String::new() },
        graph: sr_api::Graph::default(),
        diagnostics: Vec::new(),
    };
    serde_json::to_string(&sr_api::WorkloadList { workloads: vec![workload] }).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hostile_server_is_a_clear_problem_before_anything_runs() {
    let table: [(Answer, &str); 7] = [
        (
            |_| json_ok("not json"),
            ": its answer to /v1/workloads is not what API v1 answers: expected ident at line 1 column 2 (200 OK)",
        ),
        (|_| String::new(), "cannot reach the server at "),
        (|_| http("401 Unauthorized", "application/json", "{}"), ": the server refused the API key (401 Unauthorized)"),
        (
            |_| {
                http(
                    "500 Internal Server Error",
                    "application/json",
                    r#"{"error": {"code": "store", "message": "down"}}"#,
                )
            },
            ": store: down (500 Internal Server Error)",
        ),
        (|_| http("502 Bad Gateway", "text/html", "<html>"), ": <html> (502 Bad Gateway)"),
        (
            |_| json_ok(r#"{"workloads": []}"#),
            ": the server serves no workload named `helper` (for w/helper.sr); it serves: nothing",
        ),
        (|_| json_ok(&workloads("other")), ": the server's workload `helper` has no entry `main`; its entries: other"),
    ];
    for (answer, expected) in table {
        let url = hostile(answer).await;
        let servers = Servers::new(std::slice::from_ref(&url), None).ok().unwrap();
        let problems = servers.check(&[("w/helper.sr".to_string(), Some("main".to_string()))]).await;
        assert_eq!(problems.len(), 1, "{expected}: {problems:?}");
        assert!(problems[0].contains(expected), "{expected}: {problems:?}");
    }
}

/// One case run on a server that answers with `answer`: its error.
async fn run_error(answer: Answer) -> Option<String> {
    let url = hostile(answer).await;
    let servers = Servers::new(&[url], None).ok().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let events_file = dir.path().join("events.jsonl");
    let ask = Ask { workload: "helper.sr", entry: None, model: None, prompt: "hi", events_file: &events_file };
    let ran = tokio::time::timeout(Duration::from_secs(30), servers.run(&ask)).await.expect("the run did not end");
    ran.error
}

fn sse(body: &str) -> String {
    http("200 OK", "text/event-stream", body)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hostile_server_fails_the_case_with_a_reason_never_a_hang() {
    let table: [(Answer, &str); 6] = [
        (
            |_| http("409 Conflict", "application/json", r#"{"error": {"code": "session_busy", "message": "busy"}}"#),
            ": session_busy: busy (409 Conflict)",
        ),
        (|_| json_ok("{}"), ": its answer to /v1/runs is not what API v1 answers: missing field `id`"),
        (
            |line| match line {
                l if l.starts_with("POST") => json_ok(r#"{"id": "r1", "status": "queued"}"#),
                l if l.contains("/events") => sse("id: 1\ndata: {not json\n\n"),
                _ => json_ok(r#"{"id": "r1", "session": "s1", "workload": "helper", "status": "running"}"#),
            },
            ": an event is not JSON",
        ),
        (
            |line| match line {
                l if l.starts_with("POST") => json_ok(r#"{"id": "r1", "status": "queued"}"#),
                l if l.contains("/events") => sse("id: 1\ndata: {\"type\": \"run_started\"}\n\n"),
                _ => json_ok(r#"{"id": "r1", "session": "s1", "workload": "helper", "status": "running"}"#),
            },
            ": an event has no `seq`",
        ),
        // The stream ends while the run is still running, every time.
        (
            |line| match line {
                l if l.starts_with("POST") => json_ok(r#"{"id": "r1", "status": "queued"}"#),
                l if l.contains("/events") => sse(""),
                _ => json_ok(r#"{"id": "r1", "session": "s1", "workload": "helper", "status": "running"}"#),
            },
            ": the run's event stream broke 5 times: it kept ending before the run did",
        ),
        (
            |line| match line {
                l if l.starts_with("POST") => json_ok(r#"{"id": "r1", "status": "queued"}"#),
                l if l.contains("/events") => sse(""),
                _ => json_ok(
                    r#"{"id": "r1", "session": "s1", "workload": "helper", "status": "failed", "error": "the model is gone"}"#,
                ),
            },
            "the model is gone",
        ),
    ];
    for (answer, expected) in table {
        let error = run_error(answer).await.unwrap_or_default();
        assert!(error.contains(expected), "{expected}: {error}");
    }
}
