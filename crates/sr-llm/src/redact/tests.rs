use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use serde_json::json;

use super::*;

/// A key shaped like a real one.
const KEY: &str = "sk-proj-Qx7vN2pL9sK4mR8tW1yZ5bC3dF6gH0jA";

fn redactor(secrets: &[&str]) -> Redactor {
    let redactor = Redactor::new();
    for secret in secrets {
        redactor.add(secret).unwrap();
    }
    redactor
}

/// Bytes that are not text (a small linear congruential generator).
fn filler(seed: u64, n: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as u8
        })
        .collect()
}

/// Whether `bytes` holds `window` consecutive bytes of `secret`.
fn holds(bytes: &[u8], secret: &[u8], window: usize) -> bool {
    bytes.windows(window).any(|w| secret.windows(window).any(|s| s == w))
}

/// Whether any run of base64 characters in `text`, decoded (by the base64
/// crate) from each of its first four characters in either alphabet, or any
/// run of hex digits decoded from either of its first two, holds six
/// consecutive bytes of `secret`.
fn leaks(text: &str, secret: &[u8]) -> bool {
    let base64_runs = text.split(|c: char| !(c.is_ascii_alphanumeric() || "+/-_".contains(c)));
    for run in base64_runs {
        let run: String = run
            .chars()
            .map(|c| {
                if c == '-' {
                    '+'
                } else if c == '_' {
                    '/'
                } else {
                    c
                }
            })
            .collect();
        for skip in 0..run.len().min(4) {
            let part = &run[skip..];
            let part = &part[..part.len() - part.len() % 4];
            if STANDARD_NO_PAD.decode(part).is_ok_and(|bytes| holds(&bytes, secret, 6)) {
                return true;
            }
        }
    }
    for run in text.split(|c: char| !c.is_ascii_hexdigit()) {
        for skip in 0..run.len().min(2) {
            let part = &run[skip..];
            let bytes: Vec<u8> = part
                .as_bytes()
                .chunks_exact(2)
                .filter_map(|d| u8::from_str_radix(std::str::from_utf8(d).ok()?, 16).ok())
                .collect();
            if holds(&bytes, secret, 6) {
                return true;
            }
        }
    }
    holds(text.as_bytes(), secret, 6)
}

#[test]
fn every_occurrence_of_every_secret_is_replaced() {
    let r = redactor(&["tok-123", "tok-123456"]);
    assert_eq!(r.add("abc"), Err(TooShort { len: 3 }));
    assert_eq!(r.add(""), Ok(()));
    assert_eq!(r.redact("Bearer tok-123456 and tok-123, abc"), "Bearer [redacted] and [redacted], abc");
    let mut value = json!({"a": ["x tok-123 y", {"tok-123": 1}], "b": 2});
    assert!(r.redact_value(&mut value));
    assert_eq!(value, json!({"a": ["x [redacted] y", {"[redacted]": 1}], "b": 2}));
    assert!(!r.redact_value(&mut json!({"clean": "text"})));
    assert_eq!(r.redact_str("nothing here"), None);
    assert_eq!(format!("{r:?}"), "Redactor(2 secrets)");
}

/// Two secrets that overlap in the text are covered together: nothing of
/// either is left between them.
#[test]
fn overlapping_secrets_are_covered_whole() {
    let r = redactor(&["abcdef-123", "xyz-abcd"]);
    assert_eq!(r.redact("<xyz-abcdef-123>"), "<[redacted]>");
    assert_eq!(r.redact("abcdef-123abcdef-123"), "[redacted][redacted]");
}

/// The key inside a longer base64 text, at every offset from the start and
/// the end, in both alphabets, padded or not: nothing that decodes to six of
/// its bytes is left, and the text around the blob is untouched.
#[test]
fn a_key_inside_longer_base64_is_redacted_at_every_alignment() {
    let r = redactor(&[KEY]);
    for before in 0..7 {
        for after in 0..4 {
            let mut blob = filler(before as u64, before);
            blob.extend_from_slice(KEY.as_bytes());
            blob.extend(filler(100 + after as u64, after));
            for engine in [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD] {
                let text = format!("data: {} end", engine.encode(&blob));
                assert!(leaks(&text, KEY.as_bytes()), "the check sees the key in {text}");
                let out = r.redact(&text);
                assert!(out.contains(REDACTED) && !leaks(&out, KEY.as_bytes()), "{before} {after}: {text} → {out}");
                assert!(out.starts_with("data: ") && out.ends_with(" end"), "{out}");
            }
        }
    }
    // Alone, padded: the padding goes with it.
    assert_eq!(r.redact(&format!("k={}!", STANDARD.encode(KEY))), "k=[redacted]!");
}

#[test]
fn hex_in_either_case_is_redacted_also_inside_longer_hex() {
    let r = redactor(&[KEY]);
    let hex = |bytes: &[u8]| bytes.iter().fold(String::new(), |out, b| out + &format!("{b:02x}"));
    for before in 0..3 {
        let mut blob = filler(7, before);
        blob.extend_from_slice(KEY.as_bytes());
        blob.extend(filler(8, 2));
        for text in [hex(&blob), hex(&blob).to_uppercase()] {
            let out = r.redact(&format!("0x{text}"));
            assert!(out.contains(REDACTED) && !leaks(&out, KEY.as_bytes()), "{text} → {out}");
        }
    }
}

/// A secret with characters URLs escape, escaped every way encoders do it:
/// all of them, every byte, in either case, or only some.
#[test]
fn percent_encoded_secrets_are_redacted_in_any_mix() {
    let secret = "p@ss/w0rd+k=42&é";
    let r = redactor(&[secret]);
    let escape = |keep: &dyn Fn(u8) -> bool, upper: bool| -> String {
        secret
            .bytes()
            .map(|b| match (keep(b), upper) {
                (true, _) => (b as char).to_string(),
                (false, true) => format!("%{b:02X}"),
                (false, false) => format!("%{b:02x}"),
            })
            .collect()
    };
    let unreserved = |b: u8| b.is_ascii_alphanumeric() || b"-._~".contains(&b);
    let slash_kept = |b: u8| unreserved(b) || b == b'/';
    for encoded in [
        escape(&unreserved, true),
        escape(&unreserved, false),
        escape(&|_| false, true),
        escape(&|_| false, false),
        escape(&slash_kept, true),
    ] {
        let text = format!("https://host/cb?token={encoded}&next=1");
        let out = r.redact(&text);
        assert_eq!(out, "https://host/cb?token=[redacted]&next=1", "{encoded}");
    }
    // Base64 of the secret with its `+`, `/` and `=` escaped, as in a URL.
    let b64 = STANDARD.encode(secret).replace('+', "%2B").replace('/', "%2F").replace('=', "%3D");
    assert!(!r.redact(&format!("q={b64}")).contains(&b64[2..b64.len() - 6]));
}

/// A stream holds back the end of a piece that could begin any form of a
/// secret, so a form split over two pieces is still redacted whole.
#[test]
fn streams_hold_back_the_start_of_any_form() {
    let r = redactor(&[KEY]);
    let hex = KEY.bytes().fold(String::new(), |out, b| out + &format!("{b:02X}"));
    for form in [KEY.to_string(), STANDARD.encode(KEY), URL_SAFE_NO_PAD.encode(KEY), hex] {
        let text = format!("see {form} here");
        for cut in 1..text.len() {
            let mut pending = String::new();
            let mut shown = String::new();
            for piece in [&text[..cut], &text[cut..]] {
                pending.push_str(piece);
                let ready = pending.len() - r.held_back(&pending);
                shown.push_str(&r.redact(&pending.drain(..ready).collect::<String>()));
            }
            shown.push_str(&r.redact(&pending));
            assert_eq!(shown, "see [redacted] here", "{form} cut at {cut}");
        }
    }
    assert_eq!(r.held_back("nothing"), 0);
}

/// Random text made of the secret's characters, escapes and hex digits never
/// panics (multi-byte characters included) and never keeps the secret.
#[test]
fn random_text_near_a_secret_never_panics() {
    let secret = "kéy%41-5ecret";
    let r = redactor(&[secret]);
    let alphabet: Vec<char> = "kéy%41-5ecrtE%%Aaf0".chars().collect();
    for seed in 0..2_000u64 {
        let bytes = filler(seed, 40);
        let mut text: String = bytes.iter().map(|b| alphabet[*b as usize % alphabet.len()]).collect();
        if seed % 3 == 0 {
            let at = text.char_indices().nth(seed as usize % 40).map_or(text.len(), |(at, _)| at);
            text.insert_str(at, secret);
        }
        let out = r.redact(&text);
        assert!(!out.contains(secret), "{text} → {out}");
    }
}

/// `text` with a line break (`eol`) after every `width` characters, as
/// `base64 -w WIDTH`, `xxd -p` (60), PEM (64) and MIME (76, `\r\n`) print it.
fn wrap(text: &str, width: usize, eol: &str) -> String {
    let lines: Vec<String> =
        text.as_bytes().chunks(width).map(|line| String::from_utf8_lossy(line).into_owned()).collect();
    lines.join(eol)
}

/// The encodings of a key, and of the key after `lead` other bytes, that a
/// command prints: base64 in both alphabets, hex in both cases.
fn encodings(lead: usize) -> Vec<(&'static str, String)> {
    let mut blob = filler(lead as u64, lead);
    blob.extend_from_slice(KEY.as_bytes());
    blob.extend(filler(7, 5));
    let hex = blob.iter().fold(String::new(), |out, b| out + &format!("{b:02x}"));
    vec![
        ("base64", STANDARD.encode(&blob)),
        ("base64url", URL_SAFE_NO_PAD.encode(&blob)),
        ("hex", hex.clone()),
        ("HEX", hex.to_uppercase()),
    ]
}

/// Every encoding of the key, at every alignment, wrapped at every width from
/// 1 to 80 with `\n` and with `\r\n`: redacted, and nothing that decodes to
/// six of the key's bytes is left, with the line breaks taken out or not;
/// the text around it is untouched.
#[test]
fn wrapped_encodings_are_redacted_at_every_width() {
    let r = redactor(&[KEY]);
    for lead in 0..3 {
        for (encoding, encoded) in encodings(lead) {
            for width in 1..=80 {
                for eol in ["\n", "\r\n"] {
                    let text = format!("out:\n{}\nend\n", wrap(&encoded, width, eol));
                    let out = r.redact(&text);
                    let joined = out.replace(['\r', '\n'], "");
                    assert!(
                        out.contains(REDACTED) && !leaks(&joined, KEY.as_bytes()) && !leaks(&out, KEY.as_bytes()),
                        "{encoding} lead {lead} width {width} {eol:?}: {text:?} → {out:?}"
                    );
                    assert!(out.starts_with("out:\n") && out.ends_with("\nend\n"), "{out:?}");
                }
            }
        }
    }
}

/// A key kept as a PEM file is found whole, its lines ending in `\n` or
/// `\r\n`; its base64 sent as a MIME part (76 columns, `\r\n`) is too.
#[test]
fn pem_and_mime_are_redacted() {
    let body = STANDARD.encode(filler(3, 120));
    let pem = format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", wrap(&body, 64, "\n"));
    let r = redactor(&[&pem]);
    for eol in ["\n", "\r\n"] {
        let shown = format!("cat key.pem:\n{}", pem.replace('\n', eol));
        let out = r.redact(&shown);
        assert!(!out.contains(&body[..64]) && !out.contains(&body[64..128]), "{eol:?}: {out:?}");
        let mime = format!("Content-Transfer-Encoding: base64\r\n\r\n{}\r\n", wrap(&STANDARD.encode(&pem), 76, "\r\n"));
        let out = r.redact(&mime);
        assert!(out.contains(REDACTED) && !leaks(&out.replace(['\r', '\n'], ""), pem.as_bytes()), "{out:?}");
    }
}

/// A stream holds back a wrapped form's start across its line breaks: cut
/// anywhere, the pieces shown hold none of the key.
#[test]
fn streams_hold_back_a_wrapped_form() {
    let r = redactor(&[KEY]);
    for (width, eol) in [(4, "\n"), (60, "\n"), (76, "\r\n")] {
        let text = format!("see\n{}\nhere", wrap(&STANDARD.encode(KEY), width, eol));
        for cut in 1..text.len() {
            let mut pending = String::new();
            let mut shown = String::new();
            for piece in [&text[..cut], &text[cut..]] {
                pending.push_str(piece);
                let ready = pending.len() - r.held_back(&pending);
                shown.push_str(&r.redact(&pending.drain(..ready).collect::<String>()));
            }
            shown.push_str(&r.redact(&pending));
            assert!(!leaks(&shown.replace(['\r', '\n'], ""), KEY.as_bytes()), "width {width} cut at {cut}: {shown:?}");
        }
    }
}
