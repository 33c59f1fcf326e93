//! What `apply`, `restore` and `restart` did, as data and as the exact
//! lines shown to the user.

use std::fmt;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteAction {
    /// The file did not exist; MetaClaw created it.
    Created,
    /// The file was rewritten.
    Updated,
    /// The file already said exactly this; nothing was written.
    Unchanged,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileWired {
    pub id: String,
    pub path: PathBuf,
    /// The path with the home directory shown as `~`.
    pub display_path: String,
    pub action: WriteAction,
    /// The keys set, in recipe order.
    pub keys: Vec<String>,
    /// Where the original bytes are kept; `None` when there was no file.
    pub backup: Option<PathBuf>,
    /// The layout chosen when a recipe knows several (e.g. config versions).
    pub variant: Option<String>,
    /// The format cannot keep comments (YAML): they were dropped from the
    /// live file (the backup still has them).
    pub comments_dropped: bool,
    /// The file was changed by someone else after MetaClaw first wrote it;
    /// unwiring will leave it for the user instead of restoring the backup.
    pub changed_outside: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireReport {
    pub claw: String,
    pub display_name: String,
    pub files: Vec<FileWired>,
    /// Recipe caveats worth telling the user.
    pub notes: Vec<String>,
}

impl WireReport {
    /// Whether any file was written.
    pub fn changed(&self) -> bool {
        self.files
            .iter()
            .any(|f| f.action != WriteAction::Unchanged)
    }
}

impl fmt::Display for WireReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        let mut line = |f: &mut fmt::Formatter<'_>, text: String| -> fmt::Result {
            if !first {
                writeln!(f)?;
            }
            first = false;
            f.write_str(&text)
        };
        for file in &self.files {
            let keys = file.keys.join(", ");
            let layout = match &file.variant {
                Some(v) => format!(" [{v}]"),
                None => String::new(),
            };
            let tail = match &file.backup {
                Some(b) => format!(" (backup kept in {})", b.display()),
                None => " (it did not exist; unwiring deletes it)".to_string(),
            };
            let text = match file.action {
                WriteAction::Created => {
                    format!(
                        "{}: created {}{layout}: {keys}{tail}",
                        self.display_name, file.display_path
                    )
                }
                WriteAction::Updated => {
                    format!(
                        "{}: wrote {}{layout}: {keys}{tail}",
                        self.display_name, file.display_path
                    )
                }
                WriteAction::Unchanged => format!(
                    "{}: {} already wired{layout}: {keys}{tail}",
                    self.display_name, file.display_path
                ),
            };
            line(f, text)?;
            if file.comments_dropped && file.action == WriteAction::Updated {
                line(
                    f,
                    format!(
                        "  note: comments and formatting in {} were not kept (YAML is rewritten); \
                         unwiring puts the original back byte for byte",
                        file.display_path
                    ),
                )?;
            }
        }
        for file in self.files.iter().filter(|f| f.changed_outside) {
            line(
                f,
                format!(
                    "  note: {} was changed outside MetaClaw after it was wired; unwiring will \
                     take MetaClaw's keys out and keep the other changes",
                    file.display_path
                ),
            )?;
        }
        for note in &self.notes {
            line(f, format!("  note: {note}"))?;
        }
        Ok(())
    }
}

/// What a key held before MetaClaw set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginalValue {
    /// The key (or the whole file) was not there.
    Absent,
    /// A secret (API key, token): not shown.
    Secret,
    /// The old value, rendered compactly (strings quoted).
    Value(String),
    /// The original could not be read back (e.g. unknown file id).
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyHint {
    pub key: String,
    pub original: OriginalValue,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestoreOutcome {
    /// The original bytes are back.
    Restored,
    /// MetaClaw had created the file; it was deleted.
    Deleted,
    /// The file already held its original contents (or was still absent).
    AlreadyOriginal,
    /// The file was deleted after MetaClaw wrote it; nothing was recreated.
    Missing { backup: Option<PathBuf> },
    /// The file changed after MetaClaw wrote it: MetaClaw's keys were taken out and the
    /// changes made since (these key paths) were kept on top of the original.
    Merged { kept: Vec<String> },
    /// The file changed after MetaClaw wrote it: left alone.
    Conflict {
        keys: Vec<KeyHint>,
        backup: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRestored {
    pub id: String,
    pub path: PathBuf,
    pub display_path: String,
    pub outcome: RestoreOutcome,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreReport {
    pub claw: String,
    pub display_name: String,
    /// False when there was no backup state (never wired, or already restored).
    pub was_wired: bool,
    pub files: Vec<FileRestored>,
}

impl RestoreReport {
    /// Every file is back to its original state and the backup state is gone.
    pub fn is_complete(&self) -> bool {
        self.files.iter().all(|f| {
            !matches!(
                f.outcome,
                RestoreOutcome::Conflict { .. } | RestoreOutcome::Missing { .. }
            )
        })
    }
}

impl fmt::Display for RestoreReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = &self.display_name;
        if !self.was_wired {
            return write!(f, "{name}: nothing to restore (MetaClaw has not wired it)");
        }
        for (i, file) in self.files.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            let path = &file.display_path;
            match &file.outcome {
                RestoreOutcome::Restored => {
                    write!(f, "{name}: restored {path} to its original contents")?
                }
                RestoreOutcome::Deleted => {
                    write!(f, "{name}: deleted {path} (MetaClaw had created it)")?
                }
                RestoreOutcome::Merged { kept } => write!(
                    f,
                    "{name}: removed MetaClaw's settings from {path} and kept the changes made \
                     since it was wired ({})",
                    kept.join(", ")
                )?,
                RestoreOutcome::AlreadyOriginal => {
                    write!(f, "{name}: {path} already has its original contents")?
                }
                RestoreOutcome::Missing { backup } => {
                    write!(
                        f,
                        "{name}: {path} was deleted after MetaClaw wrote it; left it deleted"
                    )?;
                    if let Some(b) = backup {
                        write!(f, " (the original is kept in {})", b.display())?;
                    }
                }
                RestoreOutcome::Conflict { keys, backup } => {
                    write!(
                        f,
                        "{name}: {path} changed after MetaClaw wrote it, so it was left as it is; \
                         revert these keys by hand:"
                    )?;
                    for k in keys {
                        let was = match &k.original {
                            OriginalValue::Absent => "was not there: remove it".to_string(),
                            OriginalValue::Secret => {
                                "was set to a secret: see the backup".to_string()
                            }
                            OriginalValue::Value(v) => format!("was {v}"),
                            OriginalValue::Unknown => "original value unknown".to_string(),
                        };
                        write!(f, "\n  {} ({was})", k.key)?;
                    }
                    match backup {
                        Some(b) => write!(f, "\n  the original file is kept in {}", b.display())?,
                        None => write!(
                            f,
                            "\n  the file did not exist before MetaClaw; delete it if nothing else is in it"
                        )?,
                    }
                }
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestartOutcome {
    /// The command ran and succeeded.
    Restarted,
    /// The claw reloads its config by itself.
    NotNeeded,
    /// There is no restart command; the user must restart it.
    Manual,
    /// What the command restarts is not running, so it was not run (it reads the new
    /// config when it starts).
    NotRunning,
    /// The command is missing, failed or timed out (not fatal).
    Failed { reason: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartReport {
    pub claw: String,
    pub display_name: String,
    /// The command as typed (`zeroclaw service restart`), if any.
    pub command: Option<String>,
    pub hint: Option<String>,
    pub outcome: RestartOutcome,
}

impl fmt::Display for RestartReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = &self.display_name;
        match &self.outcome {
            RestartOutcome::Restarted => write!(
                f,
                "{name}: restarted (`{}`)",
                self.command.as_deref().unwrap_or_default()
            ),
            RestartOutcome::NotNeeded => {
                write!(f, "{name}: reloads its config by itself; no restart needed")
            }
            RestartOutcome::NotRunning => write!(
                f,
                "{name}: not running, so not restarted; it reads the new config when it starts"
            ),
            RestartOutcome::Manual => write!(
                f,
                "restart {name} yourself: {}",
                self.hint
                    .as_deref()
                    .unwrap_or("it has no restart command MetaClaw can run")
            ),
            RestartOutcome::Failed { reason } => {
                write!(
                    f,
                    "restart {name} yourself: `{}` {reason}",
                    self.command.as_deref().unwrap_or_default()
                )?;
                if let Some(h) = &self.hint {
                    write!(f, "; {h}")?;
                }
                Ok(())
            }
        }
    }
}
