//! Wire encodings: JSON bodies and the `tinker_public` protobuf schema.

pub mod json;
pub mod proto;

/// Types generated from `proto/tinker_public.proto` by `prost-build`.
#[allow(clippy::all, missing_docs)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/tinker_public.rs"));
}
