//! The MetaClaw desktop app: a thin shell over the same core the `metaclaw` daemon runs, in
//! this process. The tray menu flips the core's switches through the core's API, in process,
//! the window shows the dashboard the core serves, and notifications follow the event bus.

pub mod autostart;
pub mod prefs;
mod shell;
pub mod status;
pub mod tray;

pub use shell::main;
