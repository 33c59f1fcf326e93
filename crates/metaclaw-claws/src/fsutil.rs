//! Small file helpers: optional reads, atomic writes, hashing.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::ClawError;

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The file's bytes, or `None` when it does not exist.
pub(crate) fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, ClawError> {
    match fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ClawError::io("cannot read", path, e)),
    }
}

/// Where writes to `path` should land: the target of a symlink (so a
/// dotfile manager's link stays a link), else `path` itself.
fn write_target(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// Missing ancestors of `dir`, outermost first.
pub(crate) fn missing_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut missing = Vec::new();
    let mut cur = Some(dir);
    while let Some(d) = cur {
        if d.as_os_str().is_empty() || d.exists() {
            break;
        }
        missing.push(d.to_path_buf());
        cur = d.parent();
    }
    missing.reverse();
    missing
}

/// Replace `path` with `bytes` via a temporary file and a rename. An
/// existing file keeps its permissions; a new one is private (0600) when
/// `private_if_new`.
pub(crate) fn write_atomic(
    path: &Path,
    bytes: &[u8],
    private_if_new: bool,
) -> Result<(), ClawError> {
    let target = write_target(path);
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| ClawError::io("cannot create directory", dir, e))?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config".into());
    let tmp = dir.join(format!(".{name}.metaclaw-{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = fs::File::create(&tmp).map_err(|e| ClawError::io("cannot create", &tmp, e))?;
        f.write_all(bytes)
            .map_err(|e| ClawError::io("cannot write", &tmp, e))?;
        match fs::metadata(&target) {
            Ok(meta) => fs::set_permissions(&tmp, meta.permissions())
                .map_err(|e| ClawError::io("cannot set permissions on", &tmp, e))?,
            Err(_) if private_if_new => make_private(&tmp)?,
            Err(_) => {}
        }
        f.sync_all()
            .map_err(|e| ClawError::io("cannot flush", &tmp, e))?;
        fs::rename(&tmp, &target).map_err(|e| ClawError::io("cannot replace", &target, e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(unix)]
fn make_private(path: &Path) -> Result<(), ClawError> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
        .map_err(|e| ClawError::io("cannot set permissions on", path, e))
}

#[cfg(not(unix))]
fn make_private(_path: &Path) -> Result<(), ClawError> {
    Ok(())
}

pub(crate) fn remove_file_if_present(path: &Path) -> Result<(), ClawError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(ClawError::io("cannot delete", path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_keeps_permissions_and_follows_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.toml");
        fs::write(&real, "a").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
            let link = dir.path().join("link.toml");
            std::os::unix::fs::symlink(&real, &link).unwrap();
            write_atomic(&link, b"b", true).unwrap();
            assert!(
                fs::symlink_metadata(&link)
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
            assert_eq!(fs::read(&real).unwrap(), b"b");
            assert_eq!(
                fs::metadata(&real).unwrap().permissions().mode() & 0o777,
                0o640
            );
            let fresh = dir.path().join("new/deeper/f.env");
            write_atomic(&fresh, b"x", true).unwrap();
            assert_eq!(
                fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
        assert_eq!(
            missing_dirs(&dir.path().join("p/q")),
            vec![dir.path().join("p"), dir.path().join("p/q")]
        );
    }
}
