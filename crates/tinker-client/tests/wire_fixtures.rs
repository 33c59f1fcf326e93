//! Wire compatibility against recorded real exchanges (SkyRL server + official
//! SDK) and the SDK 0.38 golden serialisations in `tests/fixtures/tinker/`.

use std::collections::BTreeMap;

use base64::Engine as _;
use prost::Message;
use serde_json::{Value, json};
use tinker_client::wire::json as wj;
use tinker_client::wire::{pb, proto};
use tinker_client::{
    AdamParams, Datum, ForwardBackwardOutput, LoraConfig, SampleOutput, SamplingParams, Stop,
    StopReason, TensorData,
};

const SKYRL: &str = include_str!("fixtures/tinker/wire_capture_skyrl.jsonl");
const SKYRL_MAIN_024: &str =
    include_str!("fixtures/tinker/wire_capture_skyrl_main_sdk0.24.1.jsonl");
const SKYRL_MAIN_038: &str =
    include_str!("fixtures/tinker/wire_capture_skyrl_main_sdk0.38.0.jsonl");
const GOLDEN: &str = include_str!("fixtures/tinker/golden_sdk_0.38.txt");

fn lines(s: &str) -> Vec<Value> {
    s.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The first captured exchange on `path` whose request body contains `needle`.
fn exchange<'a>(cap: &'a [Value], path: &str, needle: &str) -> &'a Value {
    cap.iter()
        .find(|e| e["path"] == path && e["req_body"].as_str().is_some_and(|b| b.contains(needle)))
        .unwrap_or_else(|| panic!("no {path} exchange with {needle}"))
}

fn req_json(e: &Value) -> Value {
    serde_json::from_str(e["req_body"].as_str().unwrap()).unwrap()
}

fn resp_json(e: &Value) -> Value {
    serde_json::from_str(e["resp_body"].as_str().unwrap()).unwrap()
}

fn resp_b64(e: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(e["resp_body"]["base64"].as_str().unwrap())
        .unwrap()
}

fn golden(section: &str) -> &'static str {
    let start = GOLDEN
        .find(&format!("## {section}\n"))
        .unwrap_or_else(|| panic!("no section {section}"));
    GOLDEN[start..].lines().nth(1).unwrap()
}

fn golden_json(section: &str) -> Value {
    serde_json::from_str(golden(section)).unwrap()
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn to_value<T: serde::Serialize>(t: &T) -> Value {
    serde_json::to_value(t).unwrap()
}

#[test]
fn forward_backward_json_bodies_match_capture() {
    let cap = lines(SKYRL);
    // CE body built from the public types equals what SDK 0.21 sent.
    let e = exchange(&cap, "/api/v1/forward_backward", "cross_entropy");
    let datum = Datum::new(vec![5, 17, 42, 99, 7, 63, 120, 33])
        .with(
            "target_tokens",
            TensorData::i64(vec![17, 42, 99, 7, 63, 120, 33, 2]),
        )
        .with(
            "weights",
            TensorData::f32(vec![0., 0., 0., 0., 0., 1., 1., 1.]),
        );
    let body = wj::ForwardBackwardRequest {
        forward_backward_input: wj::ForwardBackwardInput {
            data: vec![wj::DatumJson::from(&datum)],
            loss_fn: "cross_entropy".into(),
            loss_fn_config: None,
        },
        model_id: "model_17c2468d".into(),
        seq_id: 1,
    };
    assert_eq!(to_value(&body), req_json(e));

    // IS body round-trips exactly (f32 values survive JSON).
    let e = exchange(&cap, "/api/v1/forward_backward", "importance_sampling");
    let parsed: wj::ForwardBackwardRequest = serde_json::from_value(req_json(e)).unwrap();
    assert_eq!(to_value(&parsed), req_json(e));
    let d = Datum::from(parsed.forward_backward_input.data[0].clone());
    assert_eq!(d.model_input.len(), 11);
    assert_eq!(
        d.loss_fn_inputs["advantages"].as_f32().unwrap()[5..],
        [1.0; 6]
    );
}

#[test]
fn other_request_bodies_match_capture() {
    let cap = lines(SKYRL);
    let e = exchange(&cap, "/api/v1/create_model", "lora_config");
    let body = wj::CreateModelRequest {
        session_id: "session_09d7e707".into(),
        model_seq_id: 0,
        base_model: "/opt/skyrl-probe/tiny-qwen3".into(),
        lora_config: LoraConfig::rank(4),
        optimizer_config: None,
        kind: wj::Tag::new("create_model"),
    };
    assert_eq!(to_value(&body), req_json(e));

    let e = exchange(&cap, "/api/v1/optim_step", "0.01");
    let body = wj::OptimStepRequest {
        adam_params: AdamParams::lr(0.01),
        model_id: "model_17c2468d".into(),
        seq_id: 2,
        kind: wj::Tag::new("optim_step"),
    };
    assert_eq!(to_value(&body), req_json(e));

    let e = exchange(
        &cap,
        "/api/v1/save_weights_for_sampler",
        "sampling_session_seq_id",
    );
    let body = wj::SaveWeightsForSamplerRequest {
        model_id: "model_17c2468d".into(),
        path: None,
        sampling_session_seq_id: Some(0),
        kind: None,
        seq_id: 4,
        tag: wj::Tag::new("save_weights_for_sampler"),
    };
    assert_eq!(to_value(&body), req_json(e));

    let e = exchange(&cap, "/api/v1/save_weights", "probe-state");
    let body = wj::SaveWeightsRequest {
        model_id: "model_17c2468d".into(),
        path: "probe-state".into(),
        seq_id: 7,
        overwrite: false,
        kind: wj::Tag::new("save_weights"),
    };
    assert_eq!(to_value(&body), req_json(e));

    let e = exchange(&cap, "/api/v1/asample", "sampling_session_id");
    let body = wj::SampleRequest {
        num_samples: 2,
        prompt: wj::ModelInput::from_tokens(&[5, 17, 42, 99, 7, 63]),
        sampling_params: SamplingParams {
            seed: Some(1),
            ..SamplingParams::max_tokens(6)
        },
        sampling_session_id: "sampling_e8b9b6e5".into(),
        seq_id: 0,
        prompt_logprobs: false,
        topk_prompt_logprobs: 0,
        kind: wj::Tag::new("sample"),
    };
    assert_eq!(to_value(&body), req_json(e));

    let e = exchange(&cap, "/api/v1/retrieve_future", "\"request_id\":\"1\"");
    let body = wj::RetrieveFutureRequest {
        request_id: "1".into(),
        allow_metadata_only: true,
    };
    assert_eq!(to_value(&body), req_json(e));
    let e = exchange(&cap, "/api/v1/session_heartbeat", "session_09d7e707");
    let body = wj::SessionHeartbeatRequest {
        session_id: "session_09d7e707".into(),
        kind: wj::Tag::new("session_heartbeat"),
    };
    assert_eq!(to_value(&body), req_json(e));
}

#[test]
fn request_bodies_match_sdk_038_golden() {
    let body = wj::CreateModelRequest {
        session_id: "S".into(),
        model_seq_id: 0,
        base_model: "Qwen/Qwen3-8B".into(),
        lora_config: LoraConfig::rank(32),
        optimizer_config: Some(json!({"type": "adamw"})),
        kind: wj::Tag::new("create_model"),
    };
    assert_eq!(to_value(&body), golden_json("CreateModelRequest"));
    let body = wj::OptimStepRequest {
        adam_params: AdamParams::lr(4e-5),
        model_id: "M".into(),
        seq_id: 2,
        kind: wj::Tag::new("optim_step"),
    };
    assert_eq!(to_value(&body), golden_json("OptimStepRequest"));
    let named = wj::SaveWeightsForSamplerRequest {
        model_id: "M".into(),
        path: Some("s-10".into()),
        sampling_session_seq_id: None,
        kind: Some("snapshot".into()),
        seq_id: 4,
        tag: wj::Tag::new("save_weights_for_sampler"),
    };
    assert_eq!(
        to_value(&named),
        golden_json("SaveWeightsForSamplerRequest(name)")
    );
    let load = wj::LoadWeightsRequest {
        model_id: "M".into(),
        seq_id: 6,
        path: "tinker://RUN/weights/step-10".into(),
        optimizer: true,
        kind: wj::Tag::new("load_weights"),
    };
    assert_eq!(to_value(&load), golden_json("LoadWeightsRequest"));
    let css = wj::CreateSamplingSessionRequest {
        session_id: "S".into(),
        sampling_session_seq_id: 1,
        base_model: None,
        model_path: Some("tinker://RUN/sampler_weights/s-10".into()),
        kind: wj::Tag::new("create_sampling_session"),
    };
    assert_eq!(to_value(&css), golden_json("CreateSamplingSessionRequest"));
    let get_info = wj::GetInfoRequest {
        model_id: "M".into(),
        kind: wj::Tag::new("get_info"),
    };
    assert_eq!(to_value(&get_info), golden_json("GetInfoRequest"));
    let session = wj::CreateSessionRequest {
        tags: vec![],
        user_metadata: BTreeMap::new(),
        sdk_version: "0.38.0".into(),
        kind: wj::Tag::new("create_session"),
    };
    assert_eq!(to_value(&session), golden_json("CreateSessionRequest"));

    // We emit the SDK-0.21 sample field set (accepted by SkyRL 0.3.0); 0.38 adds
    // two zero-valued extras. Everything else, incl. stop token ids, matches.
    let sample = wj::SampleRequest {
        num_samples: 4,
        prompt: wj::ModelInput::from_tokens(&[1, 2, 3]),
        sampling_params: SamplingParams {
            stop: Stop::Tokens(vec![151645]),
            temperature: 0.7,
            top_p: 0.95,
            ..SamplingParams::max_tokens(64)
        },
        sampling_session_id: "SS".into(),
        seq_id: 0,
        prompt_logprobs: false,
        topk_prompt_logprobs: 0,
        kind: wj::Tag::new("sample"),
    };
    let mut g = golden_json("SampleRequest");
    let o = g.as_object_mut().unwrap();
    assert_eq!(o.remove("topk_sample_logprobs"), Some(json!(0)));
    assert_eq!(o.remove("prompt_alt_tokens_k"), Some(json!(0)));
    let mut ours = to_value(&sample);
    // temperature/top_p are f64 here, f32-looking in the golden: compare approximately.
    for k in ["temperature", "top_p"] {
        let (a, b) = (
            ours["sampling_params"][k].as_f64().unwrap(),
            g["sampling_params"][k].as_f64().unwrap(),
        );
        assert!((a - b).abs() < 1e-9);
        ours["sampling_params"][k] = g["sampling_params"][k].clone();
    }
    assert_eq!(ours, g);
}

#[test]
fn stop_variants_serialize_per_spec() {
    let p = |stop| {
        to_value(&SamplingParams {
            stop,
            ..SamplingParams::max_tokens(1)
        })
    };
    assert!(
        p(Stop::Default).get("stop").is_none(),
        "null stop must be omitted"
    );
    assert_eq!(p(Stop::None)["stop"], json!([]));
    assert_eq!(p(Stop::Tokens(vec![7]))["stop"], json!([7]));
    assert_eq!(p(Stop::Strings(vec!["\n".into()]))["stop"], json!(["\n"]));
    for s in [
        Stop::Default,
        Stop::None,
        Stop::Tokens(vec![1, 2]),
        Stop::Strings(vec!["a".into()]),
    ] {
        let back: SamplingParams = serde_json::from_value(p(s.clone())).unwrap();
        assert_eq!(back.stop, s);
    }
}

#[test]
fn json_results_parse_leniently() {
    let cap = lines(SKYRL);
    let e = exchange(&cap, "/api/v1/retrieve_future", "\"request_id\":\"2\"");
    let out: ForwardBackwardOutput = serde_json::from_value(resp_json(e)).unwrap();
    assert_eq!(out.loss_fn_output_type, "scalar");
    assert_eq!(out.loss_fn_outputs.len(), 1);
    let lp = out.logprobs(0).unwrap();
    let loss = out.loss_fn_outputs[0]["elementwise_loss"].as_f32().unwrap();
    // CE: elementwise_loss = -weight * logprob with weights [0×5, 1×3].
    for i in 0..8 {
        let w = if i >= 5 { 1.0 } else { 0.0 };
        assert!((loss[i] + w * lp[i]).abs() < 1e-5);
    }

    let e = exchange(&cap, "/api/v1/retrieve_future", "\"request_id\":\"6\"");
    let s: SampleOutput = serde_json::from_value(resp_json(e)).unwrap();
    assert_eq!(s.sequences.len(), 2);
    assert_eq!(s.sequences[0].tokens, vec![354, 86, 339, 113, 195, 313]);
    assert_eq!(s.sequences[0].stop_reason, StopReason::Length);
    assert_eq!(s.sequences[0].logprobs.as_ref().unwrap().len(), 6);
    assert_eq!(s.prompt_logprobs, None);

    let e = exchange(&cap, "/api/v1/retrieve_future", "\"request_id\":\"3\"");
    let o: tinker_client::OptimStepOutput = serde_json::from_value(resp_json(e)).unwrap();
    assert!(o.metrics["skyrl.ai/grad_norm"] > 0.0);

    // Submission answers: SkyRL's create_model carries extra fields.
    let e = exchange(&cap, "/api/v1/create_model", "lora_config");
    let f: wj::UntypedFuture = serde_json::from_value(resp_json(e)).unwrap();
    assert_eq!(f.request_id, "1");
    assert_eq!(f.model_id.as_deref(), Some("model_17c2468d"));
    let f: wj::UntypedFuture = serde_json::from_value(json!({"request_id": 12})).unwrap();
    assert_eq!(f.request_id, "12");
    let e = exchange(&cap, "/api/v1/retrieve_future", "\"request_id\":\"5\"");
    let p: wj::PathResult = serde_json::from_value(resp_json(e)).unwrap();
    assert_eq!(p.sampling_session_id.as_deref(), Some("sampling_e8b9b6e5"));
    assert_eq!(p.path, None);
    // Bad shapes are errors, never panics.
    assert!(
        serde_json::from_value::<ForwardBackwardOutput>(json!({"loss_fn_outputs": 3})).is_err()
    );
    let m: tinker_client::OptimStepOutput =
        serde_json::from_value(json!({"metrics": {"a": null, "b": 1}})).unwrap();
    assert_eq!(m.metrics, [("b".to_string(), 1.0)].into());
}

fn golden_ppo_datum() -> Datum {
    Datum::new(vec![1, 2, 3])
        .with("target_tokens", TensorData::i64(vec![2, 3, 4]))
        .with("logprobs", TensorData::f32(vec![-0.5, -1.0, -2.0]))
        .with("advantages", TensorData::f32(vec![0.0, 1.0, 1.0]))
}

#[test]
fn proto_forward_backward_request_matches_golden_structurally() {
    let golden_msg = pb::ForwardBackwardRequest::decode(
        hex(golden("ForwardBackwardRequest proto hex")).as_slice(),
    )
    .unwrap();
    let cfg: BTreeMap<String, f64> = [
        ("clip_low_threshold".into(), 0.8),
        ("clip_high_threshold".into(), 1.2),
    ]
    .into();
    let ours =
        proto::forward_backward_request("M", 1, &[golden_ppo_datum()], "ppo", &cfg, false).unwrap();
    assert_eq!(ours, golden_msg);
    // And our bytes decode back to the same message.
    let bytes =
        proto::encode_forward_backward("M", 1, &[golden_ppo_datum()], "ppo", &cfg, false).unwrap();
    assert_eq!(
        pb::ForwardBackwardRequest::decode(bytes.as_slice()).unwrap(),
        golden_msg
    );
    let parts = proto::decode_forward_backward_request(&bytes).unwrap();
    assert_eq!(parts.data, vec![golden_ppo_datum()]);
    assert_eq!(parts.loss_fn_config, cfg);
}

#[test]
fn proto_request_of_sdk_038_decodes_to_the_json_datum() {
    let cap = lines(SKYRL_MAIN_038);
    let e = cap
        .iter()
        .find(|e| {
            e["path"] == "/api/v1/forward_backward"
                && e["req_headers"]["content-type"] == "application/x-protobuf"
        })
        .unwrap();
    let body = base64::engine::general_purpose::STANDARD
        .decode(e["req_body"]["base64"].as_str().unwrap())
        .unwrap();
    let parts = proto::decode_forward_backward_request(&body).unwrap();
    assert_eq!(parts.seq_id, 1);
    assert_eq!(parts.loss_fn, "cross_entropy");
    // Same datum the JSON-dialect run sent.
    let json_cap = lines(SKYRL);
    let j: wj::ForwardBackwardRequest = serde_json::from_value(req_json(exchange(
        &json_cap,
        "/api/v1/forward_backward",
        "cross_entropy",
    )))
    .unwrap();
    assert_eq!(
        parts.data,
        vec![Datum::from(j.forward_backward_input.data[0].clone())]
    );
}

#[test]
fn proto_sample_response_golden_decodes() {
    let out = proto::decode_sample_response(&hex(golden(
        "SampleResponse proto hex (1 seq, tokens [10,11,151645], logprobs [-0.1,-0.2,-0.3])",
    )))
    .unwrap();
    assert_eq!(out.sequences.len(), 1);
    let s = &out.sequences[0];
    assert_eq!(s.tokens, vec![10, 11, 151645]);
    assert_eq!(s.stop_reason, StopReason::Stop);
    let lp = s.logprobs.as_ref().unwrap();
    assert!((lp[0] + 0.1).abs() < 1e-6 && (lp[1] + 0.2).abs() < 1e-6 && (lp[2] + 0.3).abs() < 1e-6);
    assert_eq!(out.prompt_logprobs, None);
}

#[test]
fn captured_proto_results_decode_consistently() {
    let cap = lines(SKYRL_MAIN_024);
    let proto_results: Vec<&Value> = cap
        .iter()
        .filter(|e| e["resp_ctype"] == "application/x-protobuf")
        .collect();
    let by_rid = |rid: &str| {
        *proto_results
            .iter()
            .find(|e| {
                e["req_body"]
                    .as_str()
                    .unwrap()
                    .contains(&format!("\"request_id\":\"{rid}\""))
            })
            .unwrap()
    };
    // CE fwd/bwd output: 157 bytes, one datum, offsets [0, 32].
    let ce = proto::decode_forward_backward_output(&resp_b64(by_rid("2"))).unwrap();
    assert_eq!(ce.loss_fn_output_type, "scalar");
    assert_eq!(ce.loss_fn_outputs.len(), 1);
    let lp = ce.logprobs(0).unwrap();
    let loss = ce.loss_fn_outputs[0]["elementwise_loss"]
        .as_f32()
        .unwrap()
        .to_vec();
    assert_eq!((lp.len(), loss.len()), (8, 8));
    for i in 0..8 {
        let w = if i >= 5 { 1.0 } else { 0.0 };
        assert!((loss[i] + w * lp[i]).abs() < 1e-5, "CE invariant at {i}");
    }

    // The sample, then the IS fwd/bwd on its first sequence: learner logprobs
    // equal sampler logprobs and elementwise_loss ≈ -advantage.
    let sample = proto::decode_sample_response(&resp_b64(by_rid("6"))).unwrap();
    assert_eq!(sample.sequences.len(), 2);
    let seq = &sample.sequences[0];
    assert_eq!(seq.tokens, vec![354, 86, 311, 113, 195, 313]);
    assert_eq!(seq.stop_reason, StopReason::Length);
    let is_req: wj::ForwardBackwardRequest = serde_json::from_value(req_json(exchange(
        &cap,
        "/api/v1/forward_backward",
        "importance_sampling",
    )))
    .unwrap();
    let d = Datum::from(is_req.forward_backward_input.data[0].clone());
    assert_eq!(
        d.loss_fn_inputs["target_tokens"].as_i64().unwrap()[5..],
        [354, 86, 311, 113, 195, 313]
    );
    let is = proto::decode_forward_backward_output(&resp_b64(by_rid("7"))).unwrap();
    let learner = is.logprobs(0).unwrap();
    let sampler = seq.logprobs.as_ref().unwrap();
    for k in 0..6 {
        assert!((learner[5 + k] - sampler[k]).abs() < 1e-3, "logprob {k}");
    }
    let loss = is.loss_fn_outputs[0]["elementwise_loss"].as_f32().unwrap();
    assert!(loss[5..].iter().all(|l| (l + 1.0).abs() < 1e-3));
    assert!(loss[..5].iter().all(|l| *l == 0.0));
}

#[test]
fn proto_prompt_logprobs_nan_is_none() {
    let out = SampleOutput {
        sequences: vec![],
        prompt_logprobs: Some(vec![None, Some(-1.5)]),
    };
    let back =
        proto::decode_sample_response(&proto::encode_sample_response(&out).unwrap()).unwrap();
    assert_eq!(back, out);
    assert!(
        proto::decode_sample_response(&[0x0a, 0x05, 0x12, 0x03, 1, 2, 3]).is_err(),
        "3 token bytes"
    );
}
