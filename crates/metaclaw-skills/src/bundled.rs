//! The skill bank shipped inside the binary (the repository's `skills/` folder).

use include_dir::{Dir, include_dir};

static BANK: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../skills");

/// `(folder name, SKILL.md text)` for every bundled skill, in folder order.
pub fn files() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&str, &str)> = BANK
        .dirs()
        .filter_map(|d| {
            let folder = d.path().file_name()?.to_str()?;
            let file = d.get_file(d.path().join("SKILL.md"))?;
            Some((folder, file.contents_utf8()?))
        })
        .collect();
    out.sort_by_key(|(name, _)| *name);
    out
}

/// Copy the bundled bank into `dir`, never overwriting a skill the user already has.
/// Returns the names installed.
pub fn install(dir: &std::path::Path) -> std::io::Result<Vec<String>> {
    let mut installed = Vec::new();
    for (folder, text) in files() {
        let target = dir.join(folder);
        if target.join("SKILL.md").exists() {
            continue;
        }
        std::fs::create_dir_all(&target)?;
        std::fs::write(target.join("SKILL.md"), text)?;
        installed.push(folder.to_owned());
    }
    Ok(installed)
}
