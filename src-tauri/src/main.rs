//! The desktop tray app: a thin shell over the same core the `metaclaw` daemon runs.
//! The tray-app work adds Tauri (tray, window, notifications); this crate is deliberately
//! outside `default-members` so a plain `cargo build` never needs the webkit packages.

fn main() {
    let _ = metaclaw_core::start;
}
