//! The MetaClaw home directory (`~/.metaclaw` by default) and the files in it.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::ConfigError;

/// Root of MetaClaw's per-user state.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// `$METACLAW_HOME` if set and non-empty, else `$HOME/.metaclaw`.
    pub fn from_env() -> Result<Home, ConfigError> {
        Home::from_vars(std::env::var_os("METACLAW_HOME"), user_home())
    }

    /// Pure core of `from_env`, so tests never touch the process environment.
    pub(crate) fn from_vars(
        metaclaw_home: Option<OsString>,
        user_home: Option<PathBuf>,
    ) -> Result<Home, ConfigError> {
        if let Some(explicit) = metaclaw_home.filter(|v| !v.is_empty()) {
            // Tolerate an unexpanded "~/…" coming from a .env file or a service unit.
            let root = match explicit.to_str() {
                Some(s) => expand_tilde(s, user_home.as_deref()),
                None => PathBuf::from(explicit),
            };
            return Ok(Home { root });
        }
        user_home
            .map(|h| Home {
                root: h.join(".metaclaw"),
            })
            .ok_or(ConfigError::NoHome)
    }

    pub fn at(root: impl Into<PathBuf>) -> Home {
        Home { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn config_path(&self) -> PathBuf {
        self.root.join("config.yaml")
    }

    pub fn db_path(&self) -> PathBuf {
        self.root.join("metaclaw.db")
    }

    pub fn log_path(&self) -> PathBuf {
        self.root.join("metaclaw.log")
    }

    /// Running daemon's pid, port, mode and start time.
    pub fn state_path(&self) -> PathBuf {
        self.root.join("daemon.json")
    }

    pub fn lock_path(&self) -> PathBuf {
        self.root.join("daemon.lock")
    }

    /// The per-install dashboard token (mode 0600).
    pub fn dashboard_token_path(&self) -> PathBuf {
        self.root.join("dashboard.token")
    }

    pub fn default_skills_dir(&self) -> PathBuf {
        self.root.join("skills")
    }

    /// Create the root directory; owner-only on unix because it holds API keys.
    pub fn ensure(&self) -> Result<(), ConfigError> {
        create_private_dir(&self.root)
    }
}

/// `create_dir_all`, with mode 0700 for directories it creates on unix.
pub(crate) fn create_private_dir(path: &Path) -> Result<(), ConfigError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(path)
        .map_err(|e| ConfigError::io("create directory", path, e))
}

/// The user's home directory from the environment (`HOME`, or `USERPROFILE` on Windows).
pub(crate) fn user_home() -> Option<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let found = non_empty("HOME");
    #[cfg(windows)]
    let found = found.or_else(|| non_empty("USERPROFILE"));
    found.map(PathBuf::from)
}

/// Expand a leading `~` or `~/` with `user_home`; anything else is returned as is.
pub(crate) fn expand_tilde(path: &str, user_home: Option<&Path>) -> PathBuf {
    let Some(home) = user_home else {
        return PathBuf::from(path);
    };
    if path == "~" {
        return home.to_path_buf();
    }
    let rest = path
        .strip_prefix("~/")
        .or_else(|| cfg!(windows).then(|| path.strip_prefix("~\\")).flatten());
    match rest {
        Some(rest) => home.join(rest),
        None => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metaclaw_home_wins_when_set() {
        let home = Home::from_vars(Some("/srv/mc".into()), Some(PathBuf::from("/home/u"))).unwrap();
        assert_eq!(home.root(), Path::new("/srv/mc"));
    }

    #[test]
    fn metaclaw_home_tilde_is_expanded() {
        let home = Home::from_vars(Some("~/mc".into()), Some(PathBuf::from("/home/u"))).unwrap();
        assert_eq!(home.root(), Path::new("/home/u/mc"));
    }

    #[test]
    fn empty_metaclaw_home_falls_back_to_user_home() {
        let home = Home::from_vars(Some("".into()), Some(PathBuf::from("/home/u"))).unwrap();
        assert_eq!(home.root(), Path::new("/home/u/.metaclaw"));
        let home = Home::from_vars(None, Some(PathBuf::from("/home/u"))).unwrap();
        assert_eq!(home.root(), Path::new("/home/u/.metaclaw"));
    }

    #[test]
    fn no_home_at_all_is_an_error() {
        assert!(matches!(
            Home::from_vars(None, None),
            Err(ConfigError::NoHome)
        ));
        assert!(matches!(
            Home::from_vars(Some("".into()), None),
            Err(ConfigError::NoHome)
        ));
    }

    #[test]
    fn file_layout() {
        let home = Home::at("/r");
        assert_eq!(home.config_path(), Path::new("/r/config.yaml"));
        assert_eq!(home.db_path(), Path::new("/r/metaclaw.db"));
        assert_eq!(home.log_path(), Path::new("/r/metaclaw.log"));
        assert_eq!(home.state_path(), Path::new("/r/daemon.json"));
        assert_eq!(home.lock_path(), Path::new("/r/daemon.lock"));
        assert_eq!(home.default_skills_dir(), Path::new("/r/skills"));
    }

    #[test]
    fn tilde_expansion() {
        let h = Some(Path::new("/home/u"));
        assert_eq!(expand_tilde("~", h), Path::new("/home/u"));
        assert_eq!(expand_tilde("~/a/b", h), Path::new("/home/u/a/b"));
        assert_eq!(expand_tilde("~other/a", h), Path::new("~other/a"));
        assert_eq!(expand_tilde("/x/~/y", h), Path::new("/x/~/y"));
        assert_eq!(expand_tilde("~/a", None), Path::new("~/a"));
    }

    #[cfg(unix)]
    #[test]
    fn ensure_creates_owner_only_dir() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::at(tmp.path().join("nested").join(".metaclaw"));
        home.ensure().unwrap();
        home.ensure().unwrap(); // idempotent
        let mode = fs::metadata(home.root()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}
