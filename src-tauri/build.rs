fn main() {
    // Reads tauri.conf.json beside the package manifest (the repository root) and the
    // capabilities in src-tauri/capabilities.
    tauri_build::try_build(
        tauri_build::Attributes::new().capabilities_path_pattern("src-tauri/capabilities/**/*"),
    )
    .expect("tauri-build failed");
}
