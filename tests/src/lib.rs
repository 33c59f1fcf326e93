//! Test support for MetaClaw: the mock upstream LLM (library + `mock-upstream` bin) and what
//! the benchmarks share.

pub mod agents;
pub mod bench;
pub mod eval;
pub mod mock_upstream;
pub mod wait;
pub mod year_home;
