//! SKILL.md text: parse, lint, and the rewrite path. A skill that parses must render to a file
//! that parses back to the same skill (every frontmatter key kept), and rendering is a fixed
//! point: the rewritten file, parsed and rendered again, is byte-identical.
#![no_main]

use libfuzzer_sys::fuzz_target;
use metaclaw_skills::{Skill, SkillSource, check_skill};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parse = |t: &str| Skill::parse(t, "fuzz/SKILL.md".into(), SkillSource::User);
    let Ok(skill) = parse(text) else { return };
    let _ = check_skill(&skill, &skill.name);
    let _ = check_skill(&skill, "fuzz");
    let _ = (skill.always(), skill.auto_invocation_disabled());
    let _ = (skill.version(), skill.token_estimate());

    let rendered = skill.render();
    let again = parse(&rendered)
        .unwrap_or_else(|e| panic!("the rendered skill does not parse: {e}\n{rendered}"));
    assert_eq!(again.name, skill.name, "name changed\n{rendered}");
    assert_eq!(
        again.description, skill.description,
        "description\n{rendered}"
    );
    assert_eq!(again.category, skill.category, "category\n{rendered}");
    assert_eq!(again.body, skill.body, "body changed\n{rendered}");
    for (key, value) in &skill.frontmatter {
        if !matches!(key.as_str(), "name" | "description" | "category") {
            assert_eq!(
                again.frontmatter.get(key),
                Some(value),
                "`{key}` lost\n{rendered}"
            );
        }
    }
    assert_eq!(again.render(), rendered, "rendering is not a fixed point");
});
