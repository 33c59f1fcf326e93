use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use metaclaw_charts::Theme;
use serde::Deserialize;

use super::{Api, ApiError};

#[derive(Deserialize)]
pub(crate) struct ThemeQuery {
    theme: Option<String>,
    /// `turns_per_day` of one agent only.
    agent: Option<String>,
}

pub(crate) async fn chart(
    State(s): State<Api>,
    Path(file): Path<String>,
    Query(q): Query<ThemeQuery>,
) -> Result<Response, ApiError> {
    let name = file.strip_suffix(".svg").unwrap_or(&file);
    let theme: Theme = q
        .theme
        .as_deref()
        .unwrap_or("light")
        .parse()
        .map_err(|_| ApiError::bad_request("theme must be light or dark"))?;
    let store = s.store();
    let steps = || store.training_steps(10_000);
    let series =
        |f: fn(&metaclaw_store::TrainingStep) -> Option<f64>| -> Result<Vec<(u64, f64)>, ApiError> {
            Ok(steps()?
                .iter()
                .filter_map(|st| f(st).map(|v| (st.step, v)))
                .collect())
        };
    let svg = match name {
        "reward" => metaclaw_charts::reward(&series(|s| s.mean_reward)?, theme),
        "loss" => metaclaw_charts::loss(&series(|s| s.loss)?, theme),
        "success_rate" => metaclaw_charts::success_rate(&series(|s| s.success_rate)?, theme),
        "kl" => metaclaw_charts::kl(&series(|s| s.kl)?, theme),
        "prm_distribution" => metaclaw_charts::prm_distribution(&store.prm_score_distribution()?, theme),
        "turns_per_day" => {
            use chrono::Offset;
            let now = s.now();
            let offset = now
                .with_timezone(&metaclaw_domain::local_zone().tz)
                .offset()
                .fix()
                .local_minus_utc()
                / 60;
            let agent = q.agent.as_deref().filter(|a| !a.is_empty());
            metaclaw_charts::turns_per_day(&store.agent_turns_per_day(agent, 14, offset)?, theme)
        }
        other => return Err(ApiError::not_found(format!("no chart `{other}` (reward, loss, success_rate, kl, prm_distribution, turns_per_day)"))),
    }
    .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok((
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        svg,
    )
        .into_response())
}
