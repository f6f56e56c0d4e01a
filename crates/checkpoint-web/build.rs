//! Lists, for the wasm tests, every fixture in ../shared/fixtures with Spark's State Data Source output
//! (`<name>.state.jsonl`): the tests embed them (a wasm test cannot open files), so a new fixture is picked up
//! without editing a list. Writes `$OUT_DIR/state_fixtures.rs`: `&[(name, zip bytes, golden jsonl text)]`.
use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok()?.file_name().to_str().map(str::to_string))
                .filter_map(|n| n.strip_suffix(".state.jsonl").map(str::to_string))
                .filter(|n| dir.join(format!("{n}.zip")).exists())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut out = String::from("&[\n");
    for n in &names {
        let zip = dir.join(format!("{n}.zip"));
        let golden = dir.join(format!("{n}.state.jsonl"));
        out.push_str(&format!(
            "    ({n:?}, include_bytes!({:?}) as &[u8], include_str!({:?})),\n",
            zip.display().to_string(),
            golden.display().to_string()
        ));
    }
    out.push_str("]\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into())).join("state_fixtures.rs");
    // A build script cannot report more usefully than by failing the build.
    std::fs::write(&dest, out).unwrap_or_else(|e| panic!("cannot write {}: {e}", dest.display()));
}
