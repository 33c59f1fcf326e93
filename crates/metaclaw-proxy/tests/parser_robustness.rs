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
        b"{\"input\": [null, 1, {\"type\": 5}, {\"type\": \"function_call\"}]}",
        b"{\"input\": [{\"role\": \"user\", \"content\": [{\"type\": \"input_image\"}, 7]}], \"tools\": [5, {\"type\": \"function\", \"name\": 1}]}",
        b"{\"input\": [{\"type\": \"function_call_output\", \"call_id\": \"c\", \"output\": [{\"type\": \"input_text\"}]}], \"instructions\": \"\", \"max_output_tokens\": 18446744073709551615}",
        b"{\"input\": \"x\", \"tool_choice\": {\"type\": \"function\"}, \"text\": {\"format\": {\"type\": \"json_schema\", \"schema\": 3}}, \"reasoning\": 1}",
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
            assert_responses_grammar(&out.translated_responses);
        }
    }
}

/// The re-encoded Responses stream: named events whose data's `type` is the name, numbered
/// from 0, ending in a terminal response event.
fn assert_responses_grammar(bytes: &[u8]) {
    let text = std::str::from_utf8(bytes).expect("UTF-8");
    let mut last = String::new();
    for (i, event) in text.split_terminator("\n\n").enumerate() {
        let (name, data) = event
            .strip_prefix("event: ")
            .and_then(|e| e.split_once("\ndata: "))
            .unwrap_or_else(|| panic!("malformed event {event:?}"));
        let data: serde_json::Value = serde_json::from_str(data).expect("JSON data");
        assert_eq!(data["type"], name);
        assert_eq!(data["sequence_number"], i as u64);
        last = name.to_owned();
    }
    assert!(
        matches!(
            last.as_str(),
            "response.completed" | "response.incomplete" | "response.failed"
        ),
        "ends with {last:?}"
    );
}
