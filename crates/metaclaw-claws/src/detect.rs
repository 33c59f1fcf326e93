//! Whether a claw is installed on this machine, judged from its files and `PATH` (no claw is run).

use std::path::{Path, PathBuf};

use crate::params::PathEnv;
use crate::recipe::Recipe;

/// The sign that `recipe`'s claw is installed: the first of its config files that exists, or
/// the nearest existing folder on the way to one, below the home directory (the home itself
/// and `/` prove nothing); else its program on `PATH`, for a claw installed but never run.
/// `None` when the claw left no trace.
pub fn installed(recipe: &Recipe, env: &PathEnv) -> Option<PathBuf> {
    let files = recipe
        .resolve_paths(env)
        .ok()
        .and_then(|paths| paths.iter().find_map(|(_, path)| evidence(path, &env.home)));
    files.or_else(|| on_path(&recipe.commands, env))
}

/// The first of `commands` found as an executable on the environment's `PATH`.
fn on_path(commands: &[String], env: &PathEnv) -> Option<PathBuf> {
    let dirs = env.var("PATH")?;
    commands
        .iter()
        .find_map(|c| which::which_in_global(c, Some(dirs)).ok()?.next())
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
    use std::os::unix::fs::PermissionsExt;

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

    /// Installed but never run: no file yet, only the program on PATH. A file wins, since it
    /// is where the wiring goes.
    #[test]
    fn a_claw_program_on_path_is_evidence_before_it_writes_a_file() {
        let home = tempfile::tempdir().unwrap();
        let bin = tempfile::tempdir().unwrap();
        let claude = crate::recipe("claude-code").unwrap();
        let path = std::env::join_paths([bin.path()]).unwrap();
        let env = PathEnv::new(home.path()).with_var("PATH", path.to_string_lossy());
        assert_eq!(installed(&claude, &env), None);
        let program = bin.path().join("claude");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        // A file that cannot be run is not the program.
        assert_eq!(installed(&claude, &env), None);
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(installed(&claude, &env), Some(program));
        // Another claw's program proves nothing about this one.
        let qwen = crate::recipe("qwen-code").unwrap();
        assert_eq!(installed(&qwen, &env), None);
        std::fs::create_dir(home.path().join(".claude")).unwrap();
        assert_eq!(installed(&claude, &env), Some(home.path().join(".claude")));
    }
}
