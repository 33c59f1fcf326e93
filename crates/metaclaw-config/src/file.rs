//! Reading and writing config.yaml.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::config::Config;
use crate::document::Document;
use crate::error::ConfigError;
use crate::home::create_private_dir;
use crate::validation::validate;
use crate::warning::ConfigWarning;

/// A validated config together with the document it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedConfig {
    pub config: Config,
    pub warnings: Vec<ConfigWarning>,
    pub document: Document,
}

/// Load and validate a config file; a missing file yields the defaults.
pub fn load(path: &Path) -> Result<LoadedConfig, ConfigError> {
    match fs::read_to_string(path) {
        Ok(text) => load_str(&text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(LoadedConfig {
            config: Config::default(),
            warnings: Vec::new(),
            document: Document::empty(),
        }),
        Err(e) => Err(ConfigError::io("read", path, e)),
    }
}

pub fn load_str(yaml: &str) -> Result<LoadedConfig, ConfigError> {
    let document = Document::parse(yaml)?;
    let (config, warnings) = validate(&document)?;
    for warning in &warnings {
        tracing::debug!(%warning, "config warning");
    }
    Ok(LoadedConfig {
        config,
        warnings,
        document,
    })
}

/// Write atomically (temp file in the same directory, then rename) with mode
/// 0600 on unix, creating the parent directory if needed.
pub fn save(path: &Path, doc: &Document) -> Result<(), ConfigError> {
    let yaml = doc.to_yaml()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    create_private_dir(&parent)?;
    write_atomic(&parent, path, yaml.as_bytes())
}

/// `metaclaw config KEY VALUE`: set, validate the whole result and only then save.
/// Unknown keys are accepted (upstream keeps them) and reported as warnings.
pub fn set_and_save(path: &Path, dotted: &str, raw: &str) -> Result<LoadedConfig, ConfigError> {
    let mut document = load_document(path)?;
    document.set_str(dotted, raw)?;
    let (config, warnings) = validate(&document)?;
    save(path, &document)?;
    Ok(LoadedConfig {
        config,
        warnings,
        document,
    })
}

/// The document alone, without validation (so a broken file can still be fixed key by key).
/// A missing file is an empty document.
pub fn load_document(path: &Path) -> Result<Document, ConfigError> {
    match fs::read_to_string(path) {
        Ok(text) => Document::parse(&text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Document::empty()),
        Err(e) => Err(ConfigError::io("read", path, e)),
    }
}

fn write_atomic(dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), ConfigError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config.yaml".to_owned());

    let (tmp_path, mut file) = loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let candidate = dir.join(format!(".{file_name}.{}.{n}.tmp", std::process::id()));
        match private_create_new(&candidate) {
            Ok(file) => break (candidate, file),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(ConfigError::io("create", candidate, e)),
        }
    };

    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| ConfigError::io("write", &tmp_path, e))
        .and_then(|()| {
            drop(file);
            fs::rename(&tmp_path, path).map_err(|e| ConfigError::io("replace", path, e))
        });
    if written.is_err() {
        let _ = fs::remove_file(&tmp_path);
    }
    written?;
    sync_dir(dir);
    Ok(())
}

fn private_create_new(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Make the rename durable; best effort, some filesystems refuse to sync directories.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choices::Mode;
    use serde_json::json;

    const UPSTREAM_README: &str = include_str!("../testdata/upstream_readme.yaml");

    fn temp_config(contents: Option<&str>) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.yaml");
        if let Some(text) = contents {
            fs::write(&path, text).unwrap();
        }
        (dir, path)
    }

    fn dir_entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn missing_file_gives_defaults() {
        let (_dir, path) = temp_config(None);
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.config, Config::default());
        assert_eq!(loaded.warnings, []);
        assert_eq!(loaded.document, Document::empty());
    }

    #[test]
    fn load_reports_yaml_errors_with_position() {
        let (_dir, path) = temp_config(Some("mode: rl\nllm: [oops\n"));
        let err = load(&path).unwrap_err();
        assert!(
            matches!(err, ConfigError::Yaml { line: Some(2), .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("line 2, column 6"), "{err}");
    }

    #[test]
    fn load_reads_upstream_file() {
        let (_dir, path) = temp_config(Some(UPSTREAM_README));
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.config.mode, Mode::SkillsOnly);
        assert_eq!(loaded.document.get("llm.api_key"), Some(&json!("sk-...")));
    }

    #[cfg(unix)]
    #[test]
    fn save_is_owner_only_and_leaves_no_temp_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("home").join("config.yaml");
        let doc = Document::parse("llm:\n  api_key: sk-secret\n").unwrap();
        save(&path, &doc).unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let parent_mode = fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(parent_mode & 0o777, 0o700);
        // Overwriting an existing, looser file also ends up 0600.
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        save(&path, &doc).unwrap();
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(dir_entries(path.parent().unwrap()), ["config.yaml"]);
        assert_eq!(load(&path).unwrap().document, doc);
    }

    #[test]
    fn set_and_save_round_trip_keeps_unknown_keys_and_order() {
        let original = "\
zeta_custom: keep me
mode: skills_only
llm:
  provider: kimi
  extra_llm_thing: 1
  api_key: sk-a
memory:
  enabled: false
proxy:
  port: 30000
  host: 127.0.0.1
";
        let (_dir, path) = temp_config(Some(original));
        let loaded = set_and_save(&path, "proxy.port", "31000").unwrap();
        assert_eq!(loaded.config.proxy.port, 31000);

        let reread = load(&path).unwrap();
        assert_eq!(reread.document, loaded.document);
        assert_eq!(reread.config, loaded.config);
        assert_eq!(
            serde_json::to_string(reread.document.as_value()).unwrap(),
            r#"{"zeta_custom":"keep me","mode":"skills_only","llm":{"provider":"kimi","extra_llm_thing":1,"api_key":"sk-a"},"memory":{"enabled":false},"proxy":{"port":31000,"host":"127.0.0.1"}}"#
        );
        let keys: Vec<&str> = reread.warnings.iter().map(|w| w.key()).collect();
        assert_eq!(
            keys,
            ["zeta_custom", "llm.extra_llm_thing", "memory.enabled"]
        );
    }

    #[test]
    fn set_and_save_rejects_invalid_values_and_leaves_file_untouched() {
        let (_dir, path) = temp_config(Some(UPSTREAM_README));
        let before = fs::read(&path).unwrap();
        for (key, value, message) in [
            (
                "proxy.port",
                "abc",
                r#"invalid value for `proxy.port`: "abc" (expected an integer 1-65535)"#,
            ),
            (
                "mode",
                "foo",
                r#"invalid value for `mode`: "foo" (allowed: skills_only, rl, auto)"#,
            ),
            (
                "scheduler.sleep_end",
                "25:99",
                r#"invalid value for `scheduler.sleep_end`: "25:99" (expected a time HH:MM (00:00-23:59))"#,
            ),
            (
                "llm",
                "x",
                r#"invalid value for `llm`: "x" (expected a mapping)"#,
            ),
        ] {
            let err = set_and_save(&path, key, value).unwrap_err();
            assert_eq!(err.to_string(), message);
        }
        let err = set_and_save(&path, "mode.sub", "x").unwrap_err();
        assert!(matches!(err, ConfigError::InvalidKey { .. }), "{err:?}");
        assert_eq!(fs::read(&path).unwrap(), before);
        assert_eq!(dir_entries(path.parent().unwrap()), ["config.yaml"]);
    }

    #[test]
    fn set_and_save_accepts_unknown_keys_with_a_warning() {
        let (_dir, path) = temp_config(Some("mode: rl\n"));
        let loaded = set_and_save(&path, "proxy.typo_port", "1").unwrap();
        assert_eq!(
            loaded.warnings,
            [ConfigWarning::UnknownKey {
                key: "proxy.typo_port".into()
            }]
        );
        assert_eq!(
            load(&path).unwrap().document.get("proxy.typo_port"),
            Some(&json!(1))
        );
    }

    #[test]
    fn set_and_save_creates_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new-home").join("config.yaml");
        let loaded = set_and_save(&path, "rl.enabled", "true").unwrap();
        assert!(loaded.config.rl.enabled);
        assert_eq!(fs::read_to_string(&path).unwrap(), "rl:\n  enabled: true\n");
    }

    #[test]
    fn set_and_save_can_repair_a_broken_file() {
        let (_dir, path) = temp_config(Some("mode: foo\n"));
        assert!(load(&path).is_err());
        let loaded = set_and_save(&path, "mode", "rl").unwrap();
        assert_eq!(loaded.config.mode, Mode::Rl);
    }
}
