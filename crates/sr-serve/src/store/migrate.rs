//! The stores' schemas, as versioned SQL files per backend
//! (`migrations/<backend>/NNNN_what.sql`, built into the binary), and the
//! rule that applies them: table `sr_serve_schema` records each version
//! applied, and a store opens by applying, in one transaction, every version
//! after the highest recorded, in order. A new schema change is a new file
//! with the next number, listed below; a released file never changes.

/// One version of a backend's schema.
pub struct Migration {
    pub version: i32,
    pub sql: &'static str,
}

pub const SQLITE: &[Migration] = &[
    Migration { version: 1, sql: include_str!("migrations/sqlite/0001_init.sql") },
    Migration { version: 2, sql: include_str!("migrations/sqlite/0002_session_record.sql") },
    Migration { version: 3, sql: include_str!("migrations/sqlite/0003_session_activity.sql") },
    Migration { version: 4, sql: include_str!("migrations/sqlite/0004_a2a_record.sql") },
    Migration { version: 5, sql: include_str!("migrations/sqlite/0005_trace_id.sql") },
];

pub const POSTGRES: &[Migration] = &[
    Migration { version: 1, sql: include_str!("migrations/postgres/0001_init.sql") },
    Migration { version: 2, sql: include_str!("migrations/postgres/0002_session_record.sql") },
    Migration { version: 3, sql: include_str!("migrations/postgres/0003_session_activity.sql") },
    Migration { version: 4, sql: include_str!("migrations/postgres/0004_a2a_record.sql") },
    Migration { version: 5, sql: include_str!("migrations/postgres/0005_trace_id.sql") },
];

/// The table of applied versions (the PostgreSQL store kept it before the
/// files did, one row per version, so its databases carry on as they are).
pub const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS sr_serve_schema (version INTEGER NOT NULL)";

/// The highest version applied (0: none).
pub const APPLIED: &str = "SELECT COALESCE(MAX(version), 0) FROM sr_serve_schema";

/// Records version `$1` as applied.
pub const RECORD: &str = "INSERT INTO sr_serve_schema (version) VALUES ($1)";

/// The migrations of `all` a store at version `applied` still needs, in order.
pub fn pending(all: &'static [Migration], applied: i32) -> impl Iterator<Item = &'static Migration> {
    all.iter().filter(move |m| m.version > applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_count_up_from_one_and_only_the_missing_ones_are_pending() {
        for all in [SQLITE, POSTGRES] {
            let versions: Vec<i32> = all.iter().map(|m| m.version).collect();
            assert_eq!(versions, (1..=all.len() as i32).collect::<Vec<_>>());
            let last = all.len() as i32;
            assert_eq!(pending(all, 0).count(), all.len());
            assert_eq!(pending(all, last).count(), 0);
            assert_eq!(pending(all, last - 1).map(|m| m.version).collect::<Vec<_>>(), [last]);
        }
    }
}
