//! The paths a dataset names (its cases' files, a flow scorer's file) stay
//! inside the directory they are relative to.

use std::path::{Component, Path};

pub(crate) const WORK_DIR: &str = "the work directory";
pub(crate) const DATASET_DIR: &str = "the dataset's directory";

/// A path stays inside the directory it is relative to (`within` names it):
/// not empty, not absolute, no `..`.
pub(crate) fn check_relative(path: &str, within: &str) -> Result<(), String> {
    let path = Path::new(path);
    if path.as_os_str().is_empty() {
        return Err("is empty".to_string());
    }
    if path.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)) {
        Ok(())
    } else {
        Err(format!("must be a relative path inside {within}"))
    }
}
