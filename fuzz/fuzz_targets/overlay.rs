//! A real fixture with one entry replaced by fuzzer bytes (the first two bytes pick the fixture and the entry):
//! diagnose and the State Data Source reader must end in findings or errors, never a panic or a hang; and the
//! verdict-first diagnosis (`diagnose_progressive`) must end in the same report, its early verdict predicting the
//! same restart (the assumption's evidence of the writer's version may grow with the log files read after it).
#![no_main]
use checkpoint_core::archive::{Archive, Limits, MemArchive, ZipInput};
use checkpoint_core::report::RestartPrediction;
use checkpoint_core::state::{read_state, StateQuery};
use checkpoint_core::{diagnose, diagnose_progressive, Context};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const FIXTURES: [&[u8]; 3] = [
    include_bytes!("../../../shared/fixtures/ss-4.3.0-agg-hdfs.zip"),
    include_bytes!("../../../shared/fixtures/ss-4.3.0-agg-rocksdb-changelog.zip"),
    include_bytes!("../../../shared/fixtures/ss-4.1.4-agg-rocksdb-ckptv2.zip"),
];

type Files = Vec<(String, Vec<u8>)>;

fn files() -> &'static [Files] {
    static F: OnceLock<Vec<Files>> = OnceLock::new();
    F.get_or_init(|| {
        FIXTURES
            .iter()
            .map(|z| {
                let mut a = ZipInput::open(std::io::Cursor::new(*z), z.len() as u64, "f", Limits::default()).unwrap();
                let paths: Vec<String> = a.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
                paths.into_iter().map(|p| (p.clone(), a.read(&p, 1 << 30).unwrap())).collect()
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let all = files();
    let mut fs = all[data[0] as usize % all.len()].clone();
    let i = data[1] as usize % fs.len();
    fs[i].1 = data[2..].to_vec();
    let mut a = MemArchive::new("overlay", fs.clone(), Limits::default()).unwrap();
    let one = diagnose(&mut a, &Context::default());
    let _ = read_state(&mut a, "", &StateQuery::default());
    // The verdict first (the page's path), cut to one log file so that it runs on these small fixtures: it must
    // end in the very report of the one pass, and its early verdict predict the same restart.
    let ctx = Context { verdict_log_files: Some(1), ..Context::default() };
    let mut b = MemArchive::new("overlay", fs, Limits::default()).unwrap();
    let mut early = Vec::new();
    let last = diagnose_progressive(&mut b, &ctx, &mut |r| {
        early.push(r.checkpoints.iter().map(|c| c.restart.clone()).collect::<Vec<_>>())
    });
    // `==` first (cheap); a NaN compares unequal to itself, so reports that differ by `==` are compared again as
    // Debug text, where the same NaN reads the same.
    assert!(
        last == one || format!("{last:?}") == format!("{one:?}"),
        "diagnose_progressive's report is not diagnose's"
    );
    if let Some(e) = early.first() {
        // The restart, not the evidence its assumption cites: an older log file read after the verdict may show a
        // newer writer ("written by Spark ≥ 4.3.0" where the verdict said ≥ 4.1.0; tests/progressive.rs
        // `an_older_log_file_of_a_newer_writer_sharpens_the_assumption_not_the_restart`).
        assert_eq!(
            e.iter().map(restart_of).collect::<Vec<_>>(),
            last.checkpoints.iter().map(|c| restart_of(&c.restart)).collect::<Vec<_>>(),
            "the early verdict predicts another restart"
        );
    }
});

/// A restart prediction without the evidence of the writer's version that its assumption cites (`assumption`,
/// also in `summary`).
fn restart_of(p: &RestartPrediction) -> impl PartialEq + std::fmt::Debug {
    let summary = match &p.assumption {
        Some(a) => p.summary.replace(a.as_str(), ""),
        None => p.summary.clone(),
    };
    (
        p.outcome,
        p.error_class.clone(),
        p.exception.clone(),
        p.assumed_spark_version.clone(),
        p.first_batch_id,
        p.state_version_loaded,
        summary,
    )
}
