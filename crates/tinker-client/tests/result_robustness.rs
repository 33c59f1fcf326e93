//! The tinker_response fuzz target's body over hand-picked answers, so every `cargo test`
//! covers it: real captured results decode, hostile ones end in errors, never panics.

use tinker_client::exercise_result;

const PROTO: &str = "application/x-protobuf";
const JSON: &str = "application/json";

#[test]
fn captured_protobuf_forward_backward_result_decodes() {
    // A SkyRL retrieve_future answer from tests/fixtures/tinker/wire_capture_skyrl_main_sdk0.38.0.jsonl.
    use base64::Engine;
    let body = base64::engine::general_purpose::STANDARD
        .decode("CgZzY2FsYXISkgESQgoIbG9ncHJvYnMSNgogQ4a4wBcbucBTkLjAe9O/wIzPvcCYcsDAgQy6wHfdvMASEAAAAAAAAAAAIAAAAAAAAAAYARJKChBlbGVtZW50d2lzZV9sb3NzEjYKIAAAAIAAAACAAAAAgAAAAIAAAACAmHLAQIEMukB33bxAEhAAAAAAAAAAACAAAAAAAAAAGAEYAQ==")
        .unwrap();
    let out = exercise_result(200, PROTO, &body);
    let fb = out.forward_backward.unwrap().unwrap();
    assert_eq!(fb.loss_fn_outputs.len(), 1);
    assert_eq!(fb.logprobs(0).map(|l| l.len()), Some(8));
}

#[test]
fn hostile_answers_are_errors() {
    let garbage = exercise_result(200, PROTO, b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01");
    assert!(matches!(garbage.sample, Some(Err(_))));
    assert!(matches!(garbage.forward_backward, Some(Err(_))));

    let bad_tokens = exercise_result(200, JSON, b"{\"sequences\": [{\"tokens\": [-1, 1e99]}]}");
    assert!(matches!(bad_tokens.sample, Some(Err(_))));

    let bad_outputs = exercise_result(200, JSON, b"{\"loss_fn_outputs\": 5}");
    assert!(matches!(bad_outputs.forward_backward, Some(Err(_))));

    // A failed future is reported, not decoded as a result.
    let failed = exercise_result(200, JSON, b"{\"error\": {\"nested\": true}}");
    assert!(failed.sample.is_none() && failed.optim_step.is_none());

    let long_text = "\u{fffd}".repeat(3000);
    let server_error = exercise_result(500, "text/plain", long_text.as_bytes());
    assert!(server_error.sample.is_none());
    assert!(server_error.error.contains("500"), "{}", server_error.error);
    assert!(server_error.error.chars().count() < 2100, "the body is cut");
}
