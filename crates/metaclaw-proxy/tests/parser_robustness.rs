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
