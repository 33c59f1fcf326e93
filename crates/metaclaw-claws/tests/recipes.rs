//! Golden tests for every built-in recipe, plus backup/restore behaviour.
//!
//! Each golden test copies a realistic config (tests/fixtures/<claw>/) into a
//! temporary home, applies the recipe, compares the result with the checked-in
//! `*.expected` file, re-applies (must be byte-identical), then restores (must
//! give back the original bytes, or no file). Regenerate goldens with
//! `UPDATE_GOLDEN=1 cargo test -p metaclaw-claws --test recipes` and review the diff.

use std::fs;
use std::path::{Path, PathBuf};

use metaclaw_claws::{
    ClawError, OriginalValue, PathEnv, RestoreOutcome, WireParams, WriteAction, apply, forget,
    recipe, recipes, restore,
};

fn params() -> WireParams {
    WireParams {
        base_url: "http://127.0.0.1:30120/v1".into(),
        anthropic_base_url: "http://127.0.0.1:30120".into(),
        api_key: "metaclaw-test-key".into(),
        model: "qwen3-coder-30b".into(),
        context_window: 65536,
        max_tokens: 8192,
        passthrough: false,
    }
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    fn state(&self) -> PathBuf {
        self.path(".metaclaw/claws")
    }
    fn env(&self) -> PathEnv {
        PathEnv::new(self.dir.path())
    }
    fn put(&self, fixture: &str, rel: &str) {
        let dest = self.path(rel);
        fs::create_dir_all(dest.parent().unwrap()).unwrap();
        fs::copy(fixtures().join(fixture), dest).unwrap();
    }
    fn read(&self, rel: &str) -> Option<Vec<u8>> {
        fs::read(self.path(rel)).ok()
    }
}

fn check_golden(actual: &[u8], expected_fixture: &str) {
    let path = fixtures().join(expected_fixture);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs::write(&path, actual).unwrap();
    }
    let expected = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        String::from_utf8_lossy(actual),
        String::from_utf8_lossy(&expected),
        "output differs from {expected_fixture}"
    );
}

/// apply -> golden; apply again -> identical; restore -> originals.
/// `files` maps the file's place under home to its golden.
fn golden_cycle(home: &Home, env: &PathEnv, claw: &str, files: &[(&str, &str)]) -> String {
    let r = recipe(claw).unwrap();
    let originals: Vec<Option<Vec<u8>>> = files.iter().map(|(rel, _)| home.read(rel)).collect();

    let first = apply(&r, &params(), env, &home.state()).unwrap();
    assert_eq!(first.files.len(), files.len());
    for (rel, golden) in files {
        check_golden(&home.read(rel).expect("file written"), golden);
    }
    let written: Vec<_> = files.iter().map(|(rel, _)| home.read(rel)).collect();

    let second = apply(&r, &params(), env, &home.state()).unwrap();
    assert!(
        second
            .files
            .iter()
            .all(|f| f.action == WriteAction::Unchanged),
        "{second}"
    );
    assert!(!second.changed());
    let rewritten: Vec<_> = files.iter().map(|(rel, _)| home.read(rel)).collect();
    assert_eq!(written, rewritten, "re-applying changed bytes");
    // The backup still holds the very first original.
    for (f, original) in second.files.iter().zip(&originals) {
        match (&f.backup, original) {
            (Some(b), Some(o)) => assert_eq!(&fs::read(b).unwrap(), o),
            (None, None) => {}
            other => panic!("backup mismatch: {other:?}"),
        }
    }

    let restored = restore(&r, &home.state()).unwrap();
    assert!(restored.is_complete(), "{restored}");
    for ((rel, _), original) in files.iter().zip(&originals) {
        assert_eq!(&home.read(rel), original, "{rel} not restored exactly");
    }
    assert!(!home.state().join(claw).exists(), "state not cleared");
    format!("{first}\n---\n{restored}")
}

#[test]
fn zeroclaw_legacy_layout_golden() {
    let home = Home::new();
    home.put("zeroclaw/config.v1.toml", ".zeroclaw/config.toml");
    let out = golden_cycle(
        &home,
        &home.env(),
        "zeroclaw",
        &[(".zeroclaw/config.toml", "zeroclaw/config.v1.toml.expected")],
    );
    let backup = home.state().join("zeroclaw/config.original");
    assert_eq!(
        out,
        format!(
            "ZeroClaw: wrote ~/.zeroclaw/config.toml [top-level keys layout]: default_provider, default_model, api_key (backup kept in {})\n  \
             note: ZeroClaw 0.8+ rewrites a config without schema_version into its newer layout on load; if it did, unwiring lists the keys to revert instead of restoring the file\n\
             ---\nZeroClaw: restored ~/.zeroclaw/config.toml to its original contents",
            backup.display()
        )
    );
}

#[test]
fn zeroclaw_schema_v3_layout_golden() {
    let home = Home::new();
    home.put("zeroclaw/config.v3.toml", "zc/config.toml");
    let env = home
        .env()
        .with_var("ZEROCLAW_CONFIG_DIR", home.path("zc").to_string_lossy());
    let out = golden_cycle(
        &home,
        &env,
        "zeroclaw",
        &[("zc/config.toml", "zeroclaw/config.v3.toml.expected")],
    );
    assert!(out.contains("[schema_version 3+ layout]"), "{out}");
}

#[test]
fn toml_edit_keeps_comments_and_unrelated_keys() {
    let expected = fs::read_to_string(fixtures().join("zeroclaw/config.v1.toml.expected")).unwrap();
    for kept in [
        "# ZeroClaw configuration (written by `zeroclaw onboard`).",
        "api_key = \"metaclaw-test-key\"   # OpenRouter key",
        "# Loopback only; pairing required.",
        "# Route reasoning tasks to a stronger model.",
        "default_temperature = 0.7",
        "[channels_config.telegram]",
    ] {
        assert!(expected.contains(kept), "lost: {kept}");
    }
    let v3 = fs::read_to_string(fixtures().join("zeroclaw/config.v3.toml.expected")).unwrap();
    assert!(v3.contains("model_provider = \"custom.metaclaw\"   # was default_provider"));
    assert!(v3.contains("# The agent everything talks to."));
}

#[test]
fn ironclaw_golden() {
    let home = Home::new();
    home.put("ironclaw/env", ".ironclaw/.env");
    golden_cycle(
        &home,
        &home.env(),
        "ironclaw",
        &[(".ironclaw/.env", "ironclaw/env.expected")],
    );
}

#[test]
fn dotenv_keeps_comments_and_other_lines() {
    let original = fs::read_to_string(fixtures().join("ironclaw/env")).unwrap();
    let expected = fs::read_to_string(fixtures().join("ironclaw/env.expected")).unwrap();
    let changed: Vec<_> = original
        .lines()
        .zip(expected.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(
        changed,
        vec![("LLM_BACKEND=nearai", "LLM_BACKEND=openai_compatible")]
    );
    let appended: Vec<_> = expected.lines().skip(original.lines().count()).collect();
    assert_eq!(
        appended,
        [
            "LLM_BASE_URL=http://127.0.0.1:30120/v1",
            "LLM_API_KEY=metaclaw-test-key",
            "LLM_MODEL=qwen3-coder-30b"
        ]
    );
    for kept in [
        "# LLM provider",
        "export GATEWAY_ENABLED=true",
        "TELEGRAM_BOT_TOKEN=\"123456:telegram token\"",
    ] {
        assert!(expected.contains(kept), "lost: {kept}");
    }
}

#[test]
fn ironclaw_base_dir_override() {
    let home = Home::new();
    home.put("ironclaw/env", "srv/iron/.env");
    let env = home
        .env()
        .with_var("IRONCLAW_BASE_DIR", home.path("srv/iron").to_string_lossy());
    golden_cycle(
        &home,
        &env,
        "ironclaw",
        &[("srv/iron/.env", "ironclaw/env.expected")],
    );
    assert!(!home.path(".ironclaw").exists());
}

#[test]
fn picoclaw_golden() {
    let home = Home::new();
    home.put("picoclaw/config.json", ".picoclaw/config.json");
    golden_cycle(
        &home,
        &home.env(),
        "picoclaw",
        &[(".picoclaw/config.json", "picoclaw/config.json.expected")],
    );
    let v: serde_json::Value = serde_json::from_slice(
        &fs::read(fixtures().join("picoclaw/config.json.expected")).unwrap(),
    )
    .unwrap();
    assert_eq!(v["version"], 3);
    assert_eq!(v["agents"]["defaults"]["model_name"], "metaclaw");
    assert_eq!(v["model_list"].as_array().unwrap().len(), 3);
    assert_eq!(
        v["model_list"][2],
        serde_json::json!({
            "model_name": "metaclaw",
            "model": "openai/qwen3-coder-30b",
            "api_base": "http://127.0.0.1:30120/v1",
            "api_keys": ["metaclaw-test-key"],
            "enabled": true
        })
    );
}

#[test]
fn nanoclaw_golden() {
    let home = Home::new();
    home.put("nanoclaw/env", "nanoclaw/.env");
    let out = golden_cycle(
        &home,
        &home.env(),
        "nanoclaw",
        &[("nanoclaw/.env", "nanoclaw/env.expected")],
    );
    assert!(out.contains("host.docker.internal"), "{out}");
}

#[test]
fn nanoclaw_needs_an_install() {
    let home = Home::new();
    let r = recipe("nanoclaw").unwrap();
    let err = apply(&r, &params(), &home.env(), &home.state()).unwrap_err();
    assert!(matches!(err, ClawError::ConfigNotFound { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "nanoclaw: no config file found; looked for ~/nanoclaw, ~/code/nanoclaw, ~/.nanoclaw"
    );
    assert!(!home.state().exists());
    // The explicit override wins and may point anywhere.
    home.put("nanoclaw/env", "checkouts/nc/.env");
    let env = home.env().with_var(
        "METACLAW_NANOCLAW_DIR",
        home.path("checkouts/nc").to_string_lossy(),
    );
    golden_cycle(
        &home,
        &env,
        "nanoclaw",
        &[("checkouts/nc/.env", "nanoclaw/env.expected")],
    );
}

#[test]
fn hermes_golden() {
    let home = Home::new();
    home.put("hermes/config.yaml", ".hermes/config.yaml");
    let out = golden_cycle(
        &home,
        &home.env(),
        "hermes",
        &[(".hermes/config.yaml", "hermes/config.yaml.expected")],
    );
    assert!(
        out.contains("note: comments and formatting in ~/.hermes/config.yaml were not kept (YAML is rewritten)"),
        "{out}"
    );
}

#[test]
fn copaw_golden_two_files() {
    let home = Home::new();
    home.put(
        "copaw/active_model.json",
        ".qwenpaw.secret/providers/active_model.json",
    );
    let out = golden_cycle(
        &home,
        &home.env(),
        "copaw",
        &[
            (
                ".qwenpaw.secret/providers/custom/metaclaw.json",
                "copaw/metaclaw.json.expected",
            ),
            (
                ".qwenpaw.secret/providers/active_model.json",
                "copaw/active_model.json.expected",
            ),
        ],
    );
    assert!(
        out.contains("CoPaw: created ~/.qwenpaw.secret/providers/custom/metaclaw.json"),
        "{out}"
    );
    assert!(
        out.contains("CoPaw: deleted ~/.qwenpaw.secret/providers/custom/metaclaw.json"),
        "{out}"
    );
    // The `custom` directory MetaClaw had to create is gone again.
    assert!(!home.path(".qwenpaw.secret/providers/custom").exists());
    assert!(home.path(".qwenpaw.secret/providers").exists());
}

#[test]
fn copaw_prefers_legacy_home_and_env_overrides() {
    let home = Home::new();
    let r = recipe("copaw").unwrap();
    let paths = |env: &PathEnv| metaclaw_claws::config_paths(&r, env).unwrap();
    assert_eq!(
        paths(&home.env())[1],
        home.path(".qwenpaw.secret/providers/active_model.json")
    );
    fs::create_dir(home.path(".copaw")).unwrap();
    assert_eq!(
        paths(&home.env())[1],
        home.path(".copaw.secret/providers/active_model.json")
    );
    let env = home.env().with_var("COPAW_WORKING_DIR", "/data/copaw");
    assert_eq!(
        paths(&env)[0],
        PathBuf::from("/data/copaw.secret/providers/custom/metaclaw.json")
    );
    let env = env.with_var("QWENPAW_SECRET_DIR", "/run/secrets/qp");
    assert_eq!(
        paths(&env)[1],
        PathBuf::from("/run/secrets/qp/providers/active_model.json")
    );
}

#[test]
fn absent_file_is_created_then_deleted_with_its_directories() {
    let home = Home::new();
    let r = recipe("hermes").unwrap();
    let report = apply(&r, &params(), &home.env(), &home.state()).unwrap();
    assert_eq!(report.files[0].action, WriteAction::Created);
    assert_eq!(report.files[0].backup, None);
    assert_eq!(
        report.to_string().lines().next().unwrap(),
        "Hermes Agent: created ~/.hermes/config.yaml: model.provider, model.default, model.base_url, \
         model.api_key, model.context_length (it did not exist; unwiring deletes it)"
    );
    let text = fs::read_to_string(home.path(".hermes/config.yaml")).unwrap();
    let v: serde_json::Value = serde_saphyr_roundtrip(&text);
    assert_eq!(
        v,
        serde_json::json!({"model": {
            "provider": "custom",
            "default": "qwen3-coder-30b",
            "base_url": "http://127.0.0.1:30120/v1",
            "api_key": "metaclaw-test-key",
            "context_length": 65536
        }})
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(home.path(".hermes/config.yaml"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "a new file holding a key is private");
    }
    let restored = restore(&r, &home.state()).unwrap();
    assert_eq!(restored.files[0].outcome, RestoreOutcome::Deleted);
    assert_eq!(
        restored.to_string(),
        "Hermes Agent: deleted ~/.hermes/config.yaml (MetaClaw had created it)"
    );
    assert!(
        !home.path(".hermes").exists(),
        "created directory left behind"
    );
    // A second restore has nothing to do.
    let again = restore(&r, &home.state()).unwrap();
    assert!(!again.was_wired);
    assert_eq!(
        again.to_string(),
        "Hermes Agent: nothing to restore (MetaClaw has not wired it)"
    );
}

fn serde_saphyr_roundtrip(text: &str) -> serde_json::Value {
    // Parse the YAML the engine wrote through JSON-compatible types.
    let v: serde_json::Value = serde_saphyr::from_str(text).unwrap();
    v
}

#[test]
fn user_edits_after_apply_are_kept_and_our_keys_removed() {
    let home = Home::new();
    home.put("zeroclaw/config.v1.toml", ".zeroclaw/config.toml");
    let r = recipe("zeroclaw").unwrap();
    apply(&r, &params(), &home.env(), &home.state()).unwrap();
    let cfg = home.path(".zeroclaw/config.toml");
    let edited = fs::read_to_string(&cfg)
        .unwrap()
        .replace("port = 42617", "port = 5000");
    fs::write(&cfg, &edited).unwrap();

    let report = restore(&r, &home.state()).unwrap();
    assert!(report.is_complete(), "{report}");
    assert_eq!(
        report.files[0].outcome,
        RestoreOutcome::Merged {
            kept: vec!["gateway.port".into()]
        }
    );
    let original = fs::read_to_string(fixtures().join("zeroclaw/config.v1.toml")).unwrap();
    assert_eq!(
        fs::read_to_string(&cfg).unwrap(),
        original.replace("port = 42617", "port = 5000"),
        "the original file with the user's change, comments and layout kept"
    );
    assert!(!home.state().join("zeroclaw").exists());
}

#[test]
fn a_key_the_user_removed_after_apply_leaves_the_file_to_them() {
    let home = Home::new();
    home.put("zeroclaw/config.v1.toml", ".zeroclaw/config.toml");
    let r = recipe("zeroclaw").unwrap();
    apply(&r, &params(), &home.env(), &home.state()).unwrap();

    let cfg = home.path(".zeroclaw/config.toml");
    let edited = fs::read_to_string(&cfg)
        .unwrap()
        .replace("port = 42617\n", "");
    fs::write(&cfg, &edited).unwrap();

    let report = restore(&r, &home.state()).unwrap();
    assert!(!report.is_complete());
    assert_eq!(
        fs::read_to_string(&cfg).unwrap(),
        edited,
        "user's file was touched"
    );
    let RestoreOutcome::Conflict { keys, backup } = &report.files[0].outcome else {
        panic!("{report}");
    };
    let backup = backup.clone().unwrap();
    assert_eq!(
        fs::read(&backup).unwrap(),
        fs::read(fixtures().join("zeroclaw/config.v1.toml")).unwrap()
    );
    let hints: Vec<_> = keys
        .iter()
        .map(|k| (k.key.as_str(), k.original.clone()))
        .collect();
    assert_eq!(
        hints,
        vec![
            (
                "default_provider",
                OriginalValue::Value("\"openrouter\"".into())
            ),
            (
                "default_model",
                OriginalValue::Value("\"anthropic/claude-sonnet-4-6\"".into())
            ),
            ("api_key", OriginalValue::Secret),
        ]
    );
    assert_eq!(
        report.to_string(),
        format!(
            "ZeroClaw: ~/.zeroclaw/config.toml changed after MetaClaw wrote it, so it was left as it is; \
             revert these keys by hand:\n  default_provider (was \"openrouter\")\n  \
             default_model (was \"anthropic/claude-sonnet-4-6\")\n  api_key (was set to a secret: see the backup)\n  \
             the original file is kept in {}",
            backup.display()
        )
    );

    // The backup survives: restore again still refuses, and re-applying
    // (the next `metaclaw start`) keeps the first original and remembers the
    // outside change, so a later restore still does not bring the port back.
    assert!(!restore(&r, &home.state()).unwrap().is_complete());
    let re = apply(&r, &params(), &home.env(), &home.state()).unwrap();
    assert_eq!(re.files[0].action, WriteAction::Unchanged);
    assert!(re.files[0].changed_outside);
    assert!(
        re.to_string().contains(
            "note: ~/.zeroclaw/config.toml was changed outside MetaClaw after it was wired; \
             unwiring will take MetaClaw's keys out and keep the other changes"
        ),
        "{re}"
    );
    assert_eq!(
        fs::read(re.files[0].backup.as_ref().unwrap()).unwrap(),
        fs::read(fixtures().join("zeroclaw/config.v1.toml")).unwrap()
    );
    let report = restore(&r, &home.state()).unwrap();
    assert!(matches!(
        report.files[0].outcome,
        RestoreOutcome::Conflict { .. }
    ));
    assert_eq!(fs::read_to_string(&cfg).unwrap(), edited);
    assert!(forget(&r, &home.state()).unwrap());
    assert!(!home.state().join("zeroclaw").exists());
    assert!(!forget(&r, &home.state()).unwrap());
}

#[test]
fn key_hints_for_a_created_file_and_for_new_keys() {
    let home = Home::new();
    home.put("zeroclaw/config.v3.toml", ".zeroclaw/config.toml");
    let r = recipe("zeroclaw").unwrap();
    apply(&r, &params(), &home.env(), &home.state()).unwrap();
    let cfg = home.path(".zeroclaw/config.toml");
    // The user deleted a setting of theirs: nothing to merge onto, so the file is theirs.
    fs::write(
        &cfg,
        fs::read_to_string(&cfg)
            .unwrap()
            .replace("locale = \"en\"\n", ""),
    )
    .unwrap();
    let report = restore(&r, &home.state()).unwrap();
    let RestoreOutcome::Conflict { keys, .. } = &report.files[0].outcome else {
        panic!("{report}");
    };
    let hints: Vec<_> = keys
        .iter()
        .map(|k| (k.key.as_str(), k.original.clone()))
        .collect();
    assert_eq!(
        hints,
        vec![
            (
                "providers.models.custom.metaclaw.uri",
                OriginalValue::Absent
            ),
            (
                "providers.models.custom.metaclaw.api_key",
                OriginalValue::Absent
            ),
            (
                "providers.models.custom.metaclaw.model",
                OriginalValue::Absent
            ),
            (
                "providers.models.custom.metaclaw.max_tokens",
                OriginalValue::Absent
            ),
            (
                "agents.default.model_provider",
                OriginalValue::Value("\"openrouter.default\"".into())
            ),
        ]
    );
    assert!(
        report
            .to_string()
            .contains("providers.models.custom.metaclaw.uri (was not there: remove it)")
    );

    // A file MetaClaw created and the user then changed is also left alone.
    let home = Home::new();
    let r = recipe("ironclaw").unwrap();
    apply(&r, &params(), &home.env(), &home.state()).unwrap();
    let env_file = home.path(".ironclaw/.env");
    fs::write(
        &env_file,
        fs::read_to_string(&env_file).unwrap() + "GATEWAY_PORT=1\n",
    )
    .unwrap();
    let report = restore(&r, &home.state()).unwrap();
    assert!(env_file.exists());
    assert!(
        report.to_string().ends_with(
            "LLM_MODEL (was not there: remove it)\n  \
             the file did not exist before MetaClaw; delete it if nothing else is in it"
        ),
        "{report}"
    );
}

#[test]
fn reverted_by_hand_or_deleted_files() {
    let home = Home::new();
    home.put("ironclaw/env", ".ironclaw/.env");
    let r = recipe("ironclaw").unwrap();
    apply(&r, &params(), &home.env(), &home.state()).unwrap();
    // The user put the original back by hand: nothing to do, state cleared.
    home.put("ironclaw/env", ".ironclaw/.env");
    let report = restore(&r, &home.state()).unwrap();
    assert_eq!(report.files[0].outcome, RestoreOutcome::AlreadyOriginal);
    assert!(report.is_complete());
    assert!(!home.state().join("ironclaw").exists());

    // The user deleted the file: it is not recreated; the backup stays.
    apply(&r, &params(), &home.env(), &home.state()).unwrap();
    fs::remove_file(home.path(".ironclaw/.env")).unwrap();
    let report = restore(&r, &home.state()).unwrap();
    assert!(matches!(
        report.files[0].outcome,
        RestoreOutcome::Missing { backup: Some(_) }
    ));
    assert!(!home.path(".ironclaw/.env").exists());
    assert!(
        report
            .to_string()
            .contains("was deleted after MetaClaw wrote it; left it deleted")
    );
}

#[test]
fn copaw_owned_provider_file_is_removed_even_after_copaw_rewrote_it() {
    let home = Home::new();
    home.put(
        "copaw/active_model.json",
        ".qwenpaw.secret/providers/active_model.json",
    );
    let r = recipe("copaw").unwrap();
    apply(&r, &params(), &home.env(), &home.state()).unwrap();
    // CoPaw re-encrypts a plaintext api_key in place on load.
    let provider = home.path(".qwenpaw.secret/providers/custom/metaclaw.json");
    let text = fs::read_to_string(&provider)
        .unwrap()
        .replace("metaclaw-test-key", "ENC:v1:abcdef");
    fs::write(&provider, text).unwrap();
    // ...and the user switched models in the UI.
    let active = home.path(".qwenpaw.secret/providers/active_model.json");
    fs::write(
        &active,
        "{\n  \"provider_id\": \"dashscope\",\n  \"model\": \"qwen-plus\"\n}",
    )
    .unwrap();

    let report = restore(&r, &home.state()).unwrap();
    assert_eq!(report.files[0].outcome, RestoreOutcome::Deleted);
    assert!(!provider.exists());
    // The model the user picked since is theirs: kept, not reverted.
    assert_eq!(
        report.files[1].outcome,
        RestoreOutcome::Merged {
            kept: vec!["provider_id".into(), "model".into()]
        }
    );
    let now: serde_json::Value = serde_json::from_slice(&fs::read(&active).unwrap()).unwrap();
    assert_eq!(now["provider_id"], "dashscope");
    assert_eq!(now["model"], "qwen-plus");
    assert!(!home.state().join("copaw").exists());
}

#[test]
fn changed_config_location_is_refused_until_unwired() {
    let home = Home::new();
    let r = recipe("hermes").unwrap();
    apply(&r, &params(), &home.env(), &home.state()).unwrap();
    let env = home
        .env()
        .with_var("HERMES_HOME", home.path("other").to_string_lossy());
    let err = apply(&r, &params(), &env, &home.state()).unwrap_err();
    assert!(matches!(err, ClawError::PathChanged { .. }), "{err}");
    assert!(!home.path("other").exists());
    restore(&r, &home.state()).unwrap();
    apply(&r, &params(), &env, &home.state()).unwrap();
    assert!(home.path("other/config.yaml").exists());
}

#[test]
fn unparsable_config_is_an_error_and_nothing_is_written() {
    let home = Home::new();
    fs::create_dir_all(home.path(".picoclaw")).unwrap();
    fs::write(home.path(".picoclaw/config.json"), "{ not json").unwrap();
    let r = recipe("picoclaw").unwrap();
    let err = apply(&r, &params(), &home.env(), &home.state()).unwrap_err();
    assert!(
        matches!(err, ClawError::Parse { format: "JSON", .. }),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(home.path(".picoclaw/config.json")).unwrap(),
        "{ not json"
    );
    assert!(!home.state().join("picoclaw").exists());

    // A scalar where the recipe needs a mapping is reported with its key.
    fs::create_dir_all(home.path(".hermes")).unwrap();
    fs::write(home.path(".hermes/config.yaml"), "model: gpt-4o\n").unwrap();
    let err = apply(
        &recipe("hermes").unwrap(),
        &params(),
        &home.env(),
        &home.state(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot set model.provider in {}: model is a string, not a mapping",
            home.path(".hermes/config.yaml").display()
        )
    );
}

#[test]
fn every_builtin_recipe_is_listed_and_documented() {
    let names: Vec<_> = recipes().iter().map(|r| r.name().to_string()).collect();
    assert_eq!(
        names,
        [
            "copaw",
            "ironclaw",
            "zeroclaw",
            "picoclaw",
            "nanoclaw",
            "hermes",
            "claude-code",
            "codex",
            "qwen-code"
        ]
    );
    for r in recipes() {
        assert!(!r.sources().is_empty(), "{} has no sources", r.name());
        assert!(
            !r.restart_spec().argv.is_empty() || r.restart_spec().hint.is_some(),
            "{} says nothing about restarting",
            r.name()
        );
    }
    assert!(recipe("openclaw").is_none());
    assert_eq!(
        recipe("nanoclaw").unwrap().protocol(),
        metaclaw_claws::Protocol::Anthropic
    );
}

#[test]
fn claude_code_golden_keeps_the_users_settings() {
    let home = Home::new();
    home.put("claude-code/settings.json", ".claude/settings.json");
    golden_cycle(
        &home,
        &home.env(),
        "claude-code",
        &[(
            ".claude/settings.json",
            "claude-code/settings.json.expected",
        )],
    );
    // CLAUDE_CONFIG_DIR relocates the file.
    let elsewhere = Home::new();
    let env = home
        .env()
        .with_var("CLAUDE_CONFIG_DIR", elsewhere.path("cc").to_string_lossy());
    let r = recipe("claude-code").unwrap();
    let wired = apply(&r, &params(), &env, &home.state()).unwrap();
    assert_eq!(wired.files[0].path, elsewhere.path("cc/settings.json"));
    restore(&r, &home.state()).unwrap();
    assert!(!elsewhere.path("cc").exists(), "created folder left behind");
}

#[test]
fn codex_golden_keeps_comments_profiles_and_other_providers() {
    let home = Home::new();
    home.put("codex/config.toml", ".codex/config.toml");
    golden_cycle(
        &home,
        &home.env(),
        "codex",
        &[(".codex/config.toml", "codex/config.toml.expected")],
    );
}

#[test]
fn qwen_code_golden_adds_a_provider_beside_the_users() {
    let home = Home::new();
    home.put("qwen-code/settings.json", ".qwen/settings.json");
    golden_cycle(
        &home,
        &home.env(),
        "qwen-code",
        &[(".qwen/settings.json", "qwen-code/settings.json.expected")],
    );
}

#[test]
fn new_agents_without_a_config_get_one_and_lose_it_on_restore() {
    for (claw, rel) in [
        ("claude-code", ".claude/settings.json"),
        ("codex", ".codex/config.toml"),
        ("qwen-code", ".qwen/settings.json"),
    ] {
        let home = Home::new();
        let r = recipe(claw).unwrap();
        assert_eq!(metaclaw_claws::installed(&r, &home.env()), None, "{claw}");
        apply(&r, &params(), &home.env(), &home.state()).unwrap();
        assert!(home.read(rel).is_some(), "{claw}");
        let restored = restore(&r, &home.state()).unwrap();
        assert!(restored.is_complete(), "{restored}");
        assert!(home.read(rel).is_none(), "{claw}: {rel} left behind");
        let dir = home.path(rel);
        assert!(
            !dir.parent().unwrap().exists(),
            "{claw}: folder left behind"
        );
    }
}

#[test]
fn switching_to_passthrough_rewires_from_the_original() {
    let home = Home::new();
    home.put("claude-code/settings.json", ".claude/settings.json");
    let original = home.read(".claude/settings.json").unwrap();
    let r = recipe("claude-code").unwrap();
    apply(&r, &params(), &home.env(), &home.state()).unwrap();
    let with_key: serde_json::Value =
        serde_json::from_slice(&home.read(".claude/settings.json").unwrap()).unwrap();
    assert_eq!(with_key["env"]["ANTHROPIC_AUTH_TOKEN"], "metaclaw-test-key");

    let passthrough = WireParams {
        passthrough: true,
        ..params()
    };
    let report = apply(&r, &passthrough, &home.env(), &home.state()).unwrap();
    assert!(!report.files[0].changed_outside);
    let wired: serde_json::Value =
        serde_json::from_slice(&home.read(".claude/settings.json").unwrap()).unwrap();
    // The agent's own sign-in must reach the proxy: no token of MetaClaw's replaces it,
    // and MetaClaw's key travels in its own header.
    assert!(
        wired["env"].get("ANTHROPIC_AUTH_TOKEN").is_none(),
        "{wired}"
    );
    assert!(wired["env"].get("CLAUDE_CODE_ATTRIBUTION_HEADER").is_none());
    assert_eq!(
        wired["env"]["ANTHROPIC_CUSTOM_HEADERS"],
        "x-metaclaw-key: metaclaw-test-key"
    );
    assert_eq!(wired["env"]["ANTHROPIC_BASE_URL"], "http://127.0.0.1:30120");
    assert_eq!(wired["env"]["DISABLE_TELEMETRY"], "1");
    assert!(restore(&r, &home.state()).unwrap().is_complete());
    assert_eq!(home.read(".claude/settings.json").unwrap(), original);

    // Codex under pass-through asks for the user's ChatGPT sign-in instead of a token.
    let home = Home::new();
    home.put("codex/config.toml", ".codex/config.toml");
    let original = home.read(".codex/config.toml").unwrap();
    let r = recipe("codex").unwrap();
    apply(&r, &passthrough, &home.env(), &home.state()).unwrap();
    let text = String::from_utf8(home.read(".codex/config.toml").unwrap()).unwrap();
    assert!(text.contains("requires_openai_auth = true"), "{text}");
    assert!(!text.contains("experimental_bearer_token"), "{text}");
    assert!(text.contains("model = \"gpt-5.2-codex\""), "{text}");
    assert!(restore(&r, &home.state()).unwrap().is_complete());
    assert_eq!(home.read(".codex/config.toml").unwrap(), original);
}

/// What Qwen Code 0.15 does on its first start to a settings file not yet in its own
/// layout: copies the bytes to `settings.json.orig`, then writes 2-space JSON with a
/// `$version` stamp and no final newline.
fn qwen_first_start(home: &Home) -> PathBuf {
    let path = home.path(".qwen/settings.json");
    let bytes = fs::read(&path).unwrap();
    fs::write(home.path(".qwen/settings.json.orig"), &bytes).unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    v["$version"] = serde_json::json!(4);
    fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    path
}

#[test]
fn qwen_code_rewrite_on_first_start_still_restores_byte_for_byte() {
    let home = Home::new();
    let original = "{\n    \"ui\": { \"theme\": \"GitHub\" }\n}\n";
    fs::create_dir_all(home.path(".qwen")).unwrap();
    fs::write(home.path(".qwen/settings.json"), original).unwrap();
    let r = recipe("qwen-code").unwrap();
    apply(&r, &params(), &home.env(), &home.state()).unwrap();
    let path = qwen_first_start(&home);
    // The next `metaclaw start` re-wires over Qwen's layout.
    let re = apply(&r, &params(), &home.env(), &home.state()).unwrap();
    assert!(re.files[0].changed_outside);

    let report = restore(&r, &home.state()).unwrap();
    assert_eq!(
        report.files[0].outcome,
        RestoreOutcome::Restored,
        "{report}"
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), original);
    assert!(
        !home.path(".qwen/settings.json.orig").exists(),
        "the copy holding the proxy key is removed"
    );
}

#[test]
fn qwen_code_settings_changed_after_the_rewrite_are_kept() {
    let home = Home::new();
    let original = "{\n    \"ui\": { \"theme\": \"GitHub\" }\n}\n";
    fs::create_dir_all(home.path(".qwen")).unwrap();
    fs::write(home.path(".qwen/settings.json"), original).unwrap();
    let r = recipe("qwen-code").unwrap();
    apply(&r, &params(), &home.env(), &home.state()).unwrap();
    let path = qwen_first_start(&home);
    // The user's own copy of the file, with something else in it, is theirs.
    fs::write(home.path(".qwen/settings.json.orig"), "{\"mine\": 1}").unwrap();
    let text = fs::read_to_string(&path)
        .unwrap()
        .replace("\"GitHub\"", "\"Dracula\"");
    fs::write(&path, text).unwrap();

    let report = restore(&r, &home.state()).unwrap();
    let RestoreOutcome::Merged { kept } = &report.files[0].outcome else {
        panic!("{report}");
    };
    assert_eq!(kept, &["ui.theme", "$version"]);
    let now: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    assert_eq!(
        now,
        serde_json::json!({"ui": {"theme": "Dracula"}, "$version": 4})
    );
    assert!(
        report
            .to_string()
            .contains("removed MetaClaw's settings from ~/.qwen/settings.json and kept the changes made since it was wired (ui.theme, $version)"),
        "{report}"
    );
    assert!(home.path(".qwen/settings.json.orig").exists());
}

/// The restart hint is shown after wiring and after unwiring alike, so it must not say which
/// way the agent now points ("new sessions use MetaClaw" after an uninstall).
#[test]
fn restart_hints_read_true_after_wiring_and_after_unwiring() {
    for r in metaclaw_claws::recipes() {
        if let Some(hint) = &r.restart_spec().hint {
            assert!(
                !hint.to_lowercase().contains("use metaclaw"),
                "{}: {hint}",
                r.name()
            );
        }
    }
}
