//! One suite, both backends: every case runs on a fresh SQLite file and on a
//! fresh database of a PostgreSQL server the test starts (`sr_testing::postgres`).
//! Cases about leases expiring or several replicas at once run where the
//! backend has them (PostgreSQL).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

use super::*;

/// Where a case's stores live.
enum Fixture {
    Sqlite(PathBuf),
    Postgres(String),
}

impl Fixture {
    /// A store of this fixture, as replica `replica` with a lease of `lease`.
    async fn store(&self, replica: &str, lease: Duration) -> Store {
        match self {
            Fixture::Sqlite(path) => Store::open(path).unwrap(),
            Fixture::Postgres(url) => Store::connect(url, replica, lease).await.unwrap(),
        }
    }

    fn shared(&self) -> bool {
        matches!(self, Fixture::Postgres(_))
    }
}

const LEASE: Duration = Duration::from_secs(30);

fn new_run<'a>(id: &'a str, session: &'a str) -> NewRun<'a> {
    NewRun { id, session, workload: "w", entry: None, message: "hi", model: None, a2a: false }
}

/// Makes run `id` claimable again as if its claimer had died: its lease
/// expires (PostgreSQL), or it is queued again as a restart does (SQLite).
async fn expire(store: &Store, id: &str) {
    let sql = if store.is_shared() {
        format!("UPDATE runs SET lease_until = now() - interval '1 second' WHERE id = '{id}'")
    } else {
        format!("UPDATE runs SET status = 'queued' WHERE id = '{id}'")
    };
    assert_eq!(store.raw(&sql).await.unwrap(), 1);
}

async fn one_run_per_session_in_order(fixture: Fixture) {
    let store = fixture.store("a", LEASE).await;
    store.submit(&new_run("a", "s"), false).await.unwrap();
    store.submit(&new_run("b", "s"), false).await.unwrap();
    store.submit(&new_run("c", "t"), false).await.unwrap();
    assert!(matches!(store.submit(&new_run("d", "s"), true).await, Err(Refusal::SessionBusy(id)) if id == "a"));
    let (a, more) = store.claim_next().await.unwrap();
    assert_eq!((a.unwrap().id.as_str(), more), ("a", true), "c was claimable too");
    // b waits for a; c's session is free.
    let (c, more) = store.claim_next().await.unwrap();
    assert_eq!(c.unwrap().id, "c");
    assert_eq!(more, !fixture.shared(), "nothing else was (PostgreSQL tells; SQLite says yes)");
    assert!(store.claim().await.unwrap().is_none());
    // The index refuses a second active run of a session, whoever asks.
    let second = store.raw("UPDATE runs SET status = 'running' WHERE id = 'b'").await;
    assert!(second.is_err(), "{second:?}");
    let a = store.run("a").await.unwrap().unwrap();
    let queued = store.end("a", a.epoch, &Ending::of(RunStatus::Paused, None, None)).await.unwrap();
    assert!(queued, "b waits in a's session");
    assert!(store.claim().await.unwrap().is_none(), "a paused run holds its session");
    assert!(store.answer("a", "yes").await.unwrap());
    let again = store.claim().await.unwrap().unwrap();
    assert_eq!((again.id.as_str(), again.pending_input.as_deref(), again.epoch), ("a", Some("yes"), a.epoch + 1));
    assert!(
        !store.finish("a", RunStatus::Queued, &Ending::of(RunStatus::Cancelled, None, None)).await.unwrap(),
        "only from the status it is in"
    );
    store.end("a", again.epoch, &Ending::of(RunStatus::Done, Some(&Value::from(1)), None)).await.unwrap();
    assert_eq!(store.run("a").await.unwrap().unwrap().result, Some(Value::from(1)));
    assert_eq!(store.claim().await.unwrap().unwrap().id, "b");
    let counts: Vec<_> = store.counts().await.unwrap().into_iter().filter(|(_, n)| *n > 0).collect();
    assert_eq!(counts, [(RunStatus::Running, 2), (RunStatus::Done, 1)]);
    let runs: Vec<String> = store.session_runs("s").await.unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(runs, ["a", "b"]);
    let recent: Vec<String> =
        store.recent_runs(Some(RunStatus::Running), 10).await.unwrap().into_iter().map(|r| r.id).collect();
    assert_eq!(recent, ["c", "b"]);
    let c = store.run("c").await.unwrap().unwrap();
    assert!(!store.end("c", c.epoch, &Ending::of(RunStatus::Done, None, None)).await.unwrap(), "t has no run queued");
}

/// A run in doubt holds its session, shows its question, takes a decision
/// (only then) and is claimed again with it.
async fn a_run_in_doubt_waits_for_its_decision(fixture: Fixture) {
    let store = fixture.store("a", LEASE).await;
    store.submit(&new_run("a", "s"), false).await.unwrap();
    let a = store.claim().await.unwrap().unwrap();
    assert!(!store.decide("a", "retry").await.unwrap(), "a running run took a decision");
    let question = serde_json::json!({"tool": "pay", "args": {}, "idempotency_key": "k"});
    store.end("a", a.epoch, &Ending::of(RunStatus::InDoubt, Some(&question), Some("in doubt"))).await.unwrap();
    let row = store.run("a").await.unwrap().unwrap();
    assert_eq!((row.question.as_ref(), row.result.as_ref()), (Some(&question), None));
    assert!(matches!(store.submit(&new_run("b", "s"), true).await, Err(Refusal::SessionBusy(id)) if id == "a"));
    assert!(store.claim().await.unwrap().is_none(), "a run in doubt was claimed without a decision");
    assert!(!store.answer("a", "yes").await.unwrap(), "a run in doubt took a human's answer");
    assert!(store.decide("a", "skip").await.unwrap());
    assert!(!store.decide("a", "retry").await.unwrap(), "decided twice");
    let again = store.claim().await.unwrap().unwrap();
    assert_eq!((again.id.as_str(), again.pending_input.as_deref(), again.question), ("a", Some("skip"), None));
}

/// Every write of a claim that was superseded is refused, and the ids of a
/// run's events go on from the last one stored, whoever writes them.
async fn a_superseded_claim_writes_nothing(fixture: Fixture) {
    let first = fixture.store("first", LEASE).await;
    let second = fixture.store("second", LEASE).await;
    first.submit(&new_run("r", "s"), false).await.unwrap();
    let claim = first.claim().await.unwrap().unwrap();
    first.write_batch("r", claim.epoch, Some(&opening("s", 1, None, &["meta"])), &[]).await.unwrap();
    first.append_event("r", claim.epoch, 1, r#"{"type":"run_started"}"#).await.unwrap();
    first.append_event("r", claim.epoch, 2, r#"{"type":"text_delta"}"#).await.unwrap();
    assert!(first.heartbeat(&[("r".to_string(), claim.epoch)]).await.unwrap().is_empty());
    expire(&first, "r").await;
    let taken = second.claim().await.unwrap().unwrap();
    assert_eq!((taken.id.as_str(), taken.epoch, taken.attempt_run), ("r", claim.epoch + 1, Some(1)));
    let old = claim.epoch;
    let fenced = |result: Result<()>| matches!(result, Err(StoreError::Fenced { epoch, .. }) if epoch == old);
    assert!(fenced(first.append_event("r", old, 3, r#"{"type":"late"}"#).await));
    assert!(fenced(first.write_batch("r", old, Some(&opening("s", 2, None, &[])), &[]).await));
    assert!(fenced(first.write_batch("r", old, None, &[]).await), "the claim check refuses too");
    assert!(fenced(first.end("r", old, &Ending::of(RunStatus::Done, None, None)).await.map(drop)));
    assert_eq!(first.heartbeat(&[("r".to_string(), old)]).await.unwrap(), ["r"]);
    first.release("r", old).await.unwrap();
    assert!(
        second.heartbeat(&[("r".to_string(), taken.epoch)]).await.unwrap().is_empty(),
        "a stale release frees nothing"
    );
    assert_eq!(second.last_event("r").await.unwrap(), 2);
    second.append_event("r", taken.epoch, 3, r#"{"type":"step"}"#).await.unwrap();
    // An id is written once, whatever the epoch.
    assert!(second.append_event("r", taken.epoch, 3, r#"{"type":"step"}"#).await.is_err());
    second.end("r", taken.epoch, &Ending::of(RunStatus::Done, None, None)).await.unwrap();
    let events = second.events_after("r", 0, 10).await.unwrap();
    let ids: Vec<u64> = events.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, [1, 2, 3, 4], "the end adds its run_finished");
    assert!(events.iter().all(|(_, event)| !event.contains("late")));
    assert!(second.events_after("r", u64::MAX, 10).await.unwrap().is_empty());
}

/// A writer keeps appending while another claim takes the run over: the
/// ids stay one sequence with no gap and no duplicate, and no event of the
/// old claim follows one of the new.
async fn a_takeover_mid_stream_leaves_no_gap(fixture: Fixture) {
    let first = fixture.store("first", LEASE).await;
    let second = fixture.store("second", LEASE).await;
    first.submit(&new_run("r", "s"), false).await.unwrap();
    let claim = first.claim().await.unwrap().unwrap();
    let writer = {
        let first = first.clone();
        tokio::spawn(async move {
            let mut id = 1;
            while first.append_event("r", claim.epoch, id, r#"{"type":"step"}"#).await.is_ok() {
                id += 1;
            }
            id - 1
        })
    };
    while first.last_event("r").await.unwrap() < 20 {
        tokio::task::yield_now().await;
    }
    expire(&second, "r").await;
    // The claim skips the run while a write holds its row: it tries again,
    // as the dispatcher does.
    let taken = loop {
        if let Some(run) = second.claim().await.unwrap() {
            break run;
        }
    };
    let last = second.last_event("r").await.unwrap();
    for id in last + 1..=last + 5 {
        second.append_event("r", taken.epoch, id, r#"{"type":"step"}"#).await.unwrap();
    }
    let written_by_first = writer.await.unwrap();
    assert_eq!(written_by_first, last, "the first writer stopped at the takeover");
    // One more than should be there: however many the first wrote before the takeover (over a
    // thousand on a loaded machine), a stray one after it would show.
    let read = last as usize + 6;
    let ids: Vec<u64> = second.events_after("r", 0, read).await.unwrap().into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, (1..=last + 5).collect::<Vec<_>>());
}

/// The run's `run_finished` events, as stored, with the status each says.
async fn finished_events(store: &Store, run: &str) -> Vec<(u64, String)> {
    let events = store.events_after(run, 0, 1000).await.unwrap();
    events
        .into_iter()
        .filter_map(|(id, text)| {
            let event: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(event["seq"], id, "an event's seq is its id");
            (event["type"] == "run_finished").then(|| (id, event["status"].as_str().unwrap().to_string()))
        })
        .collect()
}

/// Every way a run stops writes its status and its `run_finished` (last,
/// saying that status in the runtime's words) at once; a write refused
/// (fenced, or a cancel of a run that moved on) writes neither.
async fn a_runs_end_and_its_run_finished_are_one_write(fixture: Fixture) {
    let store = fixture.store("a", LEASE).await;
    let outcomes = [
        (RunStatus::Done, "completed"),
        (RunStatus::Failed, "failed"),
        (RunStatus::Cancelled, "cancelled"),
        (RunStatus::Paused, "paused"),
        (RunStatus::InDoubt, "paused"),
    ];
    for (n, (status, said)) in outcomes.into_iter().enumerate() {
        let id = format!("end-{n}");
        store.submit(&new_run(&id, &id), false).await.unwrap();
        let run = store.claim().await.unwrap().unwrap();
        store.append_event(&id, run.epoch, 1, r#"{"seq":1,"type":"run_started"}"#).await.unwrap();
        assert!(finished_events(&store, &id).await.is_empty());
        let refused = store.end(&id, run.epoch + 1, &Ending::of(status, None, None)).await;
        assert!(matches!(refused, Err(StoreError::Fenced { .. })));
        assert!(finished_events(&store, &id).await.is_empty(), "{status}: a refused end writes no run_finished");
        assert_eq!(store.run(&id).await.unwrap().unwrap().status, RunStatus::Running);
        store.end(&id, run.epoch, &Ending::of(status, None, Some("why"))).await.unwrap();
        assert_eq!(store.run(&id).await.unwrap().unwrap().status, status);
        assert_eq!(finished_events(&store, &id).await, [(2, said.to_string())], "{status}");
        assert_eq!(store.last_event(&id).await.unwrap(), 2);
    }
    // A cancel of a run that is not running (queued here) ends it the same way.
    store.submit(&new_run("queued", "queued"), false).await.unwrap();
    let cancel = Ending::of(RunStatus::Cancelled, None, Some("cancelled by request"));
    assert!(!store.finish("queued", RunStatus::Paused, &cancel).await.unwrap());
    assert!(finished_events(&store, "queued").await.is_empty());
    assert!(store.finish("queued", RunStatus::Queued, &cancel).await.unwrap());
    assert_eq!(store.run("queued").await.unwrap().unwrap().status, RunStatus::Cancelled);
    assert_eq!(finished_events(&store, "queued").await, [(1, "cancelled".to_string())]);
}

/// Replicas claiming at once: each run runs once, and a session's runs in
/// the order they were submitted, never two at a time.
async fn replicas_claim_each_run_once_in_order(fixture: Fixture) {
    let replicas = if fixture.shared() { 4 } else { 1 };
    let mut stores = Vec::new();
    for n in 0..replicas {
        stores.push(fixture.store(&format!("replica-{n}"), LEASE).await);
    }
    let ids: Vec<(String, String)> = (0..60).map(|n| (format!("run-{n:02}"), format!("session-{}", n % 6))).collect();
    for (id, session) in &ids {
        stores[0].submit(&new_run(id, session), false).await.unwrap();
    }
    let done = std::sync::Arc::new(AtomicUsize::new(0));
    let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut workers = Vec::new();
    for store in &stores {
        for _ in 0..3 {
            let (store, done, order) = (store.clone(), done.clone(), order.clone());
            workers.push(tokio::spawn(async move {
                while done.load(Ordering::SeqCst) < 60 {
                    match store.claim().await.unwrap() {
                        Some(run) => {
                            order.lock().unwrap().push((run.session.clone(), run.id.clone()));
                            tokio::task::yield_now().await;
                            store.end(&run.id, run.epoch, &Ending::of(RunStatus::Done, None, None)).await.unwrap();
                            done.fetch_add(1, Ordering::SeqCst);
                        }
                        None => tokio::time::sleep(Duration::from_millis(1)).await,
                    }
                }
            }));
        }
    }
    for worker in workers {
        tokio::time::timeout(Duration::from_secs(120), worker).await.unwrap().unwrap();
    }
    let order = order.lock().unwrap();
    assert_eq!(order.len(), 60, "each run claimed once");
    let mut by_session: HashMap<&str, Vec<&str>> = HashMap::new();
    for (session, id) in order.iter() {
        by_session.entry(session).or_default().push(id);
    }
    for (session, claimed) in by_session {
        let submitted: Vec<&str> = ids.iter().filter(|(_, s)| s == session).map(|(id, _)| id.as_str()).collect();
        assert_eq!(claimed, submitted, "session {session}");
    }
}

/// A lease that is kept is not taken; one that expires is, by any replica,
/// and a released one at once.
async fn leases_expire_and_are_taken_over(fixture: Fixture) {
    let short = Duration::from_millis(600);
    let first = fixture.store("first", short).await;
    let second = fixture.store("second", short).await;
    first.submit(&new_run("r", "s"), false).await.unwrap();
    let claim = first.claim().await.unwrap().unwrap();
    for _ in 0..4 {
        tokio::time::sleep(short / 3).await;
        assert!(first.heartbeat(&[("r".to_string(), claim.epoch)]).await.unwrap().is_empty());
        assert!(second.claim().await.unwrap().is_none(), "a kept lease is not taken");
    }
    tokio::time::sleep(short * 2).await;
    let taken = second.claim().await.unwrap().expect("an expired lease is taken over");
    assert_eq!(taken.epoch, claim.epoch + 1);
    assert_eq!(first.heartbeat(&[("r".to_string(), claim.epoch)]).await.unwrap(), ["r"]);
    second.release("r", taken.epoch).await.unwrap();
    let again = first.claim().await.unwrap().expect("a released claim is taken at once");
    assert_eq!(again.epoch, taken.epoch + 1);
}

/// Whether `wanted` arrives within 20 s.
async fn heard(notes: &mut mpsc::Receiver<Note>, wanted: Note) -> bool {
    tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(note) = notes.recv().await {
            if note == wanted {
                return;
            }
        }
    })
    .await
    .is_ok()
}

/// Replicas hear each other: a submission wakes them, an event names its run.
async fn notes_reach_other_replicas(fixture: Fixture) {
    let first = fixture.store("first", LEASE).await;
    let second = fixture.store("second", LEASE).await;
    let mut notes = second.listen().unwrap();
    // LISTEN is asked on a connection of its own: wait until it hears.
    let mut n = 0;
    loop {
        first.submit(&new_run(&format!("r{n}"), &format!("s{n}")), false).await.unwrap();
        if tokio::time::timeout(Duration::from_millis(500), heard(&mut notes, Note::Wake)).await.is_ok_and(|h| h) {
            break;
        }
        n += 1;
        assert!(n < 40, "no note was heard");
    }
    let run = first.claim().await.unwrap().unwrap();
    first.append_event(&run.id, run.epoch, 1, "{}").await.unwrap();
    assert!(heard(&mut notes, Note::Run(run.id.clone())).await);
    first.request_cancel(&run.id).await.unwrap();
    assert!(heard(&mut notes, Note::Cancel(run.id.clone())).await);
    first.end(&run.id, run.epoch, &Ending::of(RunStatus::Done, None, None)).await.unwrap();
    assert!(heard(&mut notes, Note::Status(run.id.clone())).await, "an end is a change of status");
}

/// Replicas starting at once migrate the database once.
async fn replicas_starting_at_once_migrate_once(fixture: Fixture) {
    let Fixture::Postgres(url) = &fixture else { unreachable!() };
    let starts = (0..6).map(|n| {
        let url = url.clone();
        tokio::spawn(async move { Store::connect(&url, &format!("r{n}"), LEASE).await.map(|_| ()) })
    });
    for start in starts.collect::<Vec<_>>() {
        start.await.unwrap().unwrap();
    }
    let store = fixture.store("last", LEASE).await;
    // One row per version.
    let versions = migrate::POSTGRES.len() as u64;
    assert_eq!(store.raw("UPDATE sr_serve_schema SET version = version").await.unwrap(), versions);
}

type Case = fn(Fixture) -> BoxFuture<'static, ()>;

macro_rules! cases {
    ($($name:ident),* $(,)?) => {
        &[$((stringify!($name), |fixture| Box::pin($name(fixture)))),*]
    };
}

/// The cases every backend passes.
const BOTH: &[(&str, Case)] = cases![
    one_run_per_session_in_order,
    a_run_in_doubt_waits_for_its_decision,
    a_superseded_claim_writes_nothing,
    a_takeover_mid_stream_leaves_no_gap,
    replicas_claim_each_run_once_in_order,
    a_runs_end_and_its_run_finished_are_one_write,
    a_sessions_record_is_kept_by_its_claims_only,
    an_attempt_without_effects_is_opened_by_its_end,
    a_steps_lines_and_events_are_one_batch,
    sessions_are_listed_newest_first_in_pages,
    the_plans_of_a_list_of_runs_are_one_read,
    a_runs_a2a_record_changes_one_after_another,
    a_runs_first_trace_id_is_kept,
];

/// Sessions come from the sessions table: one with no run is listed, every
/// page follows the last one's cursor with no gap and no repeat, the search
/// matches ids and workloads in any case, and a new run moves its session
/// first.
async fn sessions_are_listed_newest_first_in_pages(fixture: Fixture) {
    let store = fixture.store("a", LEASE).await;
    let submit = |id: &'static str, session: &'static str, workload: &'static str| {
        let store = &store;
        async move {
            let run = NewRun { id, session, workload, entry: None, message: "hi", model: None, a2a: false };
            store.submit(&run, false).await.unwrap();
            // Each its own millisecond: the order is the activity's.
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
    };
    store.create_session("empty").await.unwrap();
    tokio::time::sleep(Duration::from_millis(3)).await;
    submit("r1", "alpha", "Travel").await;
    submit("r2", "beta", "desk").await;
    submit("r3", "alpha", "desk").await;
    submit("r4", "gamma", "desk").await;
    let page =
        |q: Option<&str>, before: Option<(i64, String)>, limit| SessionPage { q: q.map(str::to_string), before, limit };
    let all = store.sessions(&page(None, None, 10)).await.unwrap();
    let ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["gamma", "alpha", "beta", "empty"]);
    let alpha = &all[1];
    assert_eq!((alpha.runs, alpha.workloads.clone()), (2, vec!["desk".to_string(), "Travel".to_string()]));
    let last = alpha.last.as_ref().unwrap();
    assert_eq!((last.id.as_str(), last.status, last.created_ms), ("r3", RunStatus::Queued, alpha.active_ms));
    assert_eq!((all[3].runs, all[3].last.clone(), all[3].workloads.len()), (0, None, 0), "a session with no run");

    // Pages of two, each after the previous one's last session.
    let mut paged = Vec::new();
    let mut before = None;
    loop {
        let rows = store.sessions(&page(None, before.clone(), 2)).await.unwrap();
        let Some(tail) = rows.last() else { break };
        before = Some((tail.active_ms, tail.id.clone()));
        paged.extend(rows.into_iter().map(|s| s.id));
    }
    assert_eq!(paged, ids);

    let found = |q| {
        let store = &store;
        async move {
            let rows = store.sessions(&page(Some(q), None, 10)).await.unwrap();
            rows.into_iter().map(|s| s.id).collect::<Vec<_>>()
        }
    };
    assert_eq!(found("travel").await, ["alpha"], "a workload's name, in any case");
    assert_eq!(found("mpt").await, ["empty"]);
    assert_eq!(found("desk").await, ["gamma", "alpha", "beta"]);
    assert_eq!(found("%").await, Vec::<String>::new(), "no pattern characters");

    submit("r5", "empty", "desk").await;
    let first = store.sessions(&page(None, None, 1)).await.unwrap();
    assert_eq!((first[0].id.as_str(), first[0].runs), ("empty", 1), "a new run makes its session the newest");
}

/// The lines that begin attempt `attempt` of session `session`.
fn opening(session: &str, attempt: i64, origin: Option<(i64, Option<u64>)>, lines: &[&str]) -> JournalLines {
    let lines = lines.iter().map(|l| l.to_string()).collect();
    JournalLines { session: session.into(), attempt, origin, opening: true, first: 0, lines }
}

/// Lines `first..` of attempt `attempt` of session `session`, after its opening.
fn later(session: &str, attempt: i64, first: i64, lines: &[&str]) -> JournalLines {
    JournalLines { opening: false, first, ..opening(session, attempt, None, lines) }
}

/// A session's record: an attempt's journal copied in batches under the
/// claim (the opening records the attempt and makes it the run's last), the
/// last lines, the conversation and the attempts stored with the run's end;
/// a superseded claim adds no line, and a journal started again replaces
/// its lines, never doubles them.
async fn a_sessions_record_is_kept_by_its_claims_only(fixture: Fixture) {
    use sr_runtime::session::RunLineage;
    let store = fixture.store("a", LEASE).await;
    assert_eq!(store.record("s").await.unwrap(), Record { session: "s".into(), ..Record::default() });
    store.submit(&new_run("r", "s"), false).await.unwrap();
    let claim = store.claim().await.unwrap().unwrap();
    store.write_batch("r", claim.epoch, None, &[]).await.unwrap();
    assert_eq!(store.run("r").await.unwrap().unwrap().attempt_run, None, "a check writes nothing");
    store.write_batch("r", claim.epoch, Some(&opening("s", 1, None, &["meta", "llm"])), &[]).await.unwrap();
    assert_eq!(store.run("r").await.unwrap().unwrap().attempt_run, Some(1));
    let running = RunLineage { run: 1, status: "running".into(), parent: None, from_step: None };
    let record = store.record("s").await.unwrap();
    assert_eq!((&record.attempts, record.journal_text(1)), (&vec![running], Some("meta\nllm\n".to_string())));
    // The next claim starts attempt 2 from attempt 1's journal, twice (its
    // first launch failed): one copy of the lines.
    expire(&store, "r").await;
    let again = store.claim().await.unwrap().unwrap();
    for _ in 0..2 {
        let second = opening("s", 2, Some((1, None)), &["meta", "llm"]);
        store.write_batch("r", again.epoch, Some(&second), &[]).await.unwrap();
    }
    let fenced = |result: Result<()>| matches!(result, Err(StoreError::Fenced { .. }));
    assert!(fenced(store.write_batch("r", claim.epoch, Some(&later("s", 1, 2, &["late"])), &[]).await));
    assert!(fenced(store.write_batch("r", claim.epoch, Some(&opening("s", 2, None, &[])), &[]).await));
    store.write_batch("r", again.epoch, Some(&later("s", 2, 2, &["tool_start", "tool"])), &[]).await.unwrap();
    let attempts = vec![
        RunLineage { run: 1, status: "interrupted".into(), parent: None, from_step: None },
        RunLineage { run: 2, status: "completed".into(), parent: Some(1), from_step: None },
    ];
    let messages = vec![serde_json::json!({"role": "user"}), serde_json::json!({"role": "assistant"})];
    let ended =
        Record { session: "s".into(), messages: messages.clone(), attempts: attempts.clone(), journals: Vec::new() };
    let ending = || {
        Ending::of(RunStatus::Done, None, None).recording(Some(ended.clone())).with_journal(Some(later(
            "s",
            2,
            4,
            &["end"],
        )))
    };
    assert!(fenced(store.end("r", claim.epoch, &ending()).await.map(drop)));
    assert_eq!(store.record("s").await.unwrap().journal_text(2).as_deref(), Some("meta\nllm\ntool_start\ntool\n"));
    store.end("r", again.epoch, &ending()).await.unwrap();
    let record = store.record("s").await.unwrap();
    assert_eq!((&record.messages, &record.attempts), (&messages, &attempts));
    assert_eq!(record.journal_text(1).as_deref(), Some("meta\nllm\n"));
    assert_eq!(record.journal_text(2).as_deref(), Some("meta\nllm\ntool_start\ntool\nend\n"));
    // A shorter record replaces a longer one whole.
    store.submit(&new_run("r2", "s"), false).await.unwrap();
    let third = store.claim().await.unwrap().unwrap();
    let fewer = Record {
        session: "s".into(),
        messages: messages[..1].to_vec(),
        attempts: attempts[..1].to_vec(),
        journals: Vec::new(),
    };
    store.end("r2", third.epoch, &Ending::of(RunStatus::Done, None, None).recording(Some(fewer))).await.unwrap();
    let record = store.record("s").await.unwrap();
    assert_eq!((&record.messages[..], &record.attempts[..]), (&messages[..1], &attempts[..1]));
}

/// A run that ends before any effect stores its attempt's opening with its end.
async fn an_attempt_without_effects_is_opened_by_its_end(fixture: Fixture) {
    let store = fixture.store("a", LEASE).await;
    store.submit(&new_run("r", "s"), false).await.unwrap();
    let claim = store.claim().await.unwrap().unwrap();
    let ending = Ending::of(RunStatus::Done, None, None).with_journal(Some(opening("s", 1, None, &["meta", "end"])));
    store.end("r", claim.epoch, &ending).await.unwrap();
    let run = store.run("r").await.unwrap().unwrap();
    assert_eq!((run.status, run.attempt_run), (RunStatus::Done, Some(1)));
    assert_eq!(store.record("s").await.unwrap().journal_text(1).as_deref(), Some("meta\nend\n"));
}

/// The plans of the forks among a list of runs, by run; runs that are not
/// forks (or unknown) are left out.
async fn the_plans_of_a_list_of_runs_are_one_read(fixture: Fixture) {
    let store = fixture.store("a", LEASE).await;
    store.save_plan("f1", r#"{"one":1}"#).await.unwrap();
    store.save_plan("f2", r#"{"two":2}"#).await.unwrap();
    let runs = ["f1", "plain", "f2", "nobody"].map(String::from);
    let mut plans: Vec<(String, String)> = store.plans(&runs).await.unwrap().into_iter().collect();
    plans.sort();
    assert_eq!(plans, [("f1".into(), r#"{"one":1}"#.into()), ("f2".into(), r#"{"two":2}"#.into())]);
    assert!(store.plans(&[]).await.unwrap().is_empty());
}

/// A run's A2A record: none at first; each change sees the one before
/// (from any replica: they apply one after another); a change that leaves
/// it stores nothing; files are kept once per hash; the run is marked as
/// one A2A added to; forgetting drops the record and the files.
async fn a_runs_a2a_record_changes_one_after_another(fixture: Fixture) {
    let a = fixture.store("a", LEASE).await;
    let b = fixture.store("b", LEASE).await;
    assert_eq!(a.a2a_record("t").await.unwrap(), None);
    // A run queued over API v1 is marked once A2A adds to it; a task is marked as it is queued.
    a.submit(&new_run("t", "s"), false).await.unwrap();
    a.submit(&NewRun { a2a: true, ..new_run("u", "s2") }, false).await.unwrap();
    assert_eq!(b.run("t").await.unwrap().map(|r| r.a2a), Some(false));
    assert_eq!(b.run("u").await.unwrap().map(|r| r.a2a), Some(true));
    let append = |n: u32| {
        move |stored: Option<&str>| -> Result<Option<String>> {
            let mut list: Vec<u32> = stored.map_or_else(Vec::new, |s| serde_json::from_str(s).unwrap());
            list.push(n);
            Ok(Some(serde_json::to_string(&list).unwrap()))
        }
    };
    let file = vec![("h1".to_string(), vec![0u8, 159, 146, 150])];
    // A change that leaves the record as it is stores nothing, but keeps the files.
    assert!(!a.change_a2a("t", &file, &|_| Ok(None)).await.unwrap());
    assert_eq!(a.a2a_record("t").await.unwrap(), None);
    let writers: Vec<_> = (0..8u32)
        .map(|n| {
            let store = if n % 2 == 0 { a.clone() } else { b.clone() };
            tokio::spawn(async move { store.change_a2a("t", &[], &append(n)).await.unwrap() })
        })
        .collect();
    for writer in writers {
        assert!(writer.await.unwrap());
    }
    let mut seen: Vec<u32> = serde_json::from_str(&b.a2a_record("t").await.unwrap().unwrap()).unwrap();
    seen.sort();
    assert_eq!(seen, (0..8).collect::<Vec<_>>(), "no change lost");
    a.change_a2a("t", &file, &append(8)).await.unwrap();
    let files = b.a2a_files("t").await.unwrap();
    assert_eq!(files.into_iter().collect::<Vec<_>>(), file);
    assert!(a.a2a_files("other").await.unwrap().is_empty());
    assert_eq!(b.run("t").await.unwrap().map(|r| r.a2a), Some(true));
    let undecodable = a.change_a2a("t", &[], &|_| Err(StoreError::Undecodable("no".into()))).await;
    assert!(undecodable.is_err());
    assert_eq!(serde_json::from_str::<Vec<u32>>(&a.a2a_record("t").await.unwrap().unwrap()).unwrap().len(), 9);
    // The replica that follows a task for its webhooks, as every replica sees it.
    assert!(b.a2a_followed("a").await.unwrap().is_empty());
    a.follow_a2a("t", Some("a")).await.unwrap();
    assert_eq!(
        (b.a2a_followed("a").await.unwrap(), b.a2a_followed("b").await.unwrap()),
        (vec!["t".to_string()], vec![])
    );
    a.change_a2a("t", &[], &append(9)).await.unwrap();
    assert_eq!(b.a2a_followed("a").await.unwrap(), ["t"], "a change keeps the follower");
    a.follow_a2a("t", None).await.unwrap();
    assert!(b.a2a_followed("a").await.unwrap().is_empty());
    b.forget_a2a("t").await.unwrap();
    assert_eq!((a.a2a_record("t").await.unwrap(), a.a2a_files("t").await.unwrap().len()), (None, 0));
}

/// A run gets the first trace id it is given and keeps it for every later
/// claim (one trace per run); an unknown run has none.
async fn a_runs_first_trace_id_is_kept(fixture: Fixture) {
    let store = fixture.store("a", LEASE).await;
    store.submit(&new_run("r", "s"), false).await.unwrap();
    assert_eq!(store.run("r").await.unwrap().unwrap().trace_id, None);
    let first = "0af7651916cd43dd8448eb211c80319c";
    assert_eq!(store.trace("r", first).await.unwrap().as_deref(), Some(first));
    assert_eq!(store.trace("r", "b7ad6b7169203331b7ad6b7169203331").await.unwrap().as_deref(), Some(first));
    assert_eq!(store.claim().await.unwrap().unwrap().trace_id.as_deref(), Some(first));
    assert_eq!(store.trace("nobody", first).await.unwrap(), None);
}

/// A step's journal lines and the events emitted since the last batch are
/// one write, refused as a whole; a stream's read gets the run's status with
/// its events; the end stores the events still pending before its
/// `run_finished`, whose id follows theirs.
async fn a_steps_lines_and_events_are_one_batch(fixture: Fixture) {
    let store = fixture.store("a", LEASE).await;
    assert!(store.follow("r", 0, 10).await.unwrap().is_none(), "an unknown run");
    store.submit(&new_run("r", "s"), false).await.unwrap();
    assert_eq!(store.follow("r", 0, 10).await.unwrap(), Some((RunStatus::Queued, Vec::new())));
    let claim = store.claim().await.unwrap().unwrap();
    let events = |ids: std::ops::RangeInclusive<u64>| -> Vec<(u64, String)> {
        ids.map(|id| (id, format!(r#"{{"seq":{id},"type":"step"}}"#))).collect()
    };
    let ids = |followed: Option<Followed>| {
        followed.map(|(status, events)| (status, events.iter().map(|e| e.0).collect::<Vec<_>>()))
    };
    store.write_batch("r", claim.epoch, Some(&opening("s", 1, None, &["meta", "llm"])), &events(1..=3)).await.unwrap();
    store.write_batch("r", claim.epoch, Some(&later("s", 1, 2, &["tool"])), &events(4..=5)).await.unwrap();
    store.write_batch("r", claim.epoch, None, &events(6..=6)).await.unwrap();
    // An event id stored already: the batch's line is not stored either.
    assert!(store.write_batch("r", claim.epoch, Some(&later("s", 1, 3, &["x"])), &events(6..=7)).await.is_err());
    // Another claim's epoch: refused whole.
    let refused = store.write_batch("r", claim.epoch + 1, Some(&later("s", 1, 3, &["y"])), &events(7..=7)).await;
    assert!(matches!(refused, Err(StoreError::Fenced { .. })), "{refused:?}");
    assert_eq!(store.record("s").await.unwrap().journal_text(1).as_deref(), Some("meta\nllm\ntool\n"));
    assert_eq!(store.journal("s", 1).await.unwrap(), ["meta", "llm", "tool"], "one attempt's lines alone");
    assert!(store.journal("s", 2).await.unwrap().is_empty());
    assert_eq!(ids(store.follow("r", 0, 10).await.unwrap()), Some((RunStatus::Running, (1..=6).collect())));
    assert_eq!(ids(store.follow("r", 4, 1).await.unwrap()), Some((RunStatus::Running, vec![5])));
    let ending = Ending::of(RunStatus::Done, None, None).with_events(events(7..=8));
    store.end("r", claim.epoch, &ending).await.unwrap();
    let (status, ended) = store.follow("r", 6, 10).await.unwrap().unwrap();
    assert_eq!((status, ended.iter().map(|e| e.0).collect::<Vec<_>>()), (RunStatus::Done, vec![7, 8, 9]));
    assert_eq!(finished_events(&store, "r").await, [(9, "completed".to_string())]);
}

/// The cases of replicas sharing a database.
const SHARED: &[(&str, Case)] =
    cases![leases_expire_and_are_taken_over, notes_reach_other_replicas, replicas_starting_at_once_migrate_once];

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn suite_on_sqlite() {
    let dir = std::env::temp_dir().join(format!("sr-serve-store-{}", uuid::Uuid::new_v4()));
    for (name, case) in BOTH {
        eprintln!("sqlite: {name}");
        case(Fixture::Sqlite(dir.join(format!("{name}.db")))).await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn suite_on_postgres() {
    let Some(server) = sr_testing::postgres::start("store") else { return };
    let (admin, connection) = tokio_postgres::connect(&server.url(), tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    for (n, (name, case)) in BOTH.iter().chain(SHARED).enumerate() {
        eprintln!("postgres: {name}");
        admin.batch_execute(&format!("CREATE DATABASE case_{n}")).await.unwrap();
        let url = format!("{}/case_{n}", server.url().strip_suffix("/postgres").unwrap());
        case(Fixture::Postgres(url)).await;
    }
}

/// A `serve.db` made before the schema had versions (and before claims had
/// epochs) opens as version 1 with its runs intact, and its next opening
/// applies nothing again.
#[tokio::test]
async fn an_unversioned_sqlite_store_upgrades_as_version_one() {
    let dir = std::env::temp_dir().join(format!("sr-serve-legacy-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("serve.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, created_ms INTEGER NOT NULL);
             CREATE TABLE runs (position INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,
                 session TEXT NOT NULL REFERENCES sessions(id), workload TEXT NOT NULL, entry TEXT,
                 message TEXT NOT NULL, model TEXT, status TEXT NOT NULL, result TEXT, error TEXT,
                 attempt_run INTEGER, pending_input TEXT, created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL);
             CREATE UNIQUE INDEX one_active_run_per_session
                 ON runs(session) WHERE status IN ('running', 'paused', 'in_doubt');
             CREATE TABLE run_events (run TEXT NOT NULL, id INTEGER NOT NULL, event TEXT NOT NULL,
                 PRIMARY KEY (run, id));
             INSERT INTO sessions VALUES ('s', 1);
             INSERT INTO runs (id, session, workload, message, status, created_ms, updated_ms)
                 VALUES ('old', 's', 'w', 'hi', 'queued', 1, 1);",
        )
        .unwrap();
    for _ in 0..2 {
        let store = Store::open(&path).unwrap();
        let versions: u64 = store.raw("UPDATE sr_serve_schema SET version = version").await.unwrap();
        assert_eq!(versions, migrate::SQLITE.len() as u64, "each version recorded once");
        drop(store);
    }
    let store = Store::open(&path).unwrap();
    let claimed = store.claim().await.unwrap().unwrap();
    assert_eq!((claimed.id.as_str(), claimed.epoch), ("old", 1));
    store.append_event("old", 1, 1, "{}").await.unwrap();
    store.end("old", 1, &Ending::of(RunStatus::Done, None, None)).await.unwrap();
    assert_eq!(store.run("old").await.unwrap().unwrap().status, RunStatus::Done);
    let _ = std::fs::remove_dir_all(&dir);
}
