use checkpoint_core::state::rocksdb::sst::{read_sst, SstLimits};
#[test]
fn explore() {
    for dir in [
        "/tmp/h3/ss-4.1.4-agg-rocksdb/state/0/0/SSTs",
        "/tmp/h3/ss-4.3.0-tws-pandas/state/0/1/SSTs",
        "/tmp/h3/ss-3.5.9-agg-rocksdb/state/0/0/SSTs",
    ] {
        for f in std::fs::read_dir(dir).unwrap() {
            let p = f.unwrap().path();
            if !p.to_string_lossy().ends_with(".sst")
                || p.file_name().unwrap().to_string_lossy().starts_with('.')
            {
                continue;
            }
            let b = std::fs::read(&p).unwrap();
            let t = read_sst(&b, SstLimits::default());
            match t {
                Ok(t) => {
                    println!(
                        "{} fv={} {:?} props={:?} blocks={}",
                        p.display(),
                        t.footer.format_version,
                        t.footer.checksum,
                        t.properties,
                        t.data_blocks
                    );
                    for e in &t.entries {
                        println!(
                            "  {:02x?} seq={} {:?} {:02x?}",
                            e.user_key, e.seq, e.kind, e.value
                        );
                    }
                }
                Err(e) => println!("{} ERR {e}", p.display()),
            }
        }
    }
}
