//! Copies the built dashboard (ui/dist) into OUT_DIR for include_dir, or a page that says how
//! to build it, so `cargo build` works before (and without) the UI build.

use std::path::{Path, PathBuf};

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

fn main() {
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let dist = manifest.join("../../ui/dist");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("ui");
    let _ = std::fs::remove_dir_all(&out);
    if dist.join("index.html").is_file() {
        println!("cargo:rerun-if-changed={}", dist.display());
        copy_dir(&dist, &out).expect("copy ui/dist");
    } else {
        // A path that does not exist makes cargo rerun this script on every build, which then
        // rebuilt the core and everything above it each time; the UI folder exists, and changes
        // when the dashboard gets built.
        println!(
            "cargo:rerun-if-changed={}",
            manifest.join("../../ui").display()
        );
        std::fs::create_dir_all(&out).expect("create OUT_DIR/ui");
        std::fs::write(
            out.join("index.html"),
            "<!doctype html><meta charset=utf-8><title>MetaClaw</title><p>The dashboard was not built. Run <code>scripts/build-ui.sh</code> and rebuild MetaClaw.</p>",
        )
        .expect("write placeholder");
    }
}
