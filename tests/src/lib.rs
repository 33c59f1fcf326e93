//! Test support for MetaClaw: the mock upstream LLM (library + `mock-upstream` bin).

pub mod eval;
pub mod mock_upstream;
pub mod year_home;
