//! What the studio (sr-studio) asks beyond API v1: `GET /v1/runs`, the newest runs first
//! (`?status=` to keep one status, `?limit=` up to 500, default 200), each with when it
//! started, how long it took once it ended, and its tokens and cost from its
//! `run_finished` event. The embedded store reads `serve.db` for it on a read-only
//! connection of its own, so it never holds the store's lock.

use std::sync::Arc;

use axum::Json;
use axum::extract::{RawQuery, State};
use axum::http::Method;
use serde_json::{Value, json};

use crate::Server;
use crate::error::ApiError;
use crate::route::{Access, Route};
use crate::store::{RecentRun, RunStatus};

pub(crate) const MAX_LIMIT: u32 = 500;

pub(crate) fn routes() -> Vec<Route> {
    vec![Route::new(Access::Keyed, Method::GET, "/v1/runs", list)]
}

/// `?status=S&limit=N`, each at most once; anything else is a JSON 400 naming it.
#[derive(Default)]
struct ListQuery {
    status: Option<RunStatus>,
    limit: Option<u32>,
}

fn parse_query(raw: Option<&str>) -> Result<ListQuery, ApiError> {
    let mut query = ListQuery::default();
    for pair in raw.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "status" if query.status.is_none() => {
                query.status = Some(value.parse().map_err(|e| ApiError::bad_request(format!("status: {e}")))?);
            }
            "limit" if query.limit.is_none() => {
                let limit =
                    value.parse().map_err(|_| ApiError::bad_request(format!("limit: {value:?} is not a count")))?;
                query.limit = Some(limit);
            }
            "status" | "limit" => return Err(ApiError::bad_request(format!("{key}: given twice"))),
            _ => {
                return Err(ApiError::bad_request(format!("{key:?}: not a parameter of GET /v1/runs (status, limit)")));
            }
        }
    }
    Ok(query)
}

async fn list(State(server): State<Arc<Server>>, RawQuery(raw): RawQuery) -> Result<Json<Value>, ApiError> {
    let query = parse_query(raw.as_deref())?;
    let limit = query.limit.unwrap_or(200).clamp(1, MAX_LIMIT);
    let runs: Vec<Value> = server.store.recent_runs(query.status, limit).await?.into_iter().map(shown).collect();
    Ok(Json(json!({"runs": runs})))
}

fn shown(row: RecentRun) -> Value {
    let RecentRun { id, session, workload, entry, status, error, created_ms, updated_ms, last_event } = row;
    let mut run = json!({"id": id, "session": session, "workload": workload, "entry": entry, "status": status,
                         "started": iso(created_ms)});
    if let Some(error) = error {
        run["error"] = json!(error);
    }
    if status.is_ended() {
        run["duration_ms"] = json!(updated_ms.saturating_sub(created_ms));
    }
    if let Some(usage) = last_event
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .filter(|event| event["type"] == "run_finished")
        .map(|event| event["usage"].clone())
    {
        run["tokens"] = json!({"input": usage["input_tokens"], "output": usage["output_tokens"]});
        run["cost_usd"] = usage.get("cost_usd").cloned().unwrap_or(Value::Null);
    }
    run
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
        let ok = parse_query(Some("status=done&limit=3")).unwrap();
        assert_eq!((ok.status, ok.limit), (Some(RunStatus::Done), Some(3)));
        assert!(parse_query(None).unwrap().status.is_none());
        for bad in [
            "status=sideways",
            "limit=abc",
            "limit=-1",
            "limit=99999999999",
            "status=done&status=done",
            "x=1",
            "status",
        ] {
            assert!(parse_query(Some(bad)).is_err(), "{bad}");
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
