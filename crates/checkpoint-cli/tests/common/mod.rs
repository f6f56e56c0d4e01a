//! Helpers shared by the CLI's integration tests: the binary, a scratch folder, the shared fixtures.

#![allow(dead_code, reason = "each test crate uses its own part of this file")]

use std::path::PathBuf;
use std::process::Command;

/// The `checkpoint-inspector` binary cargo built for this test run.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_checkpoint-inspector"))
}

/// A fresh scratch folder for one test (`<tmp>/ci-<tag>-<pid>-<name>`), emptied first.
pub fn tmp(tag: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ci-{tag}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch folder");
    d
}

/// The shared fixtures folder (`<repo>/../shared/fixtures`).
pub fn fixtures() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures"))
}

/// A file of the shared fixtures folder.
pub fn fixture(name: &str) -> PathBuf {
    fixtures().join(name)
}
