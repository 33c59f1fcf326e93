//! Asking the evolver to revise one skill (the user was correcting the agent after it was
//! injected) or to merge two near-duplicate skills. The answer has the same shape as a
//! distillation's, so it goes through the same parsing and proposal preparation.

use metaclaw_llm::ChatMessage;

use crate::redact::redact;
use crate::transcript::Signal;

const REVISE_SYSTEM: &str = "You maintain a library of skills for an AI agent. A skill is a \
short, reusable instruction file: a name, a one-sentence description that starts with \"Use \
when\" and says exactly which requests it applies to, a category, and a Markdown body with \
numbered steps and an \"Anti-patterns\" section.\n\nOne skill was injected into the \
conversations below, and the user corrected the agent right after. Decide what in the skill \
led the agent astray or failed to prevent the mistake, and propose exactly one revised version \
of that skill under its exact name: fix wrong or missing steps, narrow the description if it \
was injected where it does not apply. Keep what works; keep it general (no names, paths, \
secrets or one-off details from these conversations). Reply with JSON only.";

const MERGE_SYSTEM: &str = "You maintain a library of skills for an AI agent. A skill is a \
short, reusable instruction file: a name, a one-sentence description that starts with \"Use \
when\" and says exactly which requests it applies to, a category, and a Markdown body with \
numbered steps and an \"Anti-patterns\" section.\n\nThe two skills below overlap so much that \
retrieval cannot tell them apart. Propose exactly one skill, under the first skill's exact \
name, that covers everything either of them teaches without repeating itself. Reply with JSON \
only.";

/// One conversation where the skill was injected and then corrected: its redacted
/// transcript and its signals.
#[derive(Debug, Clone)]
pub struct Episode {
    pub session_id: String,
    pub transcript: String,
    pub signals: Vec<Signal>,
}

/// The chat messages asking for a revised `name` (its current SKILL.md is `skill_md`).
/// `evidence` is a one-line summary of the measured outcomes. All text is redacted here,
/// whatever the caller did.
pub fn revision_messages(
    name: &str,
    skill_md: &str,
    evidence: &str,
    episodes: &[Episode],
) -> Vec<ChatMessage> {
    let mut user = format!("## The skill `{name}` (SKILL.md)\n{}\n", redact(skill_md));
    user.push_str(&format!("\n## What was measured\n{}\n", redact(evidence)));
    for (i, e) in episodes.iter().enumerate() {
        user.push_str(&format!(
            "\n## Conversation {} (session {})\n{}\n",
            i + 1,
            e.session_id,
            redact(&e.transcript)
        ));
        if !e.signals.is_empty() {
            user.push_str("Signals:\n");
        }
        for s in &e.signals {
            user.push_str(&format!(
                "- turn {}: {:?}: {}\n",
                s.turn_id,
                s.kind,
                redact(&s.detail)
            ));
        }
    }
    user.push_str(&format!(
        "\nAnswer with {{\"proposals\": [...]}} holding one proposal named \"{name}\"."
    ));
    vec![ChatMessage::system(REVISE_SYSTEM), ChatMessage::user(user)]
}

/// The chat messages asking for one skill named `keep` that also covers `absorb`.
pub fn merge_messages(
    keep: &str,
    keep_md: &str,
    absorb: &str,
    absorb_md: &str,
) -> Vec<ChatMessage> {
    let user = format!(
        "## First skill `{keep}` (keep this name)\n{}\n\n## Second skill `{absorb}`\n{}\n\n\
         Answer with {{\"proposals\": [...]}} holding one proposal named \"{keep}\".",
        redact(keep_md),
        redact(absorb_md)
    );
    vec![ChatMessage::system(MERGE_SYSTEM), ChatMessage::user(user)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::SignalKind;

    #[test]
    fn revision_request_names_the_skill_and_is_redacted() {
        let episodes = [Episode {
            session_id: "s1".into(),
            transcript: "User: deploy with sk-abcdefghijklmnopqrstu123\nAssistant: done".into(),
            signals: vec![Signal {
                turn_id: "t1".into(),
                kind: SignalKind::Correction,
                detail: "No, that's wrong".into(),
            }],
        }];
        let m = revision_messages(
            "fix-flaky-tests",
            "---\nname: fix-flaky-tests\n---\nbody",
            "bad outcomes 6/8 with it",
            &episodes,
        );
        assert_eq!(m.len(), 2);
        let text = serde_json::to_string(&m).unwrap();
        assert!(text.contains("fix-flaky-tests") && text.contains("Correction"));
        assert!(text.contains("6/8"));
        assert!(!text.contains("sk-abcdefghijklmnopqrstu123"), "{text}");
        let merge = serde_json::to_string(&merge_messages("a-b", "A", "c-d", "C")).unwrap();
        assert!(merge.contains("named \\\"a-b\\\""), "{merge}");
    }
}
