//! `sr eval`: runs workloads on datasets of cases and scores them.
//!
//! A [`dataset`] holds cases (a prompt, files to start with, and scorers);
//! [`validate`] checks entries and models before anything runs; [`harness`]
//! runs every variant (workload, entry, model) on every case, `epochs` times,
//! each case run in a fresh work directory and session, several at once;
//! [`scorer`] judges each run ([`meter`] counts what its model calls spend);
//! [`results`] is the machine-readable outcome (complete or not, with
//! [`config`], how it was asked for) and is made from [`runlog`], the
//! finished case runs as they end, [`report`] the readable one ([`html`]
//! the page), [`stats`] their intervals and tests, [`compare`] gates one
//! result set against another and [`merge`] joins shards. With [`remote`]
//! the case runs are runs of an `sr serve` instead of local ones.

pub mod case;
mod case_error;
pub mod compare;
pub mod config;
pub mod dataset;
pub mod harness;
pub mod html;
pub mod merge;
pub mod meter;
pub mod names;
mod relative;
pub mod remote;
pub mod report;
pub mod results;
pub mod runlog;
pub mod scorer;
pub mod stats;
pub mod suggest;
pub mod validate;
