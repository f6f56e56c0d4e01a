//! The Web Worker's entry point (Trunk: `<link data-trunk rel="rust" data-bin="worker" data-type="worker">`).

fn main() {
    checkpoint_web::worker::start_worker();
}
