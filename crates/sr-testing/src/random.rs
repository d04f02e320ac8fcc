//! Deterministic randomness for bounded randomized tests and the differential
//! tools: a seeded generator and the byte-level mutation of a source text.

/// A small deterministic generator (xorshift64*), so runs are reproducible.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// `text` with a span of up to 200 bytes deleted or duplicated, one of
/// `inserts` put in, or the rest cut off: what a user has on screen mid-edit
/// (bytes, so the result may split a character; it is read lossily).
pub fn mutate(text: &str, rng: &mut Rng, inserts: &[&str]) -> String {
    let bytes = text.as_bytes();
    let (a, b) = (rng.below(bytes.len()), rng.below(bytes.len()));
    let (a, b) = (a.min(b), a.max(b).min(a + 200));
    let mut out = Vec::with_capacity(bytes.len() + 16);
    match rng.below(4) {
        0 => {
            out.extend_from_slice(&bytes[..a]);
            out.extend_from_slice(&bytes[b..]);
        }
        1 => {
            out.extend_from_slice(&bytes[..b]);
            out.extend_from_slice(&bytes[a..]);
        }
        2 => {
            out.extend_from_slice(&bytes[..a]);
            out.extend_from_slice(inserts[rng.below(inserts.len())].as_bytes());
            out.extend_from_slice(&bytes[a..]);
        }
        _ => out.extend_from_slice(&bytes[..a]),
    }
    String::from_utf8_lossy(&out).into_owned()
}
