//! MetaClaw-Bench from a user's checkout: simulated workdays of `file_check` rounds graded
//! by checker scripts in the day's workspace and `multi_choice` rounds answered as
//! `\bbox{A,C}`, with feedback after each round. The data is never bundled or downloaded.
//!
//! `layout` reads the variant folder (`all_tests.json`, `eval/dayNN/questions.json`, the
//! seeded day transcripts, the shared workspace); a malformed file or round is reported with
//! its file and line and skipped. `round` grades an answer and words the feedback the next
//! round is prefixed with. `report` turns round outcomes into the per-arm table.

pub mod layout;
pub mod report;
pub mod round;

pub use layout::{Bench, Day, FileProblem};
pub use report::{ArmTable, DayScore, RoundOutcome};
pub use round::{Grade, Round, RoundKind};
