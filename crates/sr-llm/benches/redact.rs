//! What redaction costs on 1 MB of text with 10 secrets: `cargo bench -p
//! sr-llm --bench redact`. Each case redacts the same 1 MB:
//! - `clean`: prose and base64 with no secret and no `%` (one automaton pass);
//! - `secrets`: the same with 40 occurrences of the secrets, exact, in
//!   base64 inside longer base64, in hex and percent-encoded (both passes);
//! - `percent`: the clean text with a `%XX` escape every 64 bytes (both
//!   passes, nothing found);
//! - `exact_only`: the replace-per-secret redaction this one replaced, on
//!   `secrets`: it found the exact text only.
//!
//! `add` is the cost of making the automaton as 10 secrets are added one by
//! one (it is rebuilt on each), `add_one` for one secret.
#![allow(clippy::unwrap_used)]

use std::sync::LazyLock;

use divan::Bencher;
use divan::counter::BytesCount;
use sr_llm::Redactor;

fn main() {
    divan::main();
}

const SIZE: usize = 1 << 20;

static SECRETS: LazyLock<Vec<String>> =
    LazyLock::new(|| (0..10).map(|i| format!("sk-proj-{i}Qx7vN2pL9sK4mR8tW1yZ5bC3dF6gH0jA{i}")).collect());

/// Deterministic bytes (a linear congruential generator).
fn noise(seed: u64, n: usize) -> Vec<u8> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as u8
        })
        .collect()
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let group = chunk.iter().enumerate().fold(0u32, |g, (i, b)| g | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(group >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// Lines of prose and base64 blobs, to `SIZE` bytes.
fn clean() -> String {
    let mut text = String::with_capacity(SIZE + 4096);
    let mut seed = 1;
    while text.len() < SIZE {
        text.push_str("The build finished in 42 s; 3 warnings, see https://ci.example/run/1234?page=2.\n");
        text.push_str(&base64(&noise(seed, 300)));
        text.push('\n');
        seed += 1;
    }
    text.truncate(SIZE);
    text
}

/// `clean` with each secret in four forms at spread-out places.
fn with_secrets() -> String {
    let mut text = clean();
    for (i, secret) in SECRETS.iter().enumerate() {
        let mut blob = noise(i as u64, i % 3 + 5);
        blob.extend_from_slice(secret.as_bytes());
        blob.extend(noise(i as u64 + 50, 7));
        let hex = secret.bytes().fold(String::new(), |out, b| out + &format!("{b:02x}"));
        let percent = secret.bytes().fold(String::new(), |out, b| out + &format!("%{b:02X}"));
        for (j, form) in [secret.clone(), base64(&blob), hex, percent].into_iter().enumerate() {
            let at = (i * 4 + j + 1) * (SIZE / 42);
            let at = (at..).find(|at| text.is_char_boundary(*at)).unwrap();
            text.insert_str(at, &format!(" {form} "));
        }
    }
    text
}

fn with_escapes() -> String {
    let mut text = String::with_capacity(SIZE * 2);
    for (i, c) in clean().chars().enumerate() {
        if i % 64 == 0 {
            text.push_str("%2F");
        }
        text.push(c);
    }
    text
}

fn redactor() -> Redactor {
    let redactor = Redactor::new();
    for secret in SECRETS.iter() {
        redactor.add(secret).unwrap();
    }
    redactor
}

fn bench(bencher: Bencher, text: String) {
    let redactor = redactor();
    bencher.counter(BytesCount::new(text.len())).bench(|| redactor.redact(divan::black_box(&text)));
}

#[divan::bench]
fn clean_text(bencher: Bencher) {
    bench(bencher, clean());
}

#[divan::bench]
fn secrets(bencher: Bencher) {
    let text = with_secrets();
    let out = redactor().redact(&text);
    assert!(SECRETS.iter().all(|s| !out.contains(s.as_str())));
    assert_eq!(out.matches("[redacted]").count(), 40);
    bench(bencher, text);
}

#[divan::bench]
fn percent(bencher: Bencher) {
    bench(bencher, with_escapes());
}

#[divan::bench]
fn exact_only(bencher: Bencher) {
    let text = with_secrets();
    let mut secrets = SECRETS.clone();
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    bencher.counter(BytesCount::new(text.len())).bench(|| {
        let text = divan::black_box(&text);
        if !secrets.iter().any(|s| text.contains(s.as_str())) {
            return text.clone();
        }
        secrets.iter().fold(text.clone(), |text, secret| text.replace(secret.as_str(), "[redacted]"))
    });
}

#[divan::bench]
fn add(bencher: Bencher) {
    bencher.bench(redactor);
}

#[divan::bench]
fn add_one(bencher: Bencher) {
    bencher.bench(|| {
        let redactor = Redactor::new();
        redactor.add(&SECRETS[0]).unwrap();
        redactor
    });
}
