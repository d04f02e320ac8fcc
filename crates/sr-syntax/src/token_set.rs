//! A compile-time set of token kinds.

use crate::SyntaxKind;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct TokenSet([u64; 4]);

impl TokenSet {
    pub(crate) const EMPTY: TokenSet = TokenSet([0; 4]);

    pub(crate) const fn new(kinds: &[SyntaxKind]) -> TokenSet {
        let mut bits = [0u64; 4];
        let mut i = 0;
        while i < kinds.len() {
            let k = kinds[i] as usize;
            assert!(k < 256);
            bits[k / 64] |= 1 << (k % 64);
            i += 1;
        }
        TokenSet(bits)
    }

    pub(crate) const fn union(self, other: TokenSet) -> TokenSet {
        TokenSet([self.0[0] | other.0[0], self.0[1] | other.0[1], self.0[2] | other.0[2], self.0[3] | other.0[3]])
    }

    pub(crate) const fn contains(self, kind: SyntaxKind) -> bool {
        let k = kind as usize;
        k < 256 && self.0[k / 64] & (1 << (k % 64)) != 0
    }
}
