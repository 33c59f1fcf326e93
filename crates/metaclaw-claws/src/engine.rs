//! apply / restore.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::doc::Doc;
use crate::error::ClawError;
use crate::fsutil::{
    missing_dirs, read_optional, remove_file_if_present, sha256_hex, write_atomic,
};
use crate::keypath::KeyPath;
use crate::merge::{Merge, Sides, merge};
use crate::params::{PathEnv, WireParams};
use crate::recipe::{FileSpec, Format, Recipe, Variant, When};
use crate::report::{
    FileRestored, FileWired, KeyHint, OriginalValue, RestoreOutcome, RestoreReport, WireReport,
    WriteAction,
};
use crate::state::{ClawState, FileState, Original};

/// Point the claw at the proxy: edit each of the recipe's files, keeping
/// the first original of each under `<state_dir>/<claw>/`. Safe to call on
/// every `metaclaw start`: a second call writes nothing new and keeps the
/// first backup.
pub fn apply(
    recipe: &Recipe,
    params: &WireParams,
    env: &PathEnv,
    state_dir: &Path,
) -> Result<WireReport, ClawError> {
    // Resolve every path before touching anything.
    let targets = recipe
        .files
        .iter()
        .map(|spec| Ok((spec, spec.resolve(&recipe.name, env)?)))
        .collect::<Result<Vec<_>, ClawError>>()?;

    let mut state = ClawState::load(state_dir, &recipe.name)?
        .unwrap_or_else(|| ClawState::new(state_dir, &recipe.name));
    for (spec, path) in &targets {
        if let Some(recorded) = state.file(&spec.id)
            && recorded.path != *path
        {
            return Err(ClawError::PathChanged {
                claw: recipe.display_name.clone(),
                recorded: recorded.path.clone(),
                resolved: path.clone(),
            });
        }
    }

    let mut report = WireReport {
        claw: recipe.name.clone(),
        display_name: recipe.display_name.clone(),
        files: Vec::new(),
        notes: recipe.notes.clone(),
    };
    for (spec, path) in targets {
        report
            .files
            .push(apply_file(recipe, spec, &path, params, env, &mut state)?);
    }
    Ok(report)
}

fn apply_file(
    recipe: &Recipe,
    spec: &FileSpec,
    path: &Path,
    params: &WireParams,
    env: &PathEnv,
    state: &mut ClawState,
) -> Result<FileWired, ClawError> {
    let current = read_optional(path)?;
    let current_hash = current.as_deref().map(sha256_hex);
    let (mut doc, mut variant) = parse_and_pick(recipe, spec, path, current.as_deref())?;
    let mut keys = applied_keys(variant, params);
    // This write starts from the original file (or from exactly what MetaClaw wrote over
    // it), so it is what a later change is compared with when unwiring.
    let mut over_original = match state.file(&spec.id) {
        None => true,
        Some(entry) => {
            !entry.changed_outside
                && (current_hash == entry.original_sha256
                    || (current_hash.is_some() && current_hash == entry.written_sha256))
        }
    };
    // The keys to set changed (e.g. pass-through switched on) and the file still holds what
    // MetaClaw wrote: start again from the original, so no key of the old set stays behind.
    if let Some(entry) = state.file(&spec.id)
        && entry.keys != keys
        && !entry.changed_outside
        && current_hash.is_some()
        && current_hash == entry.written_sha256
    {
        let original = match entry.original {
            Original::Saved => Some(state.read_original(&spec.id)?),
            Original::Absent => None,
        };
        (doc, variant) = parse_and_pick(recipe, spec, path, original.as_deref())?;
        keys = applied_keys(variant, params);
        over_original = true;
    }
    for edit in variant
        .edits
        .iter()
        .filter(|e| e.applies(params.passthrough))
    {
        if edit.if_absent && doc.get(&edit.key).is_some() {
            continue;
        }
        doc.set(&edit.key, &params.expand(&edit.value))
            .map_err(|message| ClawError::Edit {
                path: path.to_path_buf(),
                key: edit.key.to_string(),
                message,
            })?;
    }
    let rendered = doc.render().map_err(|message| ClawError::Render {
        path: path.to_path_buf(),
        format: spec.format.name(),
        message,
    })?;
    let new_bytes = rendered.into_bytes();

    // Record the original once, before the first write. On later applies,
    // notice when the file no longer holds what MetaClaw last wrote.
    if let Some(entry) = state.file_mut(&spec.id) {
        let ours = match &entry.written_sha256 {
            Some(w) => current_hash.as_ref() == Some(w),
            // An earlier apply stopped before writing: only the original is ours.
            None => current_hash == entry.original_sha256,
        };
        if !ours {
            entry.changed_outside = true;
        }
    } else {
        let created_dirs = path.parent().map(missing_dirs).unwrap_or_default();
        let (original, original_sha256) = match &current {
            Some(bytes) => {
                state.save_original(&spec.id, bytes)?;
                (Original::Saved, Some(sha256_hex(bytes)))
            }
            None => (Original::Absent, None),
        };
        state.manifest.files.push(FileState {
            id: spec.id.clone(),
            path: path.to_path_buf(),
            display_path: env.display(path),
            original,
            original_sha256,
            written_sha256: None,
            keys: Vec::new(),
            changed_outside: false,
            created_dirs,
        });
        state.save()?;
    }

    let action = match &current {
        Some(bytes) if *bytes == new_bytes => WriteAction::Unchanged,
        Some(_) => WriteAction::Updated,
        None => WriteAction::Created,
    };
    if action != WriteAction::Unchanged {
        write_atomic(path, &new_bytes, true)?;
    }
    if over_original {
        state.save_wired(&spec.id, &new_bytes)?;
    }
    let original_path = state.original_path(&spec.id);
    let state_dir = state.dir.clone();
    let entry = state.file_mut(&spec.id).ok_or_else(|| ClawError::State {
        path: state_dir,
        message: format!("lost the entry for `{}`", spec.id),
    })?;
    entry.written_sha256 = Some(sha256_hex(&new_bytes));
    entry.keys = keys.clone();
    let backup = (entry.original == Original::Saved).then_some(original_path);
    let display_path = entry.display_path.clone();
    let changed_outside = entry.changed_outside;
    state.save()?;

    Ok(FileWired {
        id: spec.id.clone(),
        path: path.to_path_buf(),
        display_path,
        action,
        keys,
        backup,
        variant: (spec.variants.len() > 1).then(|| variant_label(variant)),
        comments_dropped: !spec.format.preserves_comments(),
        changed_outside,
    })
}

fn parse_and_pick<'r>(
    recipe: &Recipe,
    spec: &'r FileSpec,
    path: &Path,
    bytes: Option<&[u8]>,
) -> Result<(Doc, &'r Variant), ClawError> {
    let text = match bytes {
        Some(bytes) => std::str::from_utf8(bytes).map_err(|_| ClawError::Parse {
            path: path.to_path_buf(),
            format: spec.format.name(),
            message: "not UTF-8 text".into(),
        })?,
        None => "",
    };
    let doc = Doc::parse(spec.format, text).map_err(|message| ClawError::Parse {
        path: path.to_path_buf(),
        format: spec.format.name(),
        message,
    })?;
    let variant = spec
        .variants
        .iter()
        .find(|v| v.when.as_ref().is_none_or(|w| when_holds(w, &doc)))
        .ok_or_else(|| {
            ClawError::recipe(
                &recipe.name,
                format!("no layout of file `{}` fits {}", spec.id, path.display()),
            )
        })?;
    Ok((doc, variant))
}

fn applied_keys(variant: &Variant, params: &WireParams) -> Vec<String> {
    variant
        .edits
        .iter()
        .filter(|e| e.applies(params.passthrough))
        .map(|e| e.key.to_string())
        .collect()
}

fn variant_label(v: &Variant) -> String {
    v.name.clone()
}

fn when_holds(w: &When, doc: &Doc) -> bool {
    let found = doc.get(&w.key);
    if let Some(want) = w.exists
        && found.is_some() != want
    {
        return false;
    }
    if let Some(min) = w.at_least {
        let n = match &found {
            Some(Value::Number(n)) => n.as_f64(),
            Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        return n.is_some_and(|n| n >= min as f64);
    }
    true
}

/// Undo [`apply`]: put each file's original bytes back (or delete a file
/// MetaClaw created) when the file still holds exactly what MetaClaw wrote.
/// A file changed since is left alone and listed with the keys to revert
/// by hand; its backup is kept. State for restored files is cleared.
pub fn restore(recipe: &Recipe, state_dir: &Path) -> Result<RestoreReport, ClawError> {
    let mut report = RestoreReport {
        claw: recipe.name.clone(),
        display_name: recipe.display_name.clone(),
        was_wired: false,
        files: Vec::new(),
    };
    let Some(mut state) = ClawState::load(state_dir, &recipe.name)? else {
        return Ok(report);
    };
    report.was_wired = true;
    let entries = state.manifest.files.clone();
    for entry in entries {
        let spec = recipe.files.iter().find(|f| f.id == entry.id);
        let outcome = restore_file(&state, spec, &entry)?;
        let done = !matches!(
            outcome,
            RestoreOutcome::Conflict { .. } | RestoreOutcome::Missing { .. }
        );
        if done {
            state.drop_file(&entry.id)?;
        }
        report.files.push(FileRestored {
            id: entry.id.clone(),
            path: entry.path.clone(),
            display_path: entry.display_path.clone(),
            outcome,
        });
    }
    state.save_or_clear()?;
    Ok(report)
}

/// Drop the backup state for `recipe` without touching its files (after the
/// user reverted a conflicting file by hand).
pub fn forget(recipe: &Recipe, state_dir: &Path) -> Result<bool, ClawError> {
    let Some(mut state) = ClawState::load(state_dir, &recipe.name)? else {
        return Ok(false);
    };
    for entry in state.manifest.files.clone() {
        state.drop_file(&entry.id)?;
    }
    state.save_or_clear()?;
    Ok(true)
}

fn restore_file(
    state: &ClawState,
    spec: Option<&FileSpec>,
    entry: &FileState,
) -> Result<RestoreOutcome, ClawError> {
    let current = read_optional(&entry.path)?;
    let original = match entry.original {
        Original::Saved => Some(state.read_original(&entry.id)?),
        Original::Absent => None,
    };
    let backup = original.as_ref().map(|_| state.original_path(&entry.id));
    let current_hash = current.as_deref().map(sha256_hex);
    let untouched =
        !entry.changed_outside && current_hash.is_some() && current_hash == entry.written_sha256;

    if current == original {
        return Ok(RestoreOutcome::AlreadyOriginal);
    }
    if untouched {
        if let (Some(spec), Some(wired)) = (spec, state.read_wired(&entry.id)?) {
            remove_agent_copies(spec, entry, &wired)?;
        }
        return put_back(entry, original.as_deref());
    }
    if original.is_none() && spec.is_some_and(|s| s.owned) {
        // MetaClaw's own file; the claw may have rewritten it (e.g. to
        // encrypt the key), which does not make it the user's.
        delete_created(entry)?;
        return Ok(RestoreOutcome::Deleted);
    }
    if let (Some(spec), Some(now)) = (spec, current.as_deref())
        && let Some(wired) = state.read_wired(&entry.id)?
    {
        let ours = entry
            .keys
            .iter()
            .filter_map(|k| KeyPath::parse(k).ok())
            .collect::<Vec<_>>();
        let sides = Sides {
            format: spec.format,
            original: original.as_deref(),
            wired: &wired,
            current: now,
        };
        match merge(&sides, &ours, &spec.agent_keys) {
            Merge::Original => {
                remove_agent_copies(spec, entry, &wired)?;
                return put_back(entry, original.as_deref());
            }
            Merge::Merged { bytes, kept } => {
                write_atomic(&entry.path, &bytes, true)?;
                remove_agent_copies(spec, entry, &wired)?;
                return Ok(RestoreOutcome::Merged { kept });
            }
            Merge::Unmergeable => {}
        }
    }
    if current.is_none() {
        return Ok(RestoreOutcome::Missing { backup });
    }
    Ok(RestoreOutcome::Conflict {
        keys: key_hints(spec.map(|s| s.format), entry, original.as_deref()),
        backup,
    })
}

/// Copies the claw made of the file while it held MetaClaw's wiring (they carry the proxy
/// key); a copy with anything else in it is the user's and stays.
fn remove_agent_copies(spec: &FileSpec, entry: &FileState, wired: &[u8]) -> Result<(), ClawError> {
    let wired_hash = sha256_hex(wired);
    for suffix in &spec.agent_copies {
        let mut name = entry.path.clone().into_os_string();
        name.push(suffix);
        let copy = PathBuf::from(name);
        if let Some(bytes) = read_optional(&copy)? {
            let hash = sha256_hex(&bytes);
            if hash == wired_hash || Some(&hash) == entry.written_sha256.as_ref() {
                remove_file_if_present(&copy)?;
            }
        }
    }
    Ok(())
}

/// Puts the file back as it was before MetaClaw wired it: its original bytes, or no file
/// when MetaClaw created it.
fn put_back(entry: &FileState, original: Option<&[u8]>) -> Result<RestoreOutcome, ClawError> {
    Ok(match original {
        Some(bytes) => {
            write_atomic(&entry.path, bytes, true)?;
            RestoreOutcome::Restored
        }
        None => {
            delete_created(entry)?;
            RestoreOutcome::Deleted
        }
    })
}

fn delete_created(entry: &FileState) -> Result<(), ClawError> {
    remove_file_if_present(&entry.path)?;
    // Remove directories MetaClaw made, innermost first, if now empty.
    for dir in entry.created_dirs.iter().rev() {
        if std::fs::remove_dir(dir).is_err() {
            break;
        }
    }
    Ok(())
}

fn key_hints(format: Option<Format>, entry: &FileState, original: Option<&[u8]>) -> Vec<KeyHint> {
    let doc = match (format, original) {
        (Some(format), Some(bytes)) => std::str::from_utf8(bytes)
            .ok()
            .and_then(|t| Doc::parse(format, t).ok()),
        _ => None,
    };
    entry
        .keys
        .iter()
        .map(|key| {
            let original = match (original, &doc, KeyPath::parse(key)) {
                (None, _, _) => OriginalValue::Absent,
                (Some(_), Some(doc), Ok(path)) => match doc.get(&path) {
                    None => OriginalValue::Absent,
                    Some(_) if is_secret_name(path.leaf_name()) => OriginalValue::Secret,
                    Some(v) => OriginalValue::Value(compact(&v)),
                },
                _ => OriginalValue::Unknown,
            };
            KeyHint {
                key: key.clone(),
                original,
            }
        })
        .collect()
}

fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["key", "token", "secret", "password"]
        .iter()
        .any(|s| n.contains(s))
}

fn compact(v: &Value) -> String {
    let text = serde_json::to_string(v).unwrap_or_default();
    if text.chars().count() > 120 {
        let cut: String = text.chars().take(117).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// The file each recipe file resolves to (for `metaclaw doctor`-style output).
pub fn config_paths(recipe: &Recipe, env: &PathEnv) -> Result<Vec<PathBuf>, ClawError> {
    Ok(recipe
        .resolve_paths(env)?
        .into_iter()
        .map(|(_, p)| p)
        .collect())
}
