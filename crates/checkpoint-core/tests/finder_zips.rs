//! Zips made by macOS Finder ("Compress"): beside the zipped folder, Finder writes a `__MACOSX/` copy of the
//! tree holding an AppleDouble `._<name>` file per file (resource fork, extended attributes). The diagnosis
//! of such a zip is the diagnosis of the folder alone: no second checkpoint, no orphan sidecar, no member.

mod common;
use common::*;

/// The AppleDouble header Finder writes (magic 0x00051607, version 2), padded as a small `._` file is.
fn apple_double() -> Vec<u8> {
    let mut b = vec![0x00, 0x05, 0x16, 0x07, 0x00, 0x02, 0x00, 0x00];
    b.resize(82, 0);
    b
}

/// `files` under `folder` (`""`: at the top), with Finder's `__MACOSX/` twin of each file.
fn as_finder_zips_it(files: &[(String, Vec<u8>)], folder: &str) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (p, b) in files {
        let p = if folder.is_empty() { p.clone() } else { format!("{folder}/{p}") };
        let (dir, name) = p.rsplit_once('/').map_or(("", p.as_str()), |(d, n)| (d, n));
        let twin = if dir.is_empty() { format!("__MACOSX/._{name}") } else { format!("__MACOSX/{dir}/._{name}") };
        out.push((p.clone(), b.clone()));
        out.push((twin, apple_double()));
    }
    out
}

#[test]
fn a_finder_zip_is_diagnosed_as_the_folder_alone() {
    for fixture in [
        "ss-4.0.5-agg-hdfs",
        "ss-3.5.9-agg-rocksdb-changelog",
        "ss-3.5.9-join",
        "broken-ss-3.5.9-missing-delta",
        "broken-ss-3.5.9-missing-metadata",
    ] {
        let files = load(fixture);
        for folder in ["", "ckpt"] {
            let plain: Vec<(String, Vec<u8>)> = files
                .iter()
                .map(|(p, b)| (if folder.is_empty() { p.clone() } else { format!("{folder}/{p}") }, b.clone()))
                .collect();
            let want = checkpoint_reports(plain);
            let got = checkpoint_reports(as_finder_zips_it(&files, folder));
            assert_eq!(got.len(), 1, "{fixture} in {folder:?}: one checkpoint");
            assert_eq!(got, want, "{fixture} in {folder:?}: the report of the folder alone");
        }
    }
}
