//! What the studio (sr-studio) asks beyond API v1: `GET /v1/runs`, the newest runs first
//! (`?status=` to keep one status, `?limit=` up to 500, default 200), each with when it
//! started, how long it took once it ended, its tokens and cost from its `run_finished`
//! event, and what a fork was forked from; and `GET /v1/sessions`, every session in the
//! store, the one active last first, a page at a time (`?q=` to search, `?limit=` per
//! page, default 50, `?before=` the previous page's `next`). The embedded store reads
//! `serve.db` for the lists on a read-only connection of its own, so they never hold the
//! store's lock; a listed run's fork plan is one short read of the store each.

use std::sync::Arc;

use axum::Json;
use axum::extract::{RawQuery, State};
use axum::http::Method;
use sr_api::{RunList, RunSummary, SessionList, SessionSummary, Tokens};

use crate::Server;
use crate::error::ApiError;
use crate::route::{Access, Route};
use crate::store::{RecentRun, RunStatus, SessionPage, SessionRow};

pub(crate) const MAX_LIMIT: u32 = 500;

pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::new(Access::Keyed, Method::GET, "/v1/runs", list),
        Route::new(Access::Keyed, Method::GET, "/v1/sessions", sessions),
    ]
}

/// Sessions a page lists unless `?limit=` says otherwise.
const SESSIONS_PER_PAGE: u32 = 50;

/// `?status=S&limit=N` (or, for sessions, `?q=TEXT&limit=N&before=CURSOR`), each
/// at most once; anything else is a JSON 400 naming it.
#[derive(Default)]
struct ListQuery {
    status: Option<RunStatus>,
    limit: Option<u32>,
    q: Option<String>,
    before: Option<(i64, String)>,
}

fn parse_query(raw: Option<&str>, route: &str) -> Result<ListQuery, ApiError> {
    let sessions = route == "/v1/sessions";
    let mut query = ListQuery::default();
    for pair in raw.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "q" if sessions && query.q.is_none() => query.q = Some(decode(value)?),
            "before" if sessions && query.before.is_none() => query.before = Some(cursor(&decode(value)?)?),
            "status" if !sessions && query.status.is_none() => {
                query.status = Some(value.parse().map_err(|e| ApiError::bad_request(format!("status: {e}")))?);
            }
            "limit" if query.limit.is_none() => {
                let limit =
                    value.parse().map_err(|_| ApiError::bad_request(format!("limit: {value:?} is not a count")))?;
                query.limit = Some(limit);
            }
            "limit" | "q" | "before" if sessions => return Err(ApiError::bad_request(format!("{key}: given twice"))),
            "limit" | "status" if !sessions => return Err(ApiError::bad_request(format!("{key}: given twice"))),
            _ => {
                let known = if sessions { "q, limit, before" } else { "status, limit" };
                return Err(ApiError::bad_request(format!("{key:?}: not a parameter of GET {route} ({known})")));
            }
        }
    }
    Ok(query)
}

/// A session's place in the list, as a page's `next` gives it: `ACTIVE_MS.ID`.
fn cursor(value: &str) -> Result<(i64, String), ApiError> {
    let bad = || ApiError::bad_request(format!("before: {value:?} is not a page's `next`"));
    let (ms, id) = value.split_once('.').ok_or_else(bad)?;
    Ok((ms.parse().map_err(|_| bad())?, id.to_string()))
}

/// A query's value with `+` and `%XX` decoded.
fn decode(value: &str) -> Result<String, ApiError> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
                let byte = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
                out.push(byte.ok_or_else(|| ApiError::bad_request(format!("q: {value:?} has a bad %-escape")))?);
                i += 2;
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8(out).map_err(|_| ApiError::bad_request("q: not UTF-8 once decoded"))
}

async fn sessions(State(server): State<Arc<Server>>, RawQuery(raw): RawQuery) -> Result<Json<SessionList>, ApiError> {
    let query = parse_query(raw.as_deref(), "/v1/sessions")?;
    let limit = query.limit.unwrap_or(SESSIONS_PER_PAGE).clamp(1, MAX_LIMIT);
    let q = query.q.map(|q| q.trim().to_lowercase()).filter(|q| !q.is_empty());
    let page = SessionPage { q, before: query.before, limit };
    let rows = server.store.sessions(&page).await?;
    let next = rows.last().filter(|_| rows.len() == limit as usize).map(|s| format!("{}.{}", s.active_ms, s.id));
    Ok(Json(SessionList { sessions: rows.into_iter().map(summary).collect(), next }))
}

fn summary(row: SessionRow) -> SessionSummary {
    let SessionRow { id, created_ms, runs, last, workloads, .. } = row;
    SessionSummary {
        id,
        created: iso(created_ms),
        runs: u32::try_from(runs).unwrap_or(u32::MAX),
        last_started: last.as_ref().map(|l| iso(l.created_ms)),
        last_status: last.as_ref().map(|l| l.status),
        last_run: last.map(|l| l.id),
        workloads,
    }
}

async fn list(State(server): State<Arc<Server>>, RawQuery(raw): RawQuery) -> Result<Json<RunList>, ApiError> {
    let query = parse_query(raw.as_deref(), "/v1/runs")?;
    let limit = query.limit.unwrap_or(200).clamp(1, MAX_LIMIT);
    let mut runs: Vec<RunSummary> =
        server.store.recent_runs(query.status, limit).await?.into_iter().map(shown).collect();
    let ids: Vec<String> = runs.iter().map(|r| r.id.clone()).collect();
    let mut origins = crate::travel::fork::origins(&server.store, &ids).await;
    for run in &mut runs {
        run.forked_from = origins.remove(&run.id);
    }
    Ok(Json(RunList { runs }))
}

fn shown(row: RecentRun) -> RunSummary {
    let RecentRun { id, session, workload, entry, status, error, created_ms, updated_ms, last_event } = row;
    let usage = last_event.and_then(|text| serde_json::from_str::<sr_api::Event>(&text).ok()).and_then(|event| {
        match event.payload {
            sr_api::Payload::RunFinished { usage, .. } => Some(usage),
            _ => None,
        }
    });
    RunSummary {
        id,
        session,
        workload,
        entry,
        status,
        started: iso(created_ms),
        error,
        duration_ms: status.is_ended().then(|| u64::try_from(updated_ms.saturating_sub(created_ms)).unwrap_or(0)),
        tokens: usage.as_ref().map(|u| Tokens { input: u.input_tokens, output: u.output_tokens }),
        cost_usd: usage.and_then(|u| u.cost_usd),
        forked_from: None,
    }
}

/// Milliseconds since the epoch as UTC `YYYY-MM-DDTHH:MM:SS.mmmZ`.
fn iso(ms: i64) -> String {
    let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s, milli) = (rest / 3_600_000, rest / 60_000 % 60, rest / 1000 % 60, rest % 1000);
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

#[cfg(test)]
mod tests {
    use super::{RunStatus, iso, parse_query};

    #[test]
    fn queries() {
        let ok = parse_query(Some("status=done&limit=3"), "/v1/runs").unwrap();
        assert_eq!((ok.status, ok.limit), (Some(RunStatus::Done), Some(3)));
        assert!(parse_query(None, "/v1/runs").unwrap().status.is_none());
        let search = parse_query(Some("q=travel+desk%2F2&limit=9"), "/v1/sessions").unwrap();
        assert_eq!((search.q.as_deref(), search.limit), (Some("travel desk/2"), Some(9)));
        let paged = parse_query(Some("before=1795706655989.s.1%2F2"), "/v1/sessions").unwrap();
        assert_eq!(paged.before, Some((1_795_706_655_989, "s.1/2".to_string())), "an id may hold dots");
        for bad in
            ["status=done", "q=a&q=b", "q=%zz", "q=%ff", "limit=x", "before=x", "before=1", "before=1.a&before=1.a"]
        {
            assert!(parse_query(Some(bad), "/v1/sessions").is_err(), "{bad}");
        }
        for bad in [
            "status=sideways",
            "limit=abc",
            "limit=-1",
            "limit=99999999999",
            "status=done&status=done",
            "x=1",
            "status",
        ] {
            assert!(parse_query(Some(bad), "/v1/runs").is_err(), "{bad}");
        }
    }

    #[test]
    fn iso_dates() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso(1_795_706_655_989), "2026-11-26T15:24:15.989Z");
        assert_eq!(iso(-1), "1969-12-31T23:59:59.999Z");
    }
}
