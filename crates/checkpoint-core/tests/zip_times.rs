//! Zip entries' modification times: a zip header's DOS date-time is the zipping machine's local time, so a zip
//! made in UTC+8 put a commit 8 hours in the future ("committed -25200 seconds ago"). The UTC times zip tools
//! add (Info-ZIP's and Java's extended timestamp, 7-Zip's NTFS times) are the ones read; a zip without them
//! keeps the DOS time.

mod common;
use common::*;

use checkpoint_core::archive::{Archive, Limits, ZipInput};
use checkpoint_core::report::Code;
use checkpoint_core::{diagnose, Context};
use std::io::{Cursor, Write};

/// 2026-12-01T00:00:00Z.
const MIDNIGHT_S: u32 = 1_796_083_200;

/// The real 4.0.5 checkpoint zipped with the DOS time of a machine in UTC+8 (08:00 local for 00:00 UTC) and,
/// per `utc`, an extended timestamp, NTFS times or no UTC time.
fn zipped(utc: &str) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let local = zip::DateTime::from_date_and_time(2026, 12, 1, 8, 0, 0).unwrap();
    for (p, b) in load("ss-4.0.5-agg-hdfs") {
        let o = zip::write::FullFileOptions::default().last_modified_time(local);
        let o = match utc {
            "extended" => o.with_extended_timestamp(Some(MIDNIGHT_S), None, None).unwrap(),
            "ntfs" => {
                let ft = (u64::from(MIDNIGHT_S) * 1000 + 11_644_473_600_000) * 10_000;
                o.with_ntfs_times(ft, ft, ft).unwrap()
            }
            _ => o,
        };
        w.start_file(p, o).unwrap();
        w.write_all(&b).unwrap();
    }
    w.finish().unwrap().into_inner()
}

fn last_activity(z: Vec<u8>) -> String {
    let len = z.len() as u64;
    let mut a = ZipInput::open(Cursor::new(z), len, "t.zip", Limits::default()).unwrap();
    let ctx = Context { now_ms: Some(i64::from(MIDNIGHT_S) * 1000 + 3_600_000), ..Default::default() };
    let r = diagnose(&mut a, &ctx);
    r.checkpoints[0].findings.iter().find(|f| f.code == Code::LastActivityAge).expect("an age").title.clone()
}

#[test]
fn the_utc_time_a_zip_tool_recorded_is_the_entry_time() {
    for utc in ["extended", "ntfs"] {
        let z = zipped(utc);
        let len = z.len() as u64;
        let a = ZipInput::open(Cursor::new(z.clone()), len, "t.zip", Limits::default()).unwrap();
        assert!(a.entries().iter().all(|e| e.modified_ms == Some(i64::from(MIDNIGHT_S) * 1000)), "{utc}");
        let t = last_activity(z);
        assert!(t.contains("the query last committed 60 minutes ago"), "{utc}: {t}");
    }
    // Without a UTC time, the DOS time is all there is: read as UTC, 7 hours after now, never a negative age.
    let t = last_activity(zipped("none"));
    assert!(t.contains("the query last committed 7 hours after now"), "{t}");
}
