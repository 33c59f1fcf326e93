//! What the tray shows: one of five states, derived from the core's snapshot and the events
//! seen so far. Pure, so it is tested without any runtime.

use metaclaw_domain::Event;

/// The tray icon's state; each has its own icon in `icons/tray-<name>.png`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    Idle,
    /// Sessions are open: turns are recorded and skills distilled from them.
    Learning,
    /// An RL step runs.
    Training,
    /// The user paused learning.
    Paused,
    /// The last evolution run or training step failed (cleared by the next success).
    Error,
}

impl Activity {
    pub fn name(self) -> &'static str {
        match self {
            Activity::Idle => "idle",
            Activity::Learning => "learning",
            Activity::Training => "training",
            Activity::Paused => "paused",
            Activity::Error => "error",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Activity::Idle => "Idle",
            Activity::Learning => "Learning",
            Activity::Training => "Training",
            Activity::Paused => "Paused",
            Activity::Error => "Error",
        }
    }
}

/// Which weights answer chat, in words for the tray. `rl_mode`: the mode routes chat to the
/// RL policy; `rl_phase`: the RL service's phase (`off`, `starting`, `serving`, `failed`);
/// `sampler_step`: the adapter version that serves (0 = the base model, nothing trained).
pub fn serving_weights(rl_mode: bool, rl_phase: &str, sampler_step: Option<u64>) -> String {
    match (rl_mode, rl_phase, sampler_step) {
        (false, ..) => "Serves: your upstream model".to_owned(),
        (true, "serving", Some(step)) if step > 0 => format!("Serves: adapter v{step}"),
        (true, "serving", _) => "Serves: base model (no adapter yet)".to_owned(),
        (true, "failed", _) => "Serves: your upstream model (RL could not start)".to_owned(),
        (true, ..) => "Serves: your upstream model (RL is starting)".to_owned(),
    }
}

/// A notification the tray wants to show; which kinds appear is up to the user's switches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub kind: NoticeKind,
    pub title: String,
    pub body: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    Proposals,
    Training,
    Window,
    /// The answer to something the user just clicked; always shown.
    Feedback,
}

/// The state the tray accumulates from the event bus.
#[derive(Debug, Default, Clone)]
pub struct TrayStatus {
    open_sessions: u64,
    training_step: Option<u64>,
    error: Option<String>,
    last_event: Option<String>,
    window_open: bool,
    /// The last [`serving_weights`] text, when it names an adapter (the tooltip shows it).
    adapter: Option<String>,
}

impl TrayStatus {
    pub fn last_event(&self) -> Option<&str> {
        self.last_event.as_deref()
    }

    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    pub fn set_last_event(&mut self, text: impl Into<String>) {
        self.last_event = Some(text.into());
    }

    /// Which weights serve, as [`serving_weights`] said; the adapter version is kept for
    /// the tooltip.
    pub fn set_serving(&mut self, text: &str) {
        self.adapter = text.strip_prefix("Serves: adapter ").map(str::to_owned);
    }

    /// The serving adapter's version (`v7`), when one serves.
    pub fn adapter(&self) -> Option<&str> {
        self.adapter.as_deref()
    }

    /// Paused wins (the user asked for it), then a failure, then what runs.
    pub fn activity(&self, paused: bool, training_running: bool) -> Activity {
        if paused {
            Activity::Paused
        } else if self.error.is_some() {
            Activity::Error
        } else if training_running || self.training_step.is_some() {
            Activity::Training
        } else if self.open_sessions > 0 {
            Activity::Learning
        } else {
            Activity::Idle
        }
    }

    /// Fold one core event in; returns the notification it deserves, if any.
    pub fn apply(&mut self, event: &Event) -> Option<Notice> {
        match event {
            Event::SessionStarted { .. } => {
                self.open_sessions += 1;
                self.last_event = Some("session started".into());
                None
            }
            Event::SessionEnded { turns, .. } => {
                self.open_sessions = self.open_sessions.saturating_sub(1);
                self.last_event = Some(format!("session ended ({turns} turns)"));
                None
            }
            Event::ProposalsCreated { proposal_ids, .. } => {
                let n = proposal_ids.len();
                let text = if n == 1 {
                    "1 new skill proposal".to_owned()
                } else {
                    format!("{n} new skill proposals")
                };
                self.error = None;
                self.last_event = Some(text.clone());
                Some(Notice {
                    kind: NoticeKind::Proposals,
                    title: text,
                    body: "Review them in the MetaClaw inbox.".into(),
                })
            }
            Event::EvolutionFailed { error, .. } => {
                self.error = Some(format!("skill evolution failed: {error}"));
                self.last_event = Some("skill evolution failed".into());
                None
            }
            Event::Training {
                step,
                status,
                progress,
            } => self.training(*step, status, *progress),
            Event::ConfigChanged => {
                self.last_event = Some("settings changed".into());
                None
            }
            Event::RlPhase {
                phase,
                message,
                progress,
            } => self.rl_phase(phase, message.as_deref(), *progress),
            // Turns and skill changes do not change the tray; new event kinds default to that.
            _ => None,
        }
    }

    /// RL start-up as it happens; a failure is an error state with a notice saying why.
    fn rl_phase(
        &mut self,
        phase: &str,
        message: Option<&str>,
        progress: Option<f64>,
    ) -> Option<Notice> {
        let text = match (phase, message, progress) {
            ("starting", Some(m), Some(p)) => format!("RL starting: {m} ({:.0}%)", p * 100.0),
            ("starting", Some(m), None) => format!("RL starting: {m}"),
            ("starting", None, _) => "RL starting".to_owned(),
            ("serving", ..) => {
                self.error = None;
                "RL serves chat".to_owned()
            }
            ("failed", m, _) => {
                let why = m.unwrap_or("unknown reason");
                self.error = Some(format!("RL could not start: {why}"));
                self.last_event = Some("RL could not start".to_owned());
                return Some(Notice {
                    kind: NoticeKind::Training,
                    title: "RL could not start".into(),
                    body: why.to_owned(),
                });
            }
            _ => "RL off".to_owned(),
        };
        self.last_event = Some(text);
        None
    }

    fn training(&mut self, step: u64, status: &str, progress: Option<f64>) -> Option<Notice> {
        match status {
            "running" => {
                self.training_step = Some(step);
                self.last_event = Some(match progress {
                    Some(p) => format!("training step {step}: {:.0}%", p * 100.0),
                    None => format!("training step {step} running"),
                });
                None
            }
            "ok" | "finished" | "done" => {
                self.training_step = None;
                self.error = None;
                self.last_event = Some(format!("training step {step} finished"));
                Some(Notice {
                    kind: NoticeKind::Training,
                    title: format!("Training step {step} finished"),
                    body: "See Training in the dashboard for its reward and loss.".into(),
                })
            }
            "failed" | "error" => {
                self.training_step = None;
                self.error = Some(format!("training step {step} failed"));
                self.last_event = Some(format!("training step {step} failed"));
                Some(Notice {
                    kind: NoticeKind::Training,
                    title: format!("Training step {step} failed"),
                    body: "See Training in the dashboard for the reason.".into(),
                })
            }
            other => {
                self.training_step = None;
                self.last_event = Some(format!("training step {step} {other}"));
                None
            }
        }
    }

    /// The scheduler's state as polled; a newly opened window deserves a notification.
    pub fn scheduler(&mut self, state: &str, source: Option<&str>) -> Option<Notice> {
        let open = matches!(state, "window_open" | "updating");
        let opened = open && !self.window_open;
        self.window_open = open;
        if !opened {
            return None;
        }
        let from = source.map(|s| format!(" ({s})")).unwrap_or_default();
        self.last_event = Some(format!("training window opened{from}"));
        Some(Notice {
            kind: NoticeKind::Window,
            title: format!("Training window opened{from}"),
            body: "MetaClaw trains while you are away and pauses when you are back.".into(),
        })
    }

    /// The user looked at the problem (opened the dashboard): back to the normal icon.
    pub fn acknowledge_error(&mut self) {
        self.error = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use metaclaw_domain::SessionEndReason;

    #[test]
    fn the_tray_names_the_adapter_version_that_serves() {
        assert_eq!(
            serving_weights(true, "serving", Some(7)),
            "Serves: adapter v7"
        );
        assert_eq!(
            serving_weights(true, "serving", Some(0)),
            "Serves: base model (no adapter yet)"
        );
        assert_eq!(
            serving_weights(true, "serving", None),
            "Serves: base model (no adapter yet)"
        );
        assert_eq!(
            serving_weights(true, "starting", Some(3)),
            "Serves: your upstream model (RL is starting)"
        );
        assert_eq!(
            serving_weights(true, "failed", None),
            "Serves: your upstream model (RL could not start)"
        );
        assert_eq!(
            serving_weights(false, "serving", Some(7)),
            "Serves: your upstream model"
        );
        let mut s = TrayStatus::default();
        s.set_serving(&serving_weights(true, "serving", Some(7)));
        assert_eq!(s.adapter(), Some("v7"));
        s.set_serving(&serving_weights(true, "serving", Some(0)));
        assert_eq!(s.adapter(), None);
    }

    fn training(step: u64, status: &str) -> Event {
        Event::Training {
            step,
            status: status.into(),
            progress: Some(0.5),
        }
    }

    #[test]
    fn sessions_learn_training_trains_pause_wins() {
        let mut s = TrayStatus::default();
        assert_eq!(s.activity(false, false), Activity::Idle);
        s.apply(&Event::SessionStarted {
            session_id: "a".into(),
            at: Utc::now(),
        });
        assert_eq!(s.activity(false, false), Activity::Learning);
        s.apply(&training(3, "running"));
        assert_eq!(s.activity(false, false), Activity::Training);
        assert_eq!(s.last_event(), Some("training step 3: 50%"));
        assert_eq!(s.activity(true, false), Activity::Paused);
        let n = s.apply(&training(3, "ok")).unwrap();
        assert_eq!(n.kind, NoticeKind::Training);
        s.apply(&Event::SessionEnded {
            session_id: "a".into(),
            reason: SessionEndReason::IdleTimeout,
            turns: 4,
            at: Utc::now(),
        });
        assert_eq!(s.activity(false, false), Activity::Idle);
    }

    #[test]
    fn failures_show_error_until_a_success() {
        let mut s = TrayStatus::default();
        let n = s.apply(&training(7, "failed")).unwrap();
        assert_eq!(n.title, "Training step 7 failed");
        assert_eq!(s.activity(false, false), Activity::Error);
        s.apply(&Event::ProposalsCreated {
            session_id: None,
            proposal_ids: vec![1, 2],
        })
        .unwrap();
        assert_eq!(s.activity(false, false), Activity::Idle);
        s.apply(&Event::EvolutionFailed {
            session_id: None,
            error: "timeout".into(),
        });
        assert_eq!(s.activity(false, false), Activity::Error);
        s.acknowledge_error();
        assert_eq!(s.activity(false, false), Activity::Idle);
    }

    fn rl(phase: &str, message: Option<&str>, progress: Option<f64>) -> Event {
        Event::RlPhase {
            phase: phase.into(),
            message: message.map(Into::into),
            progress,
        }
    }

    #[test]
    fn rl_start_up_is_followed_step_by_step_and_a_failure_says_why() {
        let mut s = TrayStatus::default();
        let step = "downloading the tokenizer of Qwen/Qwen3-8B";
        assert!(s.apply(&rl("starting", Some(step), None)).is_none());
        assert_eq!(
            s.last_event(),
            Some(format!("RL starting: {step}").as_str())
        );
        s.apply(&rl("starting", Some(step), Some(0.4)));
        assert_eq!(
            s.last_event(),
            Some(format!("RL starting: {step} (40%)").as_str())
        );
        let n = s
            .apply(&rl(
                "failed",
                Some("Tinker session: connection refused"),
                None,
            ))
            .unwrap();
        assert_eq!(n.kind, NoticeKind::Training);
        assert_eq!(n.body, "Tinker session: connection refused");
        assert_eq!(s.activity(false, false), Activity::Error);
        assert_eq!(
            s.error(),
            Some("RL could not start: Tinker session: connection refused")
        );
        s.apply(&rl("serving", None, None));
        assert_eq!(s.last_event(), Some("RL serves chat"));
        assert_eq!(s.activity(false, false), Activity::Idle);
    }

    #[test]
    fn a_window_is_announced_once_when_it_opens() {
        let mut s = TrayStatus::default();
        assert!(s.scheduler("idle_wait", None).is_none());
        let n = s.scheduler("window_open", Some("idle")).unwrap();
        assert_eq!(n.title, "Training window opened (idle)");
        assert!(s.scheduler("updating", Some("idle")).is_none());
        assert!(s.scheduler("idle_wait", None).is_none());
        assert!(s.scheduler("window_open", Some("sleep")).is_some());
    }
}
