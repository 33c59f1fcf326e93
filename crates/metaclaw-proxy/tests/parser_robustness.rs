//! The fuzz target's body over hand-picked hostile inputs, so every `cargo test` covers it.

use metaclaw_proxy::exercise_request_parser;

#[test]
fn hostile_bodies_never_panic() {
    let cases: &[&[u8]] = &[
        b"",
        b"\xff\xfe\xfd",
        b"null",
        b"[]",
        b"{\"messages\": null}",
        b"{\"messages\": [null, 1, \"x\", {}]}",
        b"{\"messages\": [{\"role\": 5}]}",
        b"{\"messages\": [{\"role\": \"tool\"}], \"max_tokens\": 1e309}",
        b"{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"tool_result\"}]}], \"system\": [1, {\"text\": 2}]}",
        b"{\"messages\": [{\"role\": \"assistant\", \"content\": [{\"type\": \"tool_use\", \"input\": \"x\"}]}]}",
        b"{\"messages\": [{\"role\": \"user\", \"content\": \"sessionId=\"}], \"prompt_cache_key\": \":::\"}",
        b"{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}], \"max_tokens\": 18446744073709551615, \"tools\": [{}]}",
        b"{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"image\", \"source\": {\"type\": \"base64\"}}]}]}",
        b"{\"a\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
        b"{\"messages\": [{\"role\": \"user\", \"content\": \"\\ud800\"}]}",
    ];
    for case in cases {
        exercise_request_parser(case);
    }
    // Deeply nested input is refused by the JSON parser's recursion limit, not a stack overflow.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    exercise_request_parser(deep.as_bytes());
}

/// The sse_capture target's body over hostile upstream answers, split at awkward places.
#[test]
fn hostile_upstream_streams_never_panic() {
    let cases: &[&[u8]] = &[
        b"",
        b"\xff\xfe",
        b"data: {\"type\": \"message_start\", \"message\": 5}\n\ndata: {\"type\": \"message_delta\", \"delta\": {\"a\": 1}}\n\n",
        b"data: {\"choices\": [{\"delta\": {\"tool_calls\": [{\"index\": 4000000000}]}}]}\n\n",
        b"data: {\"choices\": [{\"delta\": {\"content\": \"\xc3\xa9\"}}]}\r\n\r\ndata: [DONE]\r\n\r\n",
        b"data: {\"error\": 5}\n\n",
        b"{\"choices\": 5, \"messages\": [{\"role\": \"user\", \"content\": 1}]}",
    ];
    for case in cases {
        for cut in 0..case.len().min(40) {
            let (a, b) = case.split_at(cut);
            let out = metaclaw_proxy::exercise_upstream(&[a, b], "m");
            if let Some(whole) = &out.whole_events {
                assert_eq!(&out.chunked_events, whole, "{case:?} cut at {cut}");
            }
        }
    }
}
