//! End-to-end RL loop on the fake server: sampled tokens with positive
//! advantage become more likely after one IS step; checkpoints round-trip.

use std::collections::BTreeMap;

use tinker_client::fake::FakeServer;
use tinker_client::{
    AdamParams, ClientConfig, Datum, LoraConfig, LossFn, SamplingParams, ServiceClient, Stop,
};

fn mean_logprob(lps: &[Option<f32>], from: usize) -> f32 {
    let v: Vec<f32> = lps[from..].iter().map(|x| x.unwrap()).collect();
    v.iter().sum::<f32>() / v.len() as f32
}

#[tokio::test]
async fn rl_step_raises_logprobs_of_advantaged_samples() {
    let server = FakeServer::start().await;
    let client = ServiceClient::connect(ClientConfig::fast(server.url(), "tml-test"))
        .await
        .unwrap();
    let model = client
        .create_lora_model("fake/base", LoraConfig::rank(8))
        .await
        .unwrap();

    let sampler = model.save_weights_and_get_sampling_client().await.unwrap();
    let prompt = [3u32, 14, 15];
    let params = SamplingParams {
        seed: Some(42),
        stop: Stop::None,
        ..SamplingParams::max_tokens(6)
    };
    let out = sampler.sample(&prompt, 2, &params).await.unwrap();
    assert_eq!(out.sequences.len(), 2);

    let mut data = Vec::new();
    let mut fulls = Vec::new();
    for seq in &out.sequences {
        assert_eq!(seq.tokens.len(), 6);
        let mut full = prompt.to_vec();
        full.extend(&seq.tokens);
        let mut lps = vec![0.0; prompt.len()];
        lps.extend(seq.logprobs.clone().unwrap());
        let adv: Vec<f32> = (0..full.len())
            .map(|i| if i >= prompt.len() { 1.0 } else { 0.0 })
            .collect();
        data.push(Datum::rl_from_sequence(&full, &lps, &adv));
        fulls.push(full);
    }
    // Baseline under the sampler (= current model) weights.
    let before: Vec<f32> = {
        let mut v = Vec::new();
        for full in &fulls {
            v.push(mean_logprob(
                &sampler.compute_logprobs(full).await.unwrap(),
                prompt.len(),
            ));
        }
        v
    };

    let fb = model
        .forward_backward(data, LossFn::ImportanceSampling, BTreeMap::new())
        .await
        .unwrap();
    let step = model.optim_step(AdamParams::lr(0.05)).await.unwrap();
    let fb = fb.result().await.unwrap();
    step.result().await.unwrap();
    // On-policy: learner logprobs equal sampler logprobs, IS loss = -A.
    let learner = fb.logprobs(0).unwrap();
    let sampled = out.sequences[0].logprobs.as_ref().unwrap();
    for k in 0..6 {
        assert!((learner[prompt.len() - 1 + k] - sampled[k]).abs() < 1e-5);
    }
    let loss = fb.loss_fn_outputs[0]["elementwise_loss"].as_f32().unwrap();
    assert!(
        loss[prompt.len() - 1..]
            .iter()
            .all(|l| (l + 1.0).abs() < 1e-5)
    );

    let w = model
        .save_weights_for_sampler(Some("step-1"))
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    assert!(
        w.path
            .as_deref()
            .unwrap()
            .ends_with("/sampler_weights/step-1")
    );
    let new_sampler = model.sampling_client(&w).await.unwrap();
    assert_ne!(new_sampler.id(), sampler.id());
    for (full, b) in fulls.iter().zip(&before) {
        let after = mean_logprob(
            &new_sampler.compute_logprobs(full).await.unwrap(),
            prompt.len(),
        );
        assert!(after > *b + 0.01, "mean logprob {after} not above {b}");
    }
    // The old sampler is a snapshot: unchanged.
    let old_again = mean_logprob(
        &sampler.compute_logprobs(&fulls[0]).await.unwrap(),
        prompt.len(),
    );
    assert!((old_again - before[0]).abs() < 1e-6);

    // save_state → train further → load_state reproduces the saved logprobs.
    let ckpt = model
        .save_state("ckpt-1")
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    let probe = vec![Datum::rl_from_sequence(&fulls[0], &[0.0; 9], &[0.0; 9])];
    let saved_lp = model
        .forward(probe.clone())
        .await
        .unwrap()
        .result()
        .await
        .unwrap()
        .logprobs(0);
    let d2 = Datum::rl_from_sequence(&fulls[1], &[0.0; 9], &[1.0; 9]);
    let fb2 = model
        .forward_backward(vec![d2], LossFn::Cispo, BTreeMap::new())
        .await
        .unwrap();
    let st2 = model.optim_step(AdamParams::lr(0.1)).await.unwrap();
    fb2.result().await.unwrap();
    st2.result().await.unwrap();
    let moved = model
        .forward(probe.clone())
        .await
        .unwrap()
        .result()
        .await
        .unwrap()
        .logprobs(0);
    assert_ne!(moved, saved_lp, "training must change the weights");
    model
        .load_state(&ckpt, true)
        .await
        .unwrap()
        .result()
        .await
        .unwrap();
    let restored = model
        .forward(probe.clone())
        .await
        .unwrap()
        .result()
        .await
        .unwrap()
        .logprobs(0);
    assert_eq!(restored, saved_lp);

    // A fresh model restored from the checkpoint agrees too (poison recovery path).
    let recovered = client
        .create_model_from_state("fake/base", LoraConfig::rank(8), &ckpt, true)
        .await
        .unwrap();
    let rec = recovered
        .forward(probe)
        .await
        .unwrap()
        .result()
        .await
        .unwrap()
        .logprobs(0);
    assert_eq!(rec, saved_lp);

    client.close().await;
    server.shutdown().await;
}

#[tokio::test]
async fn sampling_is_deterministic_and_respects_stop_tokens() {
    let server = FakeServer::start().await;
    let client = ServiceClient::connect(ClientConfig::fast(server.url(), "tml-test"))
        .await
        .unwrap();
    let s = client
        .create_sampling_session(tinker_client::SamplerSource::BaseModel("fake/base".into()))
        .await
        .unwrap();
    let p = SamplingParams {
        seed: Some(7),
        ..SamplingParams::max_tokens(8)
    };
    let a = s.sample(&[1, 2], 3, &p).await.unwrap();
    let b = s.sample(&[1, 2], 3, &p).await.unwrap();
    let toks = |o: &tinker_client::SampleOutput| {
        o.sequences
            .iter()
            .map(|q| q.tokens.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(toks(&a), toks(&b));
    let first = a.sequences[0].tokens[0];
    let stopped = s
        .sample(
            &[1, 2],
            1,
            &SamplingParams {
                stop: Stop::Tokens(vec![first]),
                ..p.clone()
            },
        )
        .await
        .unwrap();
    assert_eq!(stopped.sequences[0].tokens, vec![first]);
    assert_eq!(
        stopped.sequences[0].stop_reason,
        tinker_client::StopReason::Stop
    );
    let lps = s.compute_logprobs(&[1, 2, 3]).await.unwrap();
    assert_eq!(lps.len(), 3);
    assert!(lps[0].is_none() && lps[1].unwrap() < 0.0);
    client.close().await;
    server.shutdown().await;
}
