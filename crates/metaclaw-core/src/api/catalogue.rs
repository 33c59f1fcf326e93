//! The list of operations: the one place the router and the OpenAPI document are built from.

use axum::Router;
use axum::routing::get;

use super::openapi::Document;
use super::operation::{Method, Operation};
use super::{Api, charts, events, http, ops};

/// One operation as the router and the document need it.
pub(crate) struct Entry {
    pub method: Method,
    pub path: &'static str,
    route: fn(Router<Api>) -> Router<Api>,
    document: fn(&mut Document),
}

fn entry<O: Operation>() -> Entry {
    Entry {
        method: O::METHOD,
        path: O::PATH,
        route: http::route::<O>,
        document: Document::add_operation::<O>,
    }
}

/// Every JSON operation, in the order the document lists them.
pub(crate) fn entries() -> Vec<Entry> {
    use ops::*;
    vec![
        entry::<status::GetStatus>(),
        entry::<sessions::ListSessions>(),
        entry::<sessions::GetSession>(),
        entry::<sessions::SetFeedback>(),
        entry::<data::DeleteSession>(),
        entry::<data::GetData>(),
        entry::<data::ExportSessions>(),
        entry::<skills::ListSkills>(),
        entry::<skills::CreateSkill>(),
        entry::<skills::GetSkill>(),
        entry::<skills::EditSkill>(),
        entry::<skills::DeleteSkill>(),
        entry::<skills::SetSkillState>(),
        entry::<skills::SkillHistory>(),
        entry::<skills::RollbackSkill>(),
        entry::<skills::GetLibrary>(),
        entry::<skills::InstallBundled>(),
        entry::<skills::TryRetrieval>(),
        entry::<skill_health::GetSkillHealth>(),
        entry::<skill_health::ReviseSkill>(),
        entry::<skill_health::MergeSkills>(),
        entry::<proposals::ListProposals>(),
        entry::<proposals::BulkDecide>(),
        entry::<proposals::GetProposal>(),
        entry::<proposals::Approve>(),
        entry::<proposals::Reject>(),
        entry::<proposals::Undo>(),
        entry::<proposals::Distil>(),
        entry::<training::ListSteps>(),
        entry::<training::ListCheckpoints>(),
        entry::<training::TrainStep>(),
        entry::<training::GetRl>(),
        entry::<tasks::StartRollout>(),
        entry::<tasks::GetJob>(),
        entry::<tasks::StartEval>(),
        entry::<tasks::StartBench>(),
        entry::<tasks::ListEvals>(),
        entry::<tasks::GetSkillsComparison>(),
        entry::<tasks::ListAdapters>(),
        entry::<tasks::RollbackAdapter>(),
        entry::<scheduler::GetScheduler>(),
        entry::<config::GetConfig>(),
        entry::<config::PatchConfig>(),
        entry::<config::TestConnection>(),
        entry::<settings::GetSettings>(),
        entry::<settings::TestTinker>(),
        entry::<onboarding::ListPresets>(),
        entry::<onboarding::CandidateModelList>(),
        entry::<onboarding::TestCandidate>(),
        entry::<onboarding::SaveEndpoint>(),
        entry::<wiring::GetWiring>(),
        entry::<agents::ListAgents>(),
        entry::<agents::ShareProposal>(),
        entry::<agents::ShareSkill>(),
        entry::<wiring::GetAgentSetup>(),
        entry::<wiring::Wire>(),
        entry::<wiring::Unwire>(),
        entry::<login::NewLoginCode>(),
    ]
}

/// Routes that do not answer JSON: charts (SVG), live events (SSE) and the document itself.
/// Documented by hand in `openapi`; a test checks the document lists them and the operations.
pub(crate) const RAW_ROUTES: &[(&str, &str)] = &[
    ("get", "/api/charts/{name}"),
    ("get", "/api/events"),
    ("get", "/api/openapi.json"),
];

/// Every `/api` route as (method, path with `{name}` parameters): the operations, then the
/// raw routes. For tools that must cover the whole API (the year benchmark).
pub fn routes() -> Vec<(&'static str, &'static str)> {
    entries()
        .iter()
        .map(|e| (e.method.as_str(), e.path))
        .chain(RAW_ROUTES.iter().copied())
        .collect()
}

/// Every `/api` route, without authentication (the caller adds it).
pub(crate) fn router() -> Router<Api> {
    let mut router = Router::new();
    for e in entries() {
        router = (e.route)(router);
    }
    router
        .route("/api/charts/{name}", get(charts::chart))
        .route("/api/events", get(events::stream))
        .route(
            "/api/openapi.json",
            get(|| async { axum::Json(super::openapi::document()) }),
        )
        .fallback(|| async { super::ApiError::not_found("unknown API endpoint") })
}

/// The document's operations, in catalogue order.
pub(crate) fn document_operations(doc: &mut Document) {
    for e in entries() {
        (e.document)(doc);
    }
}
