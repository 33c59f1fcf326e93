//! Compiles `proto/tinker_public.proto` with `protox` (pure Rust) so no `protoc`
//! binary is needed on build machines.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/tinker_public.proto");
    let fds = protox::compile(["proto/tinker_public.proto"], ["proto"])?;
    prost_build::Config::new()
        // BTreeMap keeps decoded maps deterministic for structural comparisons.
        .btree_map(["."])
        .compile_fds(fds)?;
    Ok(())
}
