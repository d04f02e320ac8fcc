//! `sr eval`: runs workloads on datasets of cases and scores them.
//!
//! A [`dataset`] holds cases (a prompt, files to start with, and scorers);
//! [`harness`] runs every variant (workload, entry, model) on every case, each
//! case in a fresh work directory and session, several at once; [`scorer`]
//! judges each run ([`meter`] counts what its model calls spend); [`results`] is the machine-readable outcome, [`report`]
//! the readable one ([`html`] the page), and [`compare`] gates one result
//! set against another.

pub mod case;
pub mod compare;
pub mod dataset;
pub mod harness;
pub mod html;
pub mod meter;
mod relative;
pub mod report;
pub mod results;
pub mod scorer;
