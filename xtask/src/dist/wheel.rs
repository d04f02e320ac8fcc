//! A Python wheel that installs the binaries as scripts (what maturin's `bin`
//! bindings produce): `pip install streetrace_rs-*.whl` puts `sr` on the
//! venv's PATH with no Python dependency.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine;
use sha2::Digest;

const DISTRIBUTION: &str = "streetrace_rs";

pub fn build(out: &Path, version: &str, binaries: &[&str], notices: &str) -> Result<PathBuf, String> {
    let glibc = required_glibc(&out.join("sr"))?;
    let tag = format!("py3-none-manylinux_2_{glibc}_x86_64");
    let path = out.join(format!("{DISTRIBUTION}-{version}-{tag}.whl"));
    let mut files: Vec<(String, Vec<u8>, u32)> = Vec::new();
    for binary in binaries {
        let bytes = std::fs::read(out.join(binary)).map_err(|e| format!("{binary}: {e}"))?;
        files.push((format!("{DISTRIBUTION}-{version}.data/scripts/{binary}"), bytes, 0o755));
    }
    let info = format!("{DISTRIBUTION}-{version}.dist-info");
    let metadata = format!(
        "Metadata-Version: 2.1\nName: streetrace-rs\nVersion: {version}\n\
         Summary: The StreetRace toolchain: check, format, run and debug .sr agent workloads\n\
         License: MIT\nRequires-Python: >=3.8\n"
    );
    let wheel = format!("Wheel-Version: 1.0\nGenerator: cargo xtask dist\nRoot-Is-Purelib: false\nTag: {tag}\n");
    let licence = std::fs::read(crate::root().join("LICENSE")).map_err(|e| format!("LICENSE: {e}"))?;
    files.push((format!("{info}/METADATA"), metadata.into_bytes(), 0o644));
    files.push((format!("{info}/WHEEL"), wheel.into_bytes(), 0o644));
    files.push((format!("{info}/licenses/LICENSE"), licence, 0o644));
    files.push((format!("{info}/licenses/THIRD_PARTY_LICENSES.md"), notices.as_bytes().to_vec(), 0o644));
    let mut record = String::new();
    for (name, bytes, _) in &files {
        let digest = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(bytes));
        record.push_str(&format!("{name},sha256={digest},{}\n", bytes.len()));
    }
    record.push_str(&format!("{info}/RECORD,,\n"));
    files.push((format!("{info}/RECORD"), record.into_bytes(), 0o644));
    write_zip(&path, &files).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

fn write_zip(path: &Path, files: &[(String, Vec<u8>, u32)]) -> zip::result::ZipResult<()> {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path)?);
    for (name, bytes, mode) in files {
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(*mode);
        zip.start_file(name.as_str(), options)?;
        zip.write_all(bytes)?;
    }
    zip.finish()?;
    Ok(())
}

/// The newest `GLIBC_2.N` symbol version the binary needs: the wheel's
/// manylinux tag, so pip refuses it on a system whose glibc is older.
fn required_glibc(binary: &Path) -> Result<u32, String> {
    let bytes = std::fs::read(binary).map_err(|e| format!("{}: {e}", binary.display()))?;
    let needle = b"GLIBC_2.";
    let newest = bytes
        .windows(needle.len())
        .enumerate()
        .filter(|(_, window)| *window == needle)
        .filter_map(|(at, _)| {
            let digits: String =
                bytes[at + needle.len()..].iter().take_while(|b| b.is_ascii_digit()).map(|&b| b as char).collect();
            digits.parse::<u32>().ok()
        })
        .max();
    newest.ok_or_else(|| format!("{} names no GLIBC_2.N version: not a glibc binary?", binary.display()))
}
