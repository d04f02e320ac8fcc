//! API keys: read from a file (one a line), kept only as SHA-256 hashes, and
//! compared in constant time against the hash of the key a request presents
//! (`Authorization: Bearer KEY`, the scheme in any case as RFC 7235 has it).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The hashes of the keys the server accepts.
pub struct ApiKeys {
    hashes: Vec<[u8; 32]>,
}

/// Keys shorter than this are refused: they can be guessed.
pub const MIN_KEY_LEN: usize = 16;

/// Why an API key file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum KeysError {
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: {problem}", path.display())]
    Bad { path: PathBuf, problem: BadKeys },
}

/// What is wrong with a key list (never the key itself).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadKeys {
    #[error("line {line}: a key must have at least {MIN_KEY_LEN} characters")]
    Short { line: usize },
    #[error("lists no key")]
    Empty,
}

impl ApiKeys {
    /// Reads `file`: one key a line; blank lines and lines starting with `#`
    /// are skipped. An empty list, or a short key, is an error naming its line
    /// (never the key).
    pub fn read(file: &Path) -> Result<ApiKeys, KeysError> {
        let text =
            std::fs::read_to_string(file).map_err(|source| KeysError::Read { path: file.to_path_buf(), source })?;
        Self::parse(&text).map_err(|problem| KeysError::Bad { path: file.to_path_buf(), problem })
    }

    pub fn parse(text: &str) -> Result<ApiKeys, BadKeys> {
        let mut hashes = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let key = line.trim();
            if key.is_empty() || key.starts_with('#') {
                continue;
            }
            if key.len() < MIN_KEY_LEN {
                return Err(BadKeys::Short { line: number + 1 });
            }
            hashes.push(hash(key));
        }
        if hashes.is_empty() {
            return Err(BadKeys::Empty);
        }
        Ok(ApiKeys { hashes })
    }

    /// Whether `authorization` (the header's value) carries a listed key.
    /// Every listed hash is compared, whichever matches.
    pub fn admits(&self, authorization: Option<&[u8]>) -> bool {
        let Some(key) = authorization.and_then(bearer) else { return false };
        let presented = hash_bytes(key);
        let mut found = subtle::Choice::from(0);
        for listed in &self.hashes {
            found |= listed.ct_eq(&presented);
        }
        found.into()
    }
}

/// The credentials of a `Bearer` authorization (scheme case-insensitive,
/// one or more spaces after it), if that is its scheme and it has some.
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let value = value.trim_ascii();
    let (scheme, rest) = value.split_at(value.iter().position(|b| *b == b' ')?);
    let key = rest.trim_ascii();
    (scheme.eq_ignore_ascii_case(b"bearer") && !key.is_empty()).then_some(key)
}

fn hash(key: &str) -> [u8; 32] {
    hash_bytes(key.as_bytes())
}

fn hash_bytes(key: &[u8]) -> [u8; 32] {
    Sha256::digest(key).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_checked_by_hash_and_the_file_is_validated() {
        let keys = ApiKeys::parse("# ops\n\nkey-one-0123456789\n  key-two-0123456789  \n").unwrap();
        assert!(keys.admits(Some(b"Bearer key-one-0123456789")));
        assert!(keys.admits(Some(b"Bearer key-two-0123456789")));
        // The scheme is case-insensitive (RFC 7235), and so is nothing else.
        for scheme in ["bearer", "BEARER", "bEaReR", "Bearer  "] {
            assert!(keys.admits(Some(format!("{scheme} key-one-0123456789").as_bytes())), "{scheme}");
        }
        for bad in [
            &b"Bearer key-one-012345678"[..],
            b"Bearer KEY-ONE-0123456789",
            b"key-one-0123456789",
            b"Bearer ",
            b"Bearerkey-one-0123456789",
            b"Basic a2V5",
            b"",
        ] {
            assert!(!keys.admits(Some(bad)), "{}", String::from_utf8_lossy(bad));
        }
        assert!(!keys.admits(None));
        assert_eq!(ApiKeys::parse("# none\n").err().unwrap(), BadKeys::Empty);
        assert_eq!(ApiKeys::parse("# none\n").err().unwrap().to_string(), "lists no key");
        let short = ApiKeys::parse("ok-key-0123456789\nsecret\n").err().unwrap();
        assert_eq!(short, BadKeys::Short { line: 2 });
        let short = short.to_string();
        assert_eq!(short, "line 2: a key must have at least 16 characters");
        assert!(!short.contains("secret"));
    }
}
