//! `/api/events`: the core's event bus as Server-Sent Events for the dashboard.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::Stream;
use metaclaw_domain::Event;
use tokio::sync::broadcast::error::RecvError;

use super::Api;

fn name(e: &Event) -> &'static str {
    match e {
        Event::TurnCompleted { .. } => "turn",
        Event::SessionStarted { .. } => "session_started",
        Event::SessionEnded { .. } => "session_ended",
        Event::ProposalsCreated { .. } => "proposals",
        Event::EvolutionFailed { .. } => "evolution_failed",
        Event::SkillChanged { .. } => "skill_changed",
        Event::ConfigChanged => "state",
        Event::Training { .. } => "training",
        Event::RlPhase { .. } => "rl",
    }
}

pub(crate) async fn stream(
    State(s): State<Api>,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let rx = s.parts().events.subscribe();
    let stop = s.parts().shutdown.clone();
    let stream = futures_util::stream::unfold((rx, stop), |(mut rx, stop)| async move {
        let next = tokio::select! {
            _ = stop.cancelled() => return None,
            e = rx.recv() => e,
        };
        let event = match next {
            Ok(e) => SseEvent::default()
                .event(name(&e))
                .data(serde_json::to_string(&e).unwrap_or_else(|_| "{}".into())),
            // A slow dashboard missed some events: tell it to refresh everything.
            Err(RecvError::Lagged(_)) => SseEvent::default().event("state").data("{}"),
            Err(RecvError::Closed) => return None,
        };
        Some((Ok(event), (rx, stop)))
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
