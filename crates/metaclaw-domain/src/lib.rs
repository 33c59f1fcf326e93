//! Plain data shared across MetaClaw crates. No I/O lives here, except reading the time and
//! the local zone (`clock`, `zone`), which everything else takes from here.

mod clock;
mod event;
mod turn;
mod zone;

pub use clock::{Clock, ManualClock, SystemClock};
pub use event::{Event, SessionEndReason};
pub use turn::{DEFAULT_AGENT, Dialect, SessionSource, TurnRecord, TurnStatus, TurnType, Usage};
pub use zone::{LocalZone, local_zone};
