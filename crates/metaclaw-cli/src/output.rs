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

/// A progress bar on stderr (hidden when stderr is not a terminal).
pub fn progress_bar() -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

/// A line of output that keeps a progress bar below it.
pub fn say_above(bar: &indicatif::ProgressBar, line: &str) {
    if bar.is_hidden() {
        say(line);
    } else {
        bar.println(line);
    }
}
