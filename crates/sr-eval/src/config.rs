//! How an evaluation was asked for, kept in its `results.json` so that
//! `sr eval --resume OUT` can finish it without being told again, and how a
//! case's runs over several epochs reduce to one pass value and one score.

use std::fmt::{self, Write as _};
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Everything `sr eval` was given, paths made absolute. sr-eval keeps it and
/// hands it back; sr-cli reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    pub dataset: PathBuf,
    /// The SHA-256 of the dataset's text: a resumed run refuses a changed dataset.
    pub dataset_sha256: String,
    pub workloads: Vec<WorkloadRef>,
    pub entries: Vec<String>,
    pub models: Vec<String>,
    pub epochs: u32,
    pub jobs: Option<usize>,
    pub timeout_secs: Option<f64>,
    pub retries: u32,
    pub record_to: Option<PathBuf>,
    pub replay_from: Option<PathBuf>,
    pub filter: Option<String>,
    /// `(I, N)`: shard I of N.
    pub shard: Option<(usize, usize)>,
    pub max_turns: u32,
    pub prices: Option<PathBuf>,
    pub allow_host_tools: bool,
    pub allow_unsandboxed: bool,
    pub min_score: Option<f64>,
    /// The `sr serve` URLs the case runs were submitted to (`--server`);
    /// empty when they ran here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<String>,
    /// The file holding the servers' API key (the key itself is never kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_file: Option<PathBuf>,
}

/// A workload as the user named it, where it was found, and the SHA-256 of
/// its source files (its imports included).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadRef {
    pub name: String,
    pub path: PathBuf,
    pub sha256: String,
}

/// The hex SHA-256 of `parts`, each prefixed with its length so that no two
/// lists of parts hash alike.
pub fn fingerprint<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part);
    }
    hash.finalize().iter().fold(String::with_capacity(64), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    })
}

/// How a case's runs (one per epoch) make its pass value and score.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Reduce {
    /// The share of runs that passed, and the mean score.
    #[default]
    Mean,
    /// Passed when any run passed; the best score.
    Max,
    /// The unbiased pass@k estimate (with fewer than k runs, pass@runs), for
    /// both the pass value and the score.
    PassAt(u32),
}

impl fmt::Display for Reduce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reduce::Mean => f.write_str("mean"),
            Reduce::Max => f.write_str("max"),
            Reduce::PassAt(k) => write!(f, "pass@{k}"),
        }
    }
}

impl FromStr for Reduce {
    type Err = String;

    fn from_str(text: &str) -> Result<Reduce, String> {
        match text {
            "mean" => Ok(Reduce::Mean),
            "max" => Ok(Reduce::Max),
            _ => match text.strip_prefix("pass@").map(str::parse::<u32>) {
                Some(Ok(k)) if k >= 1 => Ok(Reduce::PassAt(k)),
                _ => Err(format!("{text:?} is not a reduction: mean, max or pass@K (K ≥ 1)")),
            },
        }
    }
}

impl TryFrom<String> for Reduce {
    type Error = String;

    fn try_from(text: String) -> Result<Reduce, String> {
        text.parse()
    }
}

impl From<Reduce> for String {
    fn from(reduce: Reduce) -> String {
        reduce.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reductions_read_and_print_the_same() {
        for text in ["mean", "max", "pass@1", "pass@5"] {
            assert_eq!(text.parse::<Reduce>().unwrap().to_string(), text);
        }
        for bad in ["", "avg", "pass@0", "pass@", "pass@-1", "pass@x", "Mean"] {
            assert!(bad.parse::<Reduce>().unwrap_err().contains("mean, max or pass@K"), "{bad}");
        }
        assert_eq!(serde_json::to_string(&Reduce::PassAt(3)).unwrap(), "\"pass@3\"");
        assert!(serde_json::from_str::<Reduce>("\"pass@0\"").is_err());
    }

    #[test]
    fn fingerprints_tell_lists_of_parts_apart() {
        let of = |parts: &[&str]| fingerprint(parts.iter().map(|p| p.as_bytes()));
        assert_eq!(of(&["ab", "c"]), of(&["ab", "c"]));
        assert_ne!(of(&["ab", "c"]), of(&["a", "bc"]));
        assert_eq!(of(&[]).len(), 64);
    }
}
