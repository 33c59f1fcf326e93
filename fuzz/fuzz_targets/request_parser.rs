#![no_main]
//! Any bytes sent to /v1/chat/completions or /v1/messages must end in a value or a clear
//! error, never a panic: parse, validate, translate and truncate them.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    metaclaw_proxy::exercise_request_parser(data);
});
