//! Backup state under `<state_dir>/<claw>/`: `manifest.json`, one `<file id>.original` per
//! file that existed before MetaClaw touched it, and `<file id>.wired`: what MetaClaw wrote
//! over the original (what a later change is compared with when unwiring).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::ClawError;
use crate::fsutil::{read_optional, write_atomic};

const MANIFEST: &str = "manifest.json";
const MANIFEST_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Original {
    /// The file did not exist.
    Absent,
    /// Its bytes are in `<id>.original`.
    Saved,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct FileState {
    pub(crate) id: String,
    pub(crate) path: PathBuf,
    pub(crate) display_path: String,
    pub(crate) original: Original,
    #[serde(default)]
    pub(crate) original_sha256: Option<String>,
    /// Hash of the bytes MetaClaw last wrote; `None` until the write lands.
    #[serde(default)]
    pub(crate) written_sha256: Option<String>,
    #[serde(default)]
    pub(crate) keys: Vec<String>,
    /// Someone else changed the file after a MetaClaw write (seen by a later
    /// apply). Restoring the original would then lose their change, so
    /// restore leaves the file to the user.
    #[serde(default)]
    pub(crate) changed_outside: bool,
    /// Directories MetaClaw created for the file, outermost first.
    #[serde(default)]
    pub(crate) created_dirs: Vec<PathBuf>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub(crate) version: u32,
    pub(crate) claw: String,
    pub(crate) files: Vec<FileState>,
}

pub(crate) struct ClawState {
    pub(crate) dir: PathBuf,
    pub(crate) manifest: Manifest,
}

impl ClawState {
    pub(crate) fn dir_for(state_dir: &Path, claw: &str) -> PathBuf {
        state_dir.join(claw)
    }

    /// The saved state, or `None` when MetaClaw has not wired this claw.
    pub(crate) fn load(state_dir: &Path, claw: &str) -> Result<Option<ClawState>, ClawError> {
        let dir = Self::dir_for(state_dir, claw);
        let path = dir.join(MANIFEST);
        let Some(bytes) = read_optional(&path)? else {
            return Ok(None);
        };
        let manifest: Manifest = serde_json::from_slice(&bytes).map_err(|e| ClawError::State {
            path: path.clone(),
            message: e.to_string(),
        })?;
        if manifest.version != MANIFEST_VERSION || manifest.claw != claw {
            return Err(ClawError::State {
                path,
                message: format!(
                    "expected version {MANIFEST_VERSION} for {claw}, found version {} for {}",
                    manifest.version, manifest.claw
                ),
            });
        }
        Ok(Some(ClawState { dir, manifest }))
    }

    pub(crate) fn new(state_dir: &Path, claw: &str) -> ClawState {
        ClawState {
            dir: Self::dir_for(state_dir, claw),
            manifest: Manifest {
                version: MANIFEST_VERSION,
                claw: claw.to_string(),
                files: Vec::new(),
            },
        }
    }

    pub(crate) fn original_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.original"))
    }

    pub(crate) fn file(&self, id: &str) -> Option<&FileState> {
        self.manifest.files.iter().find(|f| f.id == id)
    }

    pub(crate) fn file_mut(&mut self, id: &str) -> Option<&mut FileState> {
        self.manifest.files.iter_mut().find(|f| f.id == id)
    }

    pub(crate) fn save_original(&self, id: &str, bytes: &[u8]) -> Result<PathBuf, ClawError> {
        let path = self.original_path(id);
        write_atomic(&path, bytes, true)?;
        Ok(path)
    }

    pub(crate) fn wired_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.wired"))
    }

    pub(crate) fn save_wired(&self, id: &str, bytes: &[u8]) -> Result<(), ClawError> {
        write_atomic(&self.wired_path(id), bytes, true)
    }

    /// `None` for state written before MetaClaw kept this copy.
    pub(crate) fn read_wired(&self, id: &str) -> Result<Option<Vec<u8>>, ClawError> {
        read_optional(&self.wired_path(id))
    }

    pub(crate) fn read_original(&self, id: &str) -> Result<Vec<u8>, ClawError> {
        let path = self.original_path(id);
        read_optional(&path)?.ok_or_else(|| ClawError::State {
            path,
            message: "the backup of the original file is missing".into(),
        })
    }

    pub(crate) fn save(&self) -> Result<(), ClawError> {
        let mut text =
            serde_json::to_string_pretty(&self.manifest).map_err(|e| ClawError::State {
                path: self.dir.join(MANIFEST),
                message: e.to_string(),
            })?;
        text.push('\n');
        write_atomic(&self.dir.join(MANIFEST), text.as_bytes(), true)
    }

    /// Forget one file: drop its backup and manifest entry.
    pub(crate) fn drop_file(&mut self, id: &str) -> Result<(), ClawError> {
        crate::fsutil::remove_file_if_present(&self.original_path(id))?;
        crate::fsutil::remove_file_if_present(&self.wired_path(id))?;
        self.manifest.files.retain(|f| f.id != id);
        Ok(())
    }

    /// Save what is left, or remove the claw's state directory when nothing is.
    pub(crate) fn save_or_clear(&self) -> Result<(), ClawError> {
        if !self.manifest.files.is_empty() {
            return self.save();
        }
        crate::fsutil::remove_file_if_present(&self.dir.join(MANIFEST))?;
        match std::fs::remove_dir(&self.dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            // Something else lives there (not ours): leave the directory.
            Err(_) => Ok(()),
        }
    }
}
