//! "Start at login": an XDG autostart entry (`~/.config/autostart/metaclaw.desktop`), which
//! GNOME, KDE, Xfce and the other freedesktop sessions honour. Started that way, the app stays
//! in the tray (`--hidden`) instead of opening the dashboard.

use std::path::{Path, PathBuf};

pub const HIDDEN_ARG: &str = "--hidden";

#[derive(Debug, Clone)]
pub struct Autostart {
    entry: PathBuf,
    exec: PathBuf,
}

impl Autostart {
    pub fn new(entry: PathBuf, exec: PathBuf) -> Autostart {
        Autostart { entry, exec }
    }

    /// `$XDG_CONFIG_HOME/autostart` (default `~/.config/autostart`), launching this program;
    /// inside an AppImage, the AppImage file itself (the mounted path changes every run).
    pub fn for_current_user() -> Option<Autostart> {
        let config = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
        let exec = std::env::var_os("APPIMAGE")
            .map(PathBuf::from)
            .or_else(|| std::env::current_exe().ok())?;
        Some(Autostart::new(
            config.join("autostart").join("metaclaw.desktop"),
            exec,
        ))
    }

    pub fn entry(&self) -> &Path {
        &self.entry
    }

    pub fn is_enabled(&self) -> bool {
        self.entry.is_file()
    }

    pub fn set(&self, enabled: bool) -> std::io::Result<()> {
        if !enabled {
            return match std::fs::remove_file(&self.entry) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            };
        }
        if let Some(dir) = self.entry.parent() {
            std::fs::create_dir_all(dir)?;
        }
        // Exec quoting per the Desktop Entry spec: double quotes, with " ` $ \ escaped.
        let mut exec = String::from("\"");
        for c in self.exec.to_string_lossy().chars() {
            if matches!(c, '"' | '`' | '$' | '\\') {
                exec.push('\\');
            }
            exec.push(c);
        }
        exec.push('"');
        let text = format!(
            "[Desktop Entry]\nType=Application\nName=MetaClaw\nComment=MetaClaw tray\nExec={exec} {HIDDEN_ARG}\nIcon=metaclaw-app\nTerminal=false\nX-GNOME-Autostart-enabled=true\n"
        );
        std::fs::write(&self.entry, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_removes_the_entry() {
        let dir = tempfile::tempdir().unwrap();
        let a = Autostart::new(
            dir.path().join("autostart/metaclaw.desktop"),
            PathBuf::from("/opt/Meta Claw/bin$1"),
        );
        assert!(!a.is_enabled());
        a.set(true).unwrap();
        assert!(a.is_enabled());
        let text = std::fs::read_to_string(a.entry()).unwrap();
        assert!(
            text.contains("Exec=\"/opt/Meta Claw/bin\\$1\" --hidden"),
            "{text}"
        );
        a.set(false).unwrap();
        assert!(!a.is_enabled());
        a.set(false).unwrap();
    }
}
