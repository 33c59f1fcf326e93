//! Tinker answers: any status, content type (JSON or protobuf) and body through every decoder
//! the client runs (submit answers, `retrieve_future` results, error bodies). A protobuf result
//! that decodes re-encodes to the same value.
//!
//! Input: one byte picks the status, one the content type, the rest is the body.
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use tinker_client::exercise_result;
use tinker_client::wire::proto;

const STATUSES: [u16; 9] = [200, 400, 402, 408, 410, 429, 500, 503, 404];
const CONTENT_TYPES: [&str; 3] = [
    "application/x-protobuf",
    "application/json",
    "text/plain; charset=utf-8",
];

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let (Ok(status), Ok(content_type)) = (u.choose(&STATUSES), u.choose(&CONTENT_TYPES)) else {
        return;
    };
    let body = u.take_rest();
    let out = exercise_result(*status, content_type, body);
    if !content_type.starts_with("application/x-protobuf") {
        return;
    }
    // Debug text compares NaN logprobs as equal, which `PartialEq` does not.
    if let Ok(sample) = proto::decode_sample_response(body) {
        let bytes = proto::encode_sample_response(&sample).expect("a decoded sample re-encodes");
        let again = proto::decode_sample_response(&bytes).expect("re-encoded sample decodes");
        assert_eq!(format!("{again:?}"), format!("{sample:?}"));
    }
    if let Some(Ok(output)) = &out.forward_backward {
        let bytes = proto::encode_forward_backward_output(output);
        let again =
            proto::decode_forward_backward_output(&bytes).expect("re-encoded output decodes");
        assert_eq!(format!("{again:?}"), format!("{output:?}"));
    }
});
