//! Fingerprints the migrations folder so test harnesses can reuse a template database only while
//! the migrations it was built from are unchanged.

use std::fs;
use std::path::Path;

fn main() {
    let root = Path::new("../../migrations");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(root, &mut files);
    files.sort();
    // FNV-1a: stable across toolchains, unlike std's hasher.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for path in files {
        let name = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        let content = fs::read(&path).unwrap_or_default();
        for byte in name.bytes().chain(content) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=MIGRATIONS_FINGERPRINT={hash:016x}");
}

fn collect(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}
