//! Feeds arbitrary bytes to the scheduler's `.ics` entry point: parse, then expand the busy
//! intervals. Must never panic, hang or overflow the stack.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = metaclaw_scheduler::ics::fuzz_entry(data);
});
