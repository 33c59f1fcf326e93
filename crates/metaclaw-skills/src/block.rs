//! The text injected into the system prompt.

use crate::library::Library;
use crate::retrieve::Retrieval;

pub const BLOCK_START: &str = "<!-- metaclaw:skills -->";
pub const BLOCK_END: &str = "<!-- /metaclaw:skills -->";

/// One delimited block, skills sorted by name: the same set of skills always renders to the
/// same bytes, so a provider's prompt cache survives turns whose retrieval did not change.
pub fn render(lib: &Library, retrieval: &Retrieval) -> Option<String> {
    let mut names = retrieval.injected_names();
    if names.is_empty() {
        return None;
    }
    names.sort_unstable();
    let mut out = String::new();
    out.push_str(BLOCK_START);
    out.push_str("\n## Skills\nThese skills were selected for this request. Follow a skill when it applies; ignore it otherwise.\n");
    for name in names {
        let Some(skill) = lib.get(name) else { continue };
        out.push_str(&format!(
            "\n### {}\n_{}_\n\n{}\n",
            skill.name,
            skill.description,
            skill.body.trim()
        ));
    }
    out.push_str(BLOCK_END);
    Some(out)
}
