//! The only place the CLI writes to the terminal.

use std::io::Write;
use std::process::ExitCode;

pub fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
}

pub fn warn(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "warning: {line}");
}

pub fn fail(message: &str, code: u8) -> ExitCode {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "error: {message}");
    ExitCode::from(code)
}
