//! Every decoder the client runs over a Tinker answer, in one synchronous call for the
//! `tinker_response` fuzz target and the robustness tests: submit answers, `retrieve_future`
//! results in JSON and protobuf, and error bodies.

use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};

use crate::future::{ResultBody, classify_json, detail_message};
use crate::sampling::decode_sample;
use crate::training::{decode_fwdbwd, decode_optim};
use crate::transport::{RawResponse, parse_json_body};
use crate::wire::json::UntypedFuture;
use crate::wire::proto;

/// What the client made of one answer; the decoders' errors are kept as text.
#[derive(Debug, Default)]
pub struct ResultExercise {
    pub sample: Option<crate::Result<crate::SampleOutput>>,
    pub forward_backward: Option<crate::Result<crate::ForwardBackwardOutput>>,
    pub optim_step: Option<crate::Result<crate::OptimStepOutput>>,
    pub error: String,
}

/// Decode `body`, answered with `status` and `content_type`, the way the client does: as a
/// submit answer, as an error body, and (for a 200) as each typed `retrieve_future` result.
/// Never panics.
#[doc(hidden)]
pub fn exercise_result(status: u16, content_type: &str, body: &[u8]) -> ResultExercise {
    let mut headers = HeaderMap::new();
    if let Ok(ct) = HeaderValue::from_str(content_type) {
        headers.insert(CONTENT_TYPE, ct);
    }
    let resp = RawResponse {
        status,
        headers,
        body: Bytes::copy_from_slice(body),
    };
    let mut out = ResultExercise {
        error: resp.http_error().to_string(),
        ..ResultExercise::default()
    };
    let _ = detail_message(&resp);
    let _ = parse_json_body(body);
    // The future named in the answer, or one with sequence ids so `decode_sample` attaches them.
    let future = serde_json::from_slice::<UntypedFuture>(body).unwrap_or_else(|_| UntypedFuture {
        request_id: "fuzz".into(),
        model_id: None,
        sample_sequence_ids: Some(vec!["a".into(), "b".into()]),
    });
    if status != 200 {
        return out;
    }
    if resp.is_proto() {
        let proto_body = || ResultBody::Proto(resp.body.clone());
        out.sample = Some(decode_sample(proto_body(), &future));
        out.forward_backward = Some(decode_fwdbwd(proto_body()));
        out.optim_step = Some(decode_optim(proto_body()));
        let _ = proto::decode_forward_backward_request(body);
        return out;
    }
    let Ok(value) = serde_json::from_slice(body) else {
        return out;
    };
    if classify_json(&value).is_result() {
        out.sample = Some(decode_sample(ResultBody::Json(value.clone()), &future));
        out.forward_backward = Some(decode_fwdbwd(ResultBody::Json(value.clone())));
        out.optim_step = Some(decode_optim(ResultBody::Json(value)));
    }
    out
}
