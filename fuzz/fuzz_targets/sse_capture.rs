//! An upstream answer delivered in arbitrary chunks: SSE parsing, the OpenAI→Anthropic and
//! OpenAI→Responses stream re-encoders, capture of OpenAI and Anthropic streams for the turn log, and the request and
//! response translators.
//!
//! Checks: chunk boundaries never change the events; the re-encoded stream is well-formed
//! Anthropic SSE (every event's data is a JSON object whose `type` is the event name, ending in
//! `message_stop` or `error`) that the capture turns into a message.
//!
//! Input: a byte N (0–15), N chunk lengths, then the body.
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use metaclaw_proxy::exercise_upstream;
use serde_json::Value;

fn split<'a>(mut u: Unstructured<'a>) -> arbitrary::Result<Vec<&'a [u8]>> {
    let n: u8 = u.int_in_range(0..=15)?;
    let lengths: Vec<u8> = (0..n).map(|_| u.arbitrary()).collect::<Result<_, _>>()?;
    let mut body = u.take_rest();
    let mut chunks = Vec::new();
    for len in lengths {
        let (head, tail) = body.split_at(usize::from(len).min(body.len()));
        chunks.push(head);
        body = tail;
    }
    chunks.push(body);
    Ok(chunks)
}

fuzz_target!(|data: &[u8]| {
    let Ok(chunks) = split(Unstructured::new(data)) else {
        return;
    };
    let out = exercise_upstream(&chunks, "claude-fuzz");
    if let Some(whole) = &out.whole_events {
        assert_eq!(
            &out.chunked_events, whole,
            "chunk boundaries changed the events"
        );
    }
    let text = std::str::from_utf8(&out.translated).expect("the re-encoded stream is UTF-8");
    let mut last = "";
    for event in text.split_terminator("\n\n") {
        let (name, data) = event
            .strip_prefix("event: ")
            .and_then(|e| e.split_once("\ndata: "))
            .unwrap_or_else(|| panic!("malformed event {event:?}"));
        let data: Value = serde_json::from_str(data).expect("event data is JSON");
        assert_eq!(data["type"], name, "event name and type differ");
        last = name;
    }
    assert!(
        matches!(last, "message_stop" | "error"),
        "stream ends with {last:?}"
    );
    if last == "message_stop" {
        assert!(
            out.captured_translated.response.is_some(),
            "capture lost the message"
        );
    }
    // The same stream re-encoded for a Responses client: named events, numbered from 0, ending
    // in a terminal response event that the capture keeps.
    let text = std::str::from_utf8(&out.translated_responses).expect("UTF-8");
    let mut last = "";
    for (i, event) in text.split_terminator("\n\n").enumerate() {
        let (name, data) = event
            .strip_prefix("event: ")
            .and_then(|e| e.split_once("\ndata: "))
            .unwrap_or_else(|| panic!("malformed event {event:?}"));
        let data: Value = serde_json::from_str(data).expect("event data is JSON");
        assert_eq!(data["type"], name, "event name and type differ");
        assert_eq!(data["sequence_number"], i as u64, "sequence numbers skip");
        last = name;
    }
    assert!(
        matches!(last, "response.completed" | "response.incomplete" | "response.failed"),
        "Responses stream ends with {last:?}"
    );
    assert!(
        out.captured_translated_responses.response.is_some(),
        "capture lost the response"
    );
});
