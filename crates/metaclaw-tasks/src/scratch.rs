//! An episode's scratch folder: fresh for every episode, with the task's workspace files
//! copied in, removed when dropped.

use std::path::Path;

use crate::error::TaskError;

pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    /// A new folder holding a copy of `workspace` (a file, or a folder's contents).
    pub fn new(workspace: Option<&Path>) -> Result<Scratch, TaskError> {
        let scratch = Scratch::empty()?;
        if let Some(src) = workspace {
            match src.file_name() {
                Some(name) if !src.is_dir() => scratch.add(src, Path::new(name))?,
                _ => scratch.add(src, Path::new(""))?,
            }
        }
        Ok(scratch)
    }

    /// A new empty folder.
    pub fn empty() -> Result<Scratch, TaskError> {
        let dir = tempfile::Builder::new()
            .prefix("metaclaw-episode-")
            .tempdir()
            .map_err(TaskError::Scratch)?;
        Ok(Scratch { dir })
    }

    /// Copies `src` (a file, or a folder's contents) to `rel` inside the folder (`""` for
    /// its root), creating the folders on the way.
    pub fn add(&self, src: &Path, rel: &Path) -> Result<(), TaskError> {
        let to = self.dir.path().join(rel);
        let copy = || -> std::io::Result<()> {
            if src.is_dir() {
                std::fs::create_dir_all(&to)?;
                copy_dir(src, &to)
            } else {
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::copy(src, &to).map(|_| ())
            }
        };
        copy().map_err(TaskError::Scratch)
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Copies regular files and folders; symbolic links are skipped so a workspace cannot
/// smuggle a link to a file outside the task folder into the scratch folder.
fn copy_dir(src: &Path, dst: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let to = dst.join(entry.file_name());
        if kind.is_dir() {
            std::fs::create_dir(&to)?;
            copy_dir(&entry.path(), &to)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &to)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_scratch_is_a_fresh_copy_and_is_removed() {
        let src = tempfile::tempdir().unwrap();
        std::fs::create_dir(src.path().join("sub")).unwrap();
        std::fs::write(src.path().join("sub/data.txt"), "v1").unwrap();
        let a = Scratch::new(Some(src.path())).unwrap();
        std::fs::write(a.path().join("sub/data.txt"), "changed").unwrap();
        let b = Scratch::new(Some(src.path())).unwrap();
        assert_eq!(
            std::fs::read_to_string(b.path().join("sub/data.txt")).unwrap(),
            "v1"
        );
        let kept = a.path().to_owned();
        drop(a);
        assert!(!kept.exists());
    }
}
