use std::sync::Arc;
use std::time::Duration;

use metaclaw_domain::{TurnRecord, TurnType};
use metaclaw_proxy::{HookFuture, PreparedRequest, TurnContext, TurnHook};
use metaclaw_store::{FollowUp, Recorder};

/// How long a request waits for the recording queue to make room before it goes ahead
/// anyway: a writer stuck this long (a failing disk) must not also stop the agent.
const ROOM_WAIT: Duration = Duration::from_secs(60);

/// Sends every finished turn to the store's background writer, and holds new requests back
/// while the writer's queue is full (so a burst cannot pile up answered turns in memory).
pub(crate) struct RecordingHook {
    pub recorder: Recorder,
}

impl TurnHook for RecordingHook {
    fn before_forward<'a>(
        &'a self,
        ctx: &'a TurnContext,
        _request: &'a mut PreparedRequest,
    ) -> HookFuture<'a> {
        Box::pin(async move {
            if tokio::time::timeout(ROOM_WAIT, self.recorder.wait_for_room())
                .await
                .is_err()
            {
                tracing::warn!(
                    turn_id = %ctx.turn_id,
                    "the database writer has been behind for {} s; serving the turn anyway",
                    ROOM_WAIT.as_secs()
                );
            }
        })
    }

    fn after_response(&self, turn: &Arc<TurnRecord>) {
        self.recorder.record_turn(turn.clone());
        // A main turn's request tells how the previous answer went (the user corrected it or
        // asked again, its tool calls failed): an outcome of that turn for the skills'
        // evidence and for its RL reward. Sent
        // after the turn, so the writer finds it stored.
        if turn.turn_type == TurnType::Main {
            let seen = metaclaw_evolve::follow_up(&turn.request);
            if seen.correction || seen.retry || seen.tool_error {
                self.recorder.record_follow_up(FollowUp {
                    turn_id: turn.turn_id.clone(),
                    session_id: turn.session_id.clone(),
                    correction: seen.correction,
                    retry: seen.retry,
                    tool_error: seen.tool_error,
                });
            }
        }
    }
}
