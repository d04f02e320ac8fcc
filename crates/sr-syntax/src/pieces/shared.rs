//! What an edited text shares with the text before the edit.

/// The bytes an old and a new text share at their start (`prefix`) and at
/// their end (`suffix`); the two never overlap in either text, so the edit
/// replaced `old[prefix..old.len() - suffix]` with
/// `new[prefix..new.len() - suffix]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedEnds {
    pub prefix: usize,
    pub suffix: usize,
}

impl SharedEnds {
    pub fn between(old: &str, new: &str) -> SharedEnds {
        let (old, new) = (old.as_bytes(), new.as_bytes());
        let prefix = common_prefix(old, new);
        let suffix = common_suffix(&old[prefix..], &new[prefix..]);
        SharedEnds { prefix, suffix }
    }
}

/// Sequences are compared by blocks (`memcmp`), then byte by byte.
const BLOCK: usize = 4096;

/// How many bytes at the start `a` and `b` share.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.chunks_exact(BLOCK).zip(b.chunks_exact(BLOCK)).take_while(|(x, y)| x == y).count() * BLOCK;
    n + a[n..].iter().zip(&b[n..]).take_while(|(x, y)| x == y).count()
}

/// How many bytes at the end `a` and `b` share.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    let n = a.rchunks_exact(BLOCK).zip(b.rchunks_exact(BLOCK)).take_while(|(x, y)| x == y).count() * BLOCK;
    n + a[..a.len() - n].iter().rev().zip(b[..b.len() - n].iter().rev()).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_ends_are_found_across_blocks() {
        let old = format!("{}abc{}", "x".repeat(10_000), "y".repeat(9_000));
        let new = format!("{}aXbc{}", "x".repeat(10_000), "y".repeat(9_000));
        assert_eq!(SharedEnds::between(&old, &new), SharedEnds { prefix: 10_001, suffix: 9_002 });
        // The suffix never reaches into the prefix.
        assert_eq!(SharedEnds::between("aa", "aaa"), SharedEnds { prefix: 2, suffix: 0 });
    }
}
