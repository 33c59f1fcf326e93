//! Futures / retry / session edge cases against the in-process fake server.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use tinker_client::fake::{FakeServer, Fault, Knobs};
use tinker_client::{
    AdamParams, ClientConfig, Datum, Error, LoraConfig, LossFn, SamplerSource, SamplingParams,
    ServiceClient, TensorData, TrainingClient, WireDialect,
};

const FB: &str = "/api/v1/forward_backward";
const RF: &str = "/api/v1/retrieve_future";

async fn connect(server: &FakeServer) -> ServiceClient {
    ServiceClient::connect(ClientConfig::fast(server.url(), "tml-test"))
        .await
        .unwrap()
}

async fn setup() -> (FakeServer, ServiceClient, TrainingClient) {
    let server = FakeServer::start().await;
    let client = connect(&server).await;
    let model = client
        .create_lora_model("fake/base", LoraConfig::rank(4))
        .await
        .unwrap();
    (server, client, model)
}

async fn teardown(server: FakeServer, client: ServiceClient) {
    client.close().await;
    server.shutdown().await;
}

fn ce_datum() -> Datum {
    Datum::new(vec![5, 17, 42, 9])
        .with("target_tokens", TensorData::i64(vec![17, 42, 9, 2]))
        .with("weights", TensorData::f32(vec![0.0, 1.0, 1.0, 1.0]))
}

fn seq_id_of(r: &tinker_client::fake::RecordedRequest) -> i64 {
    r.json().unwrap()["seq_id"].as_i64().unwrap()
}

#[tokio::test]
async fn try_again_then_result_with_iteration_headers() {
    let (server, client, model) = setup().await;
    server.knobs(|k| k.try_again_polls = 2);
    server.clear_requests();
    let out = model
        .forward_backward(vec![ce_datum()], LossFn::CrossEntropy, BTreeMap::new())
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    assert_eq!(out.logprobs(0).unwrap().len(), 4);
    let polls = server.requests_to(RF);
    assert_eq!(polls.len(), 3);
    let iters: Vec<_> = polls
        .iter()
        .map(|r| r.header("x-tinker-request-iteration").unwrap().to_string())
        .collect();
    assert_eq!(iters, ["0", "1", "2"]);
    assert!(
        polls
            .iter()
            .all(|r| r.header("x-tinker-request-type") == Some("ForwardBackward"))
    );
    assert!(
        polls[0]
            .header("accept")
            .unwrap()
            .contains("application/x-protobuf")
    );
    teardown(server, client).await;
}

#[tokio::test]
async fn long_poll_408_and_5xx_are_retried_immediately() {
    let (server, client, model) = setup().await;
    server.clear_requests();
    server.inject(RF, Fault::long_poll_timeout(), 2);
    server.inject(RF, Fault::server_error(503), 2);
    let p = model.optim_step(AdamParams::default()).await.unwrap();
    let out = p.result().await.unwrap();
    assert!(out.metrics.contains_key("grad_norm"));
    assert_eq!(server.requests_to(RF).len(), 5);
    teardown(server, client).await;
}

#[tokio::test]
async fn complete_metadata_refetches_without_metadata_only() {
    let (server, client, model) = setup().await;
    server.clear_requests();
    server.inject(RF, Fault::complete_metadata(), 1);
    model
        .forward_backward(vec![ce_datum()], LossFn::CrossEntropy, BTreeMap::new())
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    let polls = server.requests_to(RF);
    assert_eq!(polls.len(), 2);
    assert_eq!(polls[0].json().unwrap()["allow_metadata_only"], true);
    assert_eq!(polls[1].json().unwrap()["allow_metadata_only"], false);
    teardown(server, client).await;
}

#[tokio::test]
async fn gone_410_resubmits_same_request_and_key() {
    let (server, client, model) = setup().await;
    server.clear_requests();
    server.inject(RF, Fault::gone(), 1);
    let out = model
        .forward_backward(vec![ce_datum()], LossFn::CrossEntropy, BTreeMap::new())
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    assert_eq!(out.loss_fn_outputs.len(), 1);
    let subs = server.requests_to(FB);
    assert_eq!(subs.len(), 2, "original + resubmission");
    assert_eq!(subs[0].body, subs[1].body, "same body, same seq_id");
    assert_eq!(seq_id_of(&subs[1]), 1);
    let k0 = subs[0].header("x-idempotency-key").unwrap();
    assert!(!k0.is_empty());
    assert_eq!(Some(k0), subs[1].header("x-idempotency-key"));
    teardown(server, client).await;
}

#[tokio::test]
async fn billing_402_pauses_then_succeeds_or_gives_up() {
    let (server, client, model) = setup().await;
    server.inject(FB, Fault::billing(), 2);
    server.inject(RF, Fault::billing(), 2);
    let t0 = Instant::now();
    let p = model
        .forward_backward(vec![ce_datum()], LossFn::CrossEntropy, BTreeMap::new())
        .await
        .unwrap();
    p.result().await.unwrap();
    // 4 pauses of billing_sleep (5 ms).
    assert!(t0.elapsed() >= Duration::from_millis(20));
    assert_eq!(server.requests_to(FB).len(), 3);

    // Past billing_pause_max the submission fails (and poisons the model).
    server.inject(FB, Fault::billing(), 100_000);
    let mut cfg = ClientConfig::fast(server.url(), "tml-test");
    cfg.retry.billing_pause_max = Duration::from_millis(30);
    let c2 = ServiceClient::connect(cfg).await.unwrap();
    let m2 = c2
        .create_lora_model("fake/base", LoraConfig::rank(4))
        .await
        .unwrap();
    let err = m2
        .forward_backward(vec![ce_datum()], LossFn::CrossEntropy, BTreeMap::new())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::BillingPause(_)), "{err}");
    assert!(m2.is_poisoned());
    c2.close().await;
    teardown(server, client).await;
}

#[tokio::test]
async fn sampling_429_backs_off_and_resubmits_same_seq_id() {
    let (server, client, _model) = setup().await;
    let sampler = client
        .create_sampling_session(SamplerSource::BaseModel("fake/base".into()))
        .await
        .unwrap();
    let params = SamplingParams::max_tokens(4);
    sampler.sample(&[1, 2, 3], 1, &params).await.unwrap();
    server.clear_requests();
    server.inject("/api/v1/asample", Fault::rate_limited(), 2);
    let t0 = Instant::now();
    let out = sampler.sample(&[1, 2, 3], 2, &params).await.unwrap();
    assert_eq!(out.sequences.len(), 2);
    assert!(out.sequences[0].sequence_id.is_some());
    // Two back-offs of sample_backoff_small (10 ms).
    assert!(
        t0.elapsed() >= Duration::from_millis(20),
        "{:?}",
        t0.elapsed()
    );
    let subs = server.requests_to("/api/v1/asample");
    assert_eq!(subs.len(), 3);
    assert!(
        subs.iter().all(|r| seq_id_of(r) == 1),
        "same seq_id on resubmission"
    );
    assert!(
        subs.iter()
            .all(|r| r.header("x-tinker-sampling-backpressure") == Some("1"))
    );
    let key = subs[0].header("x-idempotency-key");
    assert!(subs.iter().all(|r| r.header("x-idempotency-key") == key));
    teardown(server, client).await;
}

#[tokio::test]
async fn bare_400_three_times_is_tolerated_four_is_fatal() {
    let (server, client, model) = setup().await;
    server.inject(RF, Fault::bare_400(), 3);
    let p = model.optim_step(AdamParams::default()).await.unwrap();
    p.result().await.unwrap();
    assert!(!model.is_poisoned());

    server.inject(RF, Fault::bare_400(), 4);
    let p = model.optim_step(AdamParams::default()).await.unwrap();
    let err = p.result().await.unwrap_err();
    assert!(matches!(err, Error::Http { status: 400, .. }), "{err}");
    assert!(model.is_poisoned());
    teardown(server, client).await;
}

#[tokio::test]
async fn failed_futures_poison_the_training_client() {
    for fault in [
        Fault::failed_future("user", "bad input"),
        Fault::detail(400, "SkyRL handled error"),
        Fault::detail(500, "SkyRL unhandled error"),
    ] {
        let (server, client, model) = setup().await;
        server.inject(RF, fault.clone(), 1);
        let p = model
            .forward_backward(vec![ce_datum()], LossFn::CrossEntropy, BTreeMap::new())
            .await
            .unwrap();
        let err = p.result().await.unwrap_err();
        assert!(matches!(err, Error::RequestFailed { .. }), "{err}");
        assert!(model.is_poisoned());
        let again = model.optim_step(AdamParams::default()).await.unwrap_err();
        assert!(matches!(again, Error::Poisoned));
        // A clone shares the poison; a new model does not.
        assert!(model.clone().is_poisoned());
        let fresh = client
            .create_lora_model("fake/base", LoraConfig::rank(4))
            .await
            .unwrap();
        fresh
            .optim_step(AdamParams::default())
            .await
            .unwrap()
            .result()
            .await
            .unwrap();
        teardown(server, client).await;
    }
}

#[tokio::test]
async fn server_side_user_error_is_reported_with_category() {
    let (server, client, model) = setup().await;
    let bad = Datum::new(vec![1, 2]); // no target_tokens
    let err = model
        .forward_backward(vec![bad], LossFn::ImportanceSampling, BTreeMap::new())
        .await
        .unwrap()
        .result()
        .await
        .unwrap_err();
    match err {
        Error::RequestFailed { category, message } => {
            assert_eq!(category, "user");
            assert!(message.contains("target_tokens"), "{message}");
        }
        other => panic!("unexpected {other}"),
    }
    teardown(server, client).await;
}

#[tokio::test]
async fn submission_retries_keep_the_idempotency_key() {
    let (server, client, model) = setup().await;
    server.clear_requests();
    server.inject(FB, Fault::server_error(503), 2);
    let _pending = model
        .forward_backward(vec![ce_datum()], LossFn::CrossEntropy, BTreeMap::new())
        .await
        .unwrap();
    let subs = server.requests_to(FB);
    assert_eq!(subs.len(), 3);
    let key = subs[0].header("x-idempotency-key").unwrap();
    assert!(
        subs.iter()
            .all(|r| r.header("x-idempotency-key") == Some(key))
    );
    assert!(subs.iter().all(|r| seq_id_of(r) == 1));

    // x-should-retry: false overrides a retryable status; 404 is fatal.
    server.inject(
        FB,
        Fault::server_error(503).with_header("x-should-retry", "false"),
        1,
    );
    let err = model
        .forward_backward(vec![ce_datum()], LossFn::CrossEntropy, BTreeMap::new())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Http { status: 503, .. }), "{err}");
    teardown(server, client).await;
}

#[tokio::test]
async fn seq_ids_strictly_increase_from_one_and_ops_pipeline() {
    let (server, client, model) = setup().await;
    server.clear_requests();
    // Submit fwd/bwd and optim back-to-back before awaiting either.
    let fb = model
        .forward_backward(vec![ce_datum()], LossFn::CrossEntropy, BTreeMap::new())
        .await
        .unwrap();
    let opt = model.optim_step(AdamParams::lr(0.01)).await.unwrap();
    assert_eq!(
        server.requests_to(RF).len(),
        0,
        "nothing polled before awaiting"
    );
    assert_eq!(server.requests_to(FB).len(), 1);
    assert_eq!(server.requests_to("/api/v1/optim_step").len(), 1);
    let (a, b) = (opt.result().await.unwrap(), fb.result().await.unwrap());
    assert!(a.metrics["grad_norm"] > 0.0);
    assert_eq!(b.loss_fn_outputs.len(), 1);

    model
        .forward(vec![ce_datum()])
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    let w = model
        .save_weights_for_sampler(Some("s1"))
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    assert!(w.path.as_deref().unwrap().starts_with("tinker://"));
    let e = model
        .save_weights_for_sampler(None)
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    assert!(e.sampling_session_id.is_some() && e.path.is_none());
    let path = model
        .save_state("c1")
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    model
        .load_state(&path, true)
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    let seqs: Vec<i64> = server
        .requests()
        .iter()
        .filter(|r| r.path != RF && r.path.ends_with(|_| true))
        .filter_map(|r| {
            r.json()
                .and_then(|j| j["seq_id"].as_i64())
                .filter(|_| r.json().unwrap().get("model_id").is_some())
        })
        .collect();
    assert_eq!(seqs, (1..=7).collect::<Vec<_>>());
    assert_eq!(model.last_seq_id(), 7);
    // Ephemeral save used the session's sampler counter.
    let ephemeral = server.requests_to("/api/v1/save_weights_for_sampler")[1]
        .json()
        .unwrap();
    assert_eq!(ephemeral["sampling_session_seq_id"], 0);
    assert!(ephemeral.get("path").is_none());
    teardown(server, client).await;
}

#[tokio::test]
async fn headers_identify_the_client() {
    let (server, client, _model) = setup().await;
    let reqs = server.requests();
    let create = reqs
        .iter()
        .find(|r| r.path == "/api/v1/create_model")
        .unwrap();
    assert_eq!(create.header("x-api-key"), Some("tml-test"));
    assert!(
        create
            .header("x-sdk-version")
            .unwrap()
            .starts_with("rust-tinker-client/")
    );
    assert!(create.header("x-sdk-method").is_some());
    assert!(create.header("x-idempotency-key").is_some());
    assert_eq!(create.json().unwrap()["model_seq_id"], 0);
    let poll = reqs.iter().find(|r| r.path == RF).unwrap();
    assert_eq!(poll.header("x-tinker-request-type"), Some("CreateModel"));
    assert_eq!(poll.header("accept"), Some("application/json"));
    // Trailing slash in base_url is stripped.
    let c2 = ServiceClient::connect(ClientConfig::fast(format!("{}/", server.url()), "k"))
        .await
        .unwrap();
    assert!(server.requests().iter().all(|r| !r.path.contains("//")));
    c2.close().await;
    teardown(server, client).await;
}

#[tokio::test]
async fn heartbeat_cadence_and_stop_on_410() {
    let server = FakeServer::start().await;
    let client = connect(&server).await;
    tokio::time::sleep(Duration::from_millis(330)).await;
    let beats = server.requests_to("/api/v1/session_heartbeat");
    assert!(
        (4..=8).contains(&beats.len()),
        "{} beats in 330 ms at 50 ms",
        beats.len()
    );
    for w in beats.windows(2) {
        assert!(w[1].at - w[0].at >= Duration::from_millis(40));
    }
    assert_eq!(beats[0].json().unwrap()["session_id"], client.session_id());
    let st = client.heartbeat_status();
    assert!(st.ok_count >= 4 && st.last_status == Some(200) && !st.stopped);

    server.finish_session(client.session_id());
    tokio::time::sleep(Duration::from_millis(150)).await;
    let st = client.heartbeat_status();
    assert!(st.stopped && st.last_status == Some(410), "{st:?}");
    assert!(client.is_closed());
    let n = server.requests_to("/api/v1/session_heartbeat").len();
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(
        server.requests_to("/api/v1/session_heartbeat").len(),
        n,
        "no beats after 410"
    );
    let err = client
        .create_lora_model("fake/base", LoraConfig::rank(4))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::SessionClosed));
    server.shutdown().await;
}

#[tokio::test]
async fn heartbeat_stops_when_client_dropped_or_closed() {
    let server = FakeServer::start().await;
    let client = connect(&server).await;
    tokio::time::sleep(Duration::from_millis(120)).await;
    drop(client);
    tokio::time::sleep(Duration::from_millis(60)).await;
    let n = server.requests_to("/api/v1/session_heartbeat").len();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(server.requests_to("/api/v1/session_heartbeat").len(), n);

    let client = connect(&server).await;
    client.close().await;
    assert!(client.heartbeat_status().stopped);
    assert_eq!(server.requests_to("/finish").len(), 1);
    let finish = &server.requests_to("/finish")[0];
    assert_eq!(finish.json().unwrap()["reason"]["type"], "success");
    server.shutdown().await;
}

#[tokio::test]
async fn proto_dialect_via_client_config_and_json_results_fallback() {
    let server = FakeServer::start_with(Knobs {
        proto_write_fwdbwd: true,
        ..Knobs::default()
    })
    .await;
    let client = connect(&server).await;
    assert!(client.uses_proto_fwdbwd());
    let model = client
        .create_lora_model("fake/base", LoraConfig::rank(4))
        .await
        .unwrap();
    let cfg: BTreeMap<String, f64> = [("clip_low_threshold".into(), 0.8)].into();
    let d = Datum::rl_from_sequence(
        &[1, 2, 3, 4],
        &[0.0, -1.0, -1.0, -1.0],
        &[0.0, 1.0, 1.0, 1.0],
    );
    let proto_out = model
        .forward_backward(vec![d.clone()], LossFn::Ppo, cfg.clone())
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    let sub = server.requests_to(FB).pop().unwrap();
    assert_eq!(sub.header("content-type"), Some("application/x-protobuf"));
    let parts = tinker_client::wire::proto::decode_forward_backward_request(&sub.body).unwrap();
    assert_eq!((parts.seq_id, parts.loss_fn.as_str()), (1, "ppo"));
    assert_eq!(parts.data, vec![d.clone()]);

    // Same computation with JSON results: identical numbers.
    server.knobs(|k| k.proto_results = false);
    let json_out = model
        .forward(vec![d])
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    assert_eq!(json_out.logprobs(0), proto_out.logprobs(0));
    client.close().await;

    // Explicit Json dialect ignores the server flag; forward goes to /forward.
    let mut cfg = ClientConfig::fast(server.url(), "k");
    cfg.dialect = WireDialect::Json;
    let c2 = ServiceClient::connect(cfg).await.unwrap();
    assert!(!c2.uses_proto_fwdbwd());
    let m2 = c2
        .create_lora_model("fake/base", LoraConfig::rank(4))
        .await
        .unwrap();
    m2.forward(vec![ce_datum()])
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    assert_eq!(
        server
            .requests_to("/api/v1/forward")
            .last()
            .unwrap()
            .header("content-type"),
        Some("application/json")
    );
    c2.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn capabilities_checkpoints_and_unreachable_server() {
    let (server, client, model) = setup().await;
    let caps = client.capabilities().await.unwrap();
    assert_eq!(caps.supported_models[0].model_name, "fake/base");
    model.save_state("a").await.unwrap().result().await.unwrap();
    model
        .save_weights_for_sampler(Some("b"))
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    let ck = client.list_checkpoints(model.model_id()).await.unwrap();
    let mut types: Vec<_> = ck.iter().map(|c| c.checkpoint_type.as_str()).collect();
    types.sort();
    assert_eq!(types, ["sampler", "training"]);
    let url = server.url();
    teardown(server, client).await;

    // Nothing listens any more: connect fails with a transport error within the budget.
    let mut cfg = ClientConfig::fast(url, "k");
    cfg.retry.submit_budget = Duration::from_millis(50);
    let err = ServiceClient::connect(cfg).await.unwrap_err();
    assert!(
        matches!(err, Error::Transport(_) | Error::Timeout(_)),
        "{err}"
    );
}

#[tokio::test]
async fn pending_results_can_be_spawned_and_dead_server_polls_give_up() {
    let (server, client, model) = setup().await;
    let p = model.optim_step(AdamParams::default()).await.unwrap();
    // Pending<T>::result() is Send: it can run on another task.
    tokio::spawn(p.result()).await.unwrap().unwrap();

    let mut cfg = ClientConfig::fast(server.url(), "tml-test");
    cfg.retry.submit_budget = Duration::from_millis(100);
    let c2 = ServiceClient::connect(cfg).await.unwrap();
    let m2 = c2
        .create_lora_model("fake/base", LoraConfig::rank(4))
        .await
        .unwrap();
    let p = m2.optim_step(AdamParams::default()).await.unwrap();
    drop(client);
    server.shutdown().await;
    let err = p.result().await.unwrap_err();
    assert!(
        matches!(err, Error::Transport(_) | Error::Timeout(_)),
        "{err}"
    );
    assert!(m2.is_poisoned());
}
