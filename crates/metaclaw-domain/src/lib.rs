//! Plain data shared across MetaClaw crates. No I/O lives here.

mod clock;
mod event;
mod turn;

pub use clock::{Clock, ManualClock, SystemClock};
pub use event::{Event, SessionEndReason};
pub use turn::{Dialect, SessionSource, TurnRecord, TurnStatus, TurnType, Usage};
