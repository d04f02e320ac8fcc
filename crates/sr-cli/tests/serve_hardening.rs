//! `sr serve` against what a browser page of another origin, a DNS-rebound
//! name, an idle or slow client and a greedy one can do (issue #43): every
//! write route from the router's own table (`sr_serve::route_table`) under
//! every foreign content type and origin, every route under a foreign `Host`,
//! the header timeout, the per-client connection cap, time travel off the
//! async workers, the session quota, and the smaller items (`--cors-origin
//! '*'`, `bearer` in lower case, no server path in a client's error).
#![allow(clippy::unwrap_used)]

mod serving;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use serving::{Serve, temp};
use sr_llm::mock::{MockReply, MockServer};

const PAUSING: &str = include_str!("fixtures/pausing.sr");

const GREET: &str = r#"model main = openai/gpt-4o-mini
prompt greet_prompt: """Greet ${input_prompt}."""
flow main:
    $greeting = call llm greet_prompt
    return $greeting
"#;

fn addr(serve: &Serve) -> SocketAddr {
    serve.base().strip_prefix("http://").unwrap().parse().unwrap()
}

/// One request on a fresh connection (`Connection: close`): its status and body.
fn raw(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let (status, _, body) = raw_answer(addr, method, path, headers, body);
    (status, body)
}

/// [`raw`] with the answer's head too.
fn raw_answer(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (status, head.to_ascii_lowercase(), body.to_string())
}

/// The route's path with its parameters filled in.
fn filled(path: &str, run: &str) -> String {
    path.replace("{id}", run).replace("{seq}", "1").replace("{workload}", "reply")
}

/// A body that would change something on each write route (a route without
/// one fails the test: a new write route must be added here).
fn harmful_body(path: &str) -> Value {
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "from evil"}]}}});
    match path {
        "/v1/sessions" => json!({"id": "evil-session"}),
        "/v1/runs" => json!({"workload": "reply", "prompt": "from evil"}),
        "/v1/runs/{id}/cancel" => json!({}),
        "/v1/runs/{id}/input" => json!({"text": "approved by evil"}),
        "/v1/runs/{id}/fork" => json!({"at": 1}),
        "/a2a" | "/a2a/{workload}" => send,
        other => panic!("the write route {other} has no body in this test: add one"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_page_of_another_origin_or_a_rebound_host_starts_nothing_and_reads_nothing() {
    let dir = temp("origin", &[("reply.sr", PAUSING)]);
    let mock = MockServer::start().await;
    mock.push(MockReply::text("Draft: thanks."));
    let cors = "http://localhost:5173";
    let args = ["reply.sr", "--cors-origin", cors, "--public-url", "https://agents.example.com/"];
    let serve = Serve::start(&dir, &mock, &args).await;
    let run = serve.post("/v1/runs", json!({"workload": "reply", "prompt": "a mail", "wait": true})).await;
    assert_eq!(run.1["status"], "paused", "{}", run.1);
    let id = run.1["id"].as_str().unwrap().to_string();
    let addr = addr(&serve);
    let own = format!("http://127.0.0.1:{}", addr.port());
    let host = format!("127.0.0.1:{}", addr.port());
    let routes = sr_serve::route_table();
    let writes: Vec<&str> = routes.iter().filter(|(m, _)| m == "POST").map(|(_, p)| *p).collect();
    assert!(writes.len() >= 7, "{routes:?}");

    // Writes: every foreign content type from every origin, and JSON from a foreign origin.
    let types = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""];
    let origins = ["", "http://evil.test", "null", own.as_str(), cors, "https://agents.example.com"];
    let mut cells = 0;
    for path in &writes {
        let body = harmful_body(path).to_string();
        let target = filled(path, &id);
        for content_type in types.iter().chain(["application/json"].iter()) {
            for origin in origins {
                let foreign = ["http://evil.test", "null"].contains(&origin);
                let expected = match (foreign, *content_type == "application/json") {
                    (true, _) => 403,
                    (false, false) => 415,
                    (false, true) => continue,
                };
                let mut headers = vec![("Host", host.as_str())];
                headers.extend(
                    [("Content-Type", *content_type), ("Origin", origin)].into_iter().filter(|h| !h.1.is_empty()),
                );
                let (status, answer) = raw(addr, "POST", &target, &headers, &body);
                assert_eq!(status, expected, "POST {target} {content_type:?} from {origin:?}: {answer}");
                cells += 1;
            }
        }
    }
    assert!(cells >= writes.len() * 26, "{cells}");
    // By effect: no run started, the paused run neither answered nor cancelled, no session made.
    let runs = serve.get("/v1/runs").await.1;
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1, "{runs}");
    assert_eq!(serve.get(&format!("/v1/runs/{id}")).await.1["status"], "paused");
    assert_eq!(serve.get("/v1/sessions/evil-session").await.0, 404);
    assert_eq!(mock.requests().len(), 1, "no model call was made for them");

    // Reads and writes under a name that is not the server's: 421, and nothing in the answer.
    for (method, path) in &routes {
        let target = filled(path, &id);
        for foreign in
            ["rebind.test", &format!("rebind.test:{}", addr.port()), &format!("localhost:{}", addr.port() + 1)]
        {
            let headers = [("Host", foreign), ("Content-Type", "application/json")];
            let (status, answer) = raw(addr, method, &target, &headers, "{}");
            assert_eq!(status, 421, "{method} {target} Host: {foreign}: {answer}");
            assert!(!answer.contains(&id) && !answer.contains("a mail"), "{answer}");
        }
    }
    // The server's own names, and --public-url's host, are answered.
    let transcript = format!("/v1/sessions/{}", run.1["session"].as_str().unwrap());
    for name in ["localhost", "127.0.0.1", "[::1]", "LocalHost"] {
        let named = format!("{name}:{}", addr.port());
        let (status, answer) = raw(addr, "GET", &transcript, &[("Host", &named)], "");
        assert_eq!(status, 200, "{named}: {answer}");
        assert!(answer.contains("a mail"), "{answer}");
    }
    assert_eq!(raw(addr, "GET", "/v1/workloads", &[("Host", "agents.example.com")], "").0, 200);
    // The agent card names the configured URL, whatever the request's Host or proxy headers say.
    let headers = [("Host", "agents.example.com"), ("X-Forwarded-Proto", "http"), ("X-Forwarded-Host", "evil.test")];
    let (status, card) = raw(addr, "GET", "/.well-known/agent-card.json", &headers, "");
    let card: Value = serde_json::from_str(&card).unwrap();
    assert_eq!((status, card["url"].clone()), (200, json!("https://agents.example.com/a2a")));

    // The server's own origin, a configured one and none pass with JSON: each makes its session.
    for (n, origin) in ["", own.as_str(), cors, "https://agents.example.com"].iter().enumerate() {
        let body = json!({"id": format!("s-{n}")}).to_string();
        let mut headers = vec![("Host", host.as_str()), ("Content-Type", "application/json; charset=utf-8")];
        headers.extend([("Origin", *origin)].into_iter().filter(|h| !h.1.is_empty()));
        let (status, answer) = raw(addr, "POST", "/v1/sessions", &headers, &body);
        assert_eq!(status, 201, "{origin:?}: {answer}");
        assert_eq!(serve.get(&format!("/v1/sessions/s-{n}")).await.0, 200);
    }
}

#[test]
fn a_wildcard_cors_origin_is_a_clear_start_error() {
    let dir = temp("cors-star", &[("greet.sr", GREET)]);
    for (args, message) in [
        (&["--cors-origin", "*"][..], "--cors-origin '*' is refused"),
        (&["--cors-origin", "localhost:3000"][..], "is not an origin"),
        (&["--public-url", "ftp://x"][..], "give http:// or https://"),
    ] {
        let mut all = vec!["serve", "greet.sr", "--state-dir", "state"];
        all.extend(args);
        let (code, _, stderr) = serving::sr_plain(&dir, &all);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(message) && !stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_bearer_scheme_is_matched_in_any_case() {
    let key = "key-0123456789abcdef";
    let dir = temp("bearer", &[("greet.sr", GREET), ("keys", &format!("{key}\n"))]);
    let mock = MockServer::start().await;
    let serve = Serve::start(&dir, &mock, &["greet.sr", "--api-key-file", "keys"]).await;
    let table = [
        (format!("Bearer {key}"), 200),
        (format!("bearer {key}"), 200),
        (format!("BEARER {key}"), 200),
        (format!("bEaReR   {key}"), 200),
        (format!("Bearer {}", key.to_uppercase()), 401),
        (format!("Basic {key}"), 401),
        (format!("Bearer{key}"), 401),
        (key.to_string(), 401),
    ];
    for (value, status) in table {
        let got = serve.get_with("/v1/workloads", "authorization", &value).await;
        assert_eq!(got.0, status, "{value}: {}", got.1);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_clients_error_names_no_path_of_the_server_and_the_log_does() {
    let dir = temp("paths", &[("greet.sr", GREET)]);
    let mock = MockServer::start().await;
    mock.push(MockReply::text("Hello, Ada."));
    let serve = Serve::start(&dir, &mock, &["greet.sr"]).await;
    let run = serve.post("/v1/runs", json!({"workload": "greet", "prompt": "Ada", "wait": true})).await;
    assert_eq!(run.1["status"], "done", "{}", run.1);
    let id = run.1["id"].as_str().unwrap();
    let state = std::fs::canonicalize(dir.join("state")).unwrap();
    // The journal files are a cache: travel reads the store's.
    std::fs::remove_dir_all(state.join("journal")).unwrap();
    assert_eq!(serve.get(&format!("/v1/runs/{id}/at/1")).await.0, 200);
    // Where travels replay, a file: the scratch directory cannot be made.
    let _ = std::fs::remove_dir_all(state.join("travel"));
    std::fs::write(state.join("travel"), "not a directory").unwrap();
    let (status, answer) = serve.get(&format!("/v1/runs/{id}/at/1")).await;
    assert_eq!((status, answer["error"]["code"].clone()), (500, json!("replay_failed")), "{answer}");
    let text = answer.to_string();
    assert!(text.contains("cannot create the replay's scratch directory"), "{text}");
    assert!(!text.contains(&state.display().to_string()) && !text.contains("travel/"), "{text}");
    // The log is read from the server's stderr as it comes: give it a moment.
    let path = state.join("travel").display().to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !serve.log().contains(&path) && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(serve.log().contains(&path), "the log keeps the path");
}

/// Connects from `local` (another loopback address: the cap is per client address).
async fn connect_from(local: &str, to: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{local}:0").parse().unwrap()).unwrap();
    let stream = socket.connect(to).await.unwrap().into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream
}

/// Whether the server closed `stream` within `time` (it reads end of file
/// or a reset).
fn closed_within(mut stream: &TcpStream, time: Duration) -> bool {
    stream.set_read_timeout(Some(time)).unwrap();
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return false;
            }
            Err(_) => return true,
        }
    }
}

/// The 95th percentile of `n` `/healthz` round trips, each on a new connection.
fn healthz_p95(addr: SocketAddr, n: usize) -> Duration {
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let started = Instant::now();
            let (status, _) = raw(addr, "GET", "/healthz", &[("Host", &addr.to_string())], "");
            assert_eq!(status, 200);
            started.elapsed()
        })
        .collect();
    times.sort();
    times[(n * 95 / 100).min(n - 1)]
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_and_idle_connections_are_closed_and_one_client_cannot_take_every_descriptor() {
    let dir = temp("loris", &[("greet.sr", GREET)]);
    let mock = MockServer::start().await;
    let args = ["greet.sr", "--header-timeout", "2", "--max-connections-per-client", "40"];
    let serve = Serve::start(&dir, &mock, &args).await;
    let addr = addr(&serve);
    // The server gets 256 descriptors: without the cap, the client below takes them all.
    let limit = libc::rlimit { rlim_cur: 256, rlim_max: 256 };
    // SAFETY: setting the limit of our own child process.
    assert_eq!(unsafe { libc::prlimit(serve.pid() as i32, libc::RLIMIT_NOFILE, &limit, std::ptr::null_mut()) }, 0);

    let started = Instant::now();
    let mut loris: Vec<TcpStream> = Vec::new();
    for _ in 0..400 {
        let mut stream = connect_from("127.0.0.2", addr).await;
        let _ = stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: x");
        loris.push(stream);
    }
    // Past the cap, connections are closed as they are accepted.
    let refused = loris.iter().skip(40).filter(|s| closed_within(s, Duration::from_millis(200))).count();
    assert!(refused >= 350, "{refused} of the 360 past the cap were closed");
    // Another client is answered at once while those are open.
    let p95 = healthz_p95(addr, 40);
    assert!(p95 < Duration::from_millis(250), "/healthz p95 {p95:?} beside 40 slow-loris connections");
    eprintln!("/healthz p95 beside the slow-loris connections: {p95:?}");
    // A keep-alive connection that sent one request, then idles.
    let mut idle = TcpStream::connect(addr).unwrap();
    idle.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes()).unwrap();
    let mut first = [0u8; 512];
    assert!(idle.read(&mut first).unwrap() > 0);
    // The header timeout (2 s) closes the slow ones and the idle one.
    let deadline = started + Duration::from_secs(5);
    let left = || deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(10));
    let open = loris.iter().take(40).filter(|s| !closed_within(s, left())).count();
    assert_eq!(open, 0, "every slow connection was closed");
    assert!(closed_within(&idle, Duration::from_secs(4)), "the idle connection was closed");
    let (status, _) = raw(addr, "GET", "/healthz", &[("Host", &addr.to_string())], "");
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn live_events_on_a_reused_connection_arrive_as_they_are_made() {
    let dir = temp("nodelay", &[("greet.sr", GREET)]);
    let mock = MockServer::start().await;
    // Forty streamed pieces of a reply, 10 ms apart: forty events in quick succession.
    mock.push(MockReply::chunks((0..40).map(|i| format!("w{i} "))).chunk_delay(Duration::from_millis(10)));
    let serve = Serve::start(&dir, &mock, &["greet.sr"]).await;
    let addr = addr(&serve);
    // One connection: a first request, then the run's live event stream on it.
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    stream.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes()).unwrap();
    let mut buffer = [0u8; 65536];
    assert!(stream.read(&mut buffer).unwrap() > 0);
    let run = serve.post("/v1/runs", json!({"workload": "greet", "prompt": "Ada"})).await;
    let id = run.1["id"].as_str().unwrap();
    stream.write_all(format!("GET /v1/runs/{id}/events HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes()).unwrap();
    // When each piece of the reply arrives.
    let mut text = String::new();
    let mut arrivals = Vec::new();
    while !text.ends_with("0\r\n\r\n") {
        let n = stream.read(&mut buffer).unwrap();
        assert!(n > 0, "closed early");
        let chunk = String::from_utf8_lossy(&buffer[..n]).to_string();
        let pieces = chunk.matches("\"text_delta\"").count();
        arrivals.extend(std::iter::repeat_n(Instant::now(), pieces));
        text.push_str(&chunk);
    }
    assert!(arrivals.len() >= 30, "{} pieces seen: {text}", arrivals.len());
    // Each piece leaves when it is made (TCP_NODELAY: a small write does not wait for
    // the ACK of the one before, which a client may delay by ~40 ms).
    let mut gaps: Vec<Duration> = arrivals.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort();
    let p90 = gaps[gaps.len() * 9 / 10];
    eprintln!("live events on a reused connection: gap median {:?}, p90 {p90:?}", gaps[gaps.len() / 2]);
    assert!(p90 < Duration::from_millis(30), "p90 gap {p90:?} between pieces sent 10 ms apart");
}

/// A flow of many steps: replaying it to its end takes a while.
const LONG: &str = r#"flow main:
    $n = 0
    $text = ""
    loop max 1500 do
        $n = $n + 1
        $text = "${text}0123456789"
    end
    return $n
"#;

fn high_water_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn time_travel_replays_off_the_async_workers_at_most_two_at_once() {
    let dir = temp("travel-load", &[("long.sr", LONG)]);
    let mock = MockServer::start().await;
    let serve = Serve::start(&dir, &mock, &["long.sr"]).await;
    let run = serve.post("/v1/runs", json!({"workload": "long", "prompt": "go", "wait": true})).await;
    assert_eq!(run.1["status"], "done", "{}", run.1);
    let id = run.1["id"].as_str().unwrap().to_string();
    let last = serving::events_of(&serve.get_text(&format!("/v1/runs/{id}/events")).await).len();
    let addr = addr(&serve);
    let one = Instant::now();
    let (status, _) = raw(addr, "GET", &format!("/v1/runs/{id}/at/{}", last - 1), &[("Host", &addr.to_string())], "");
    assert_eq!(status, 200);
    let replay = one.elapsed();
    let before = high_water_kib(serve.pid());

    let path = format!("/v1/runs/{id}/at/{}", last - 1);
    let travels: Vec<_> = (0..12)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || raw_answer(addr, "GET", &path, &[("Host", &addr.to_string())], ""))
        })
        .collect();
    std::thread::sleep(Duration::from_millis(50));
    let p95 = healthz_p95(addr, 40);
    let answers: Vec<(u16, String, String)> = travels.into_iter().map(|t| t.join().unwrap()).collect();
    let served = answers.iter().filter(|(s, _, _)| *s == 200).count();
    let busy: Vec<&(u16, String, String)> = answers.iter().filter(|(s, _, _)| *s == 503).collect();
    let after = high_water_kib(serve.pid());
    eprintln!(
        "one replay {replay:?}; 12 at once: {served} served, {} busy; /healthz p95 {p95:?}; \
         peak RSS {before} -> {after} KiB",
        busy.len()
    );
    assert_eq!(served + busy.len(), 12, "{answers:?}");
    assert!(!busy.is_empty() && served >= 2, "at most two replay at once, the rest are told to retry");
    for (_, head, body) in busy {
        assert!(head.contains("retry-after: 1") && body.contains("\"busy\""), "{head}{body}");
    }
    assert!(p95 < Duration::from_millis(250), "/healthz p95 {p95:?} while travels replay");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_past_its_quota_is_refused_and_stores_nothing_more() {
    let dir = temp("quota", &[("reply.sr", PAUSING)]);
    let mock = MockServer::start().await;
    mock.push(MockReply::text("Draft."));
    let serve = Serve::start(&dir, &mock, &["reply.sr", "--session-quota-mib", "1"]).await;
    let session = serve.post("/v1/sessions", json!({})).await.1["id"].as_str().unwrap().to_string();
    let big = "x".repeat(600 << 10);
    let first =
        serve.post("/v1/runs", json!({"workload": "reply", "prompt": big, "session": session, "wait": true})).await;
    assert_eq!(first.1["status"], "paused", "{}", first.1);
    let id = first.1["id"].as_str().unwrap();
    // A second run of the same size, and an answer of that size, pass the quota.
    let body = json!({"workload": "reply", "prompt": big, "session": session, "on_conflict": "enqueue"});
    let second = serve.post("/v1/runs", body).await;
    assert_eq!((second.0, second.1["error"]["code"].clone()), (413, json!("session_full")), "{}", second.1);
    assert!(second.1["error"]["message"].as_str().unwrap().contains("at most 1048576"));
    let answer = serve.post(&format!("/v1/runs/{id}/input"), json!({"text": big})).await;
    assert_eq!((answer.0, answer.1["error"]["code"].clone()), (413, json!("session_full")), "{}", answer.1);
    // Nothing was stored: one run, still waiting; another session takes the same input.
    let runs = serve.get(&format!("/v1/sessions/{session}")).await.1;
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1, "{runs}");
    assert_eq!(serve.get(&format!("/v1/runs/{id}")).await.1["status"], "paused");
    let elsewhere = serve.post("/v1/runs", json!({"workload": "reply", "prompt": big})).await;
    assert_eq!(elsewhere.0, 202, "{}", elsewhere.1);
}
