//! Whether a claw is installed on this machine, judged from its files alone (no claw is run).

use std::path::{Path, PathBuf};

use crate::params::PathEnv;
use crate::recipe::Recipe;

/// The sign that `recipe`'s claw is installed: the first of its config files that exists, or
/// the nearest existing folder on the way to one, below the home directory (the home itself
/// and `/` prove nothing). `None` when the claw left no trace.
pub fn installed(recipe: &Recipe, env: &PathEnv) -> Option<PathBuf> {
    let paths = recipe.resolve_paths(env).ok()?;
    paths.iter().find_map(|(_, path)| evidence(path, &env.home))
}

fn evidence(config: &Path, home: &Path) -> Option<PathBuf> {
    config
        .ancestors()
        .take_while(|p| *p != home && p.parent().is_some())
        .find(|p| p.exists())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claw_folder_under_home_is_evidence_and_home_is_not() {
        let home = tempfile::tempdir().unwrap();
        let env = PathEnv::new(home.path());
        let hermes = crate::recipe("hermes").unwrap();
        assert_eq!(installed(&hermes, &env), None);
        std::fs::create_dir(home.path().join(".hermes")).unwrap();
        assert_eq!(installed(&hermes, &env), Some(home.path().join(".hermes")));
        std::fs::write(home.path().join(".hermes/config.yaml"), "model: {}\n").unwrap();
        assert_eq!(
            installed(&hermes, &env),
            Some(home.path().join(".hermes/config.yaml"))
        );
    }
}
