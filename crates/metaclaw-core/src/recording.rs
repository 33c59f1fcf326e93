use std::sync::Arc;

use metaclaw_domain::TurnRecord;
use metaclaw_proxy::TurnHook;
use metaclaw_store::Recorder;

/// Sends every finished turn to the store's background writer. Never blocks.
pub(crate) struct RecordingHook {
    pub recorder: Recorder,
}

impl TurnHook for RecordingHook {
    fn after_response(&self, turn: &Arc<TurnRecord>) {
        self.recorder.record_turn(turn.clone());
    }
}
