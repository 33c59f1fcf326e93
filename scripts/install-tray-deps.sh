#!/usr/bin/env bash
# System packages for the desktop tray app (src-tauri): build, headless tests and bundling.
# Called by install-deps.sh; idempotent and quick when everything is installed.
# --no-install-recommends matters: with recommends the webkit set pulls ~385 packages instead
# of ~205 (gstreamer plugins, ffmpeg, ghostscript...), none needed to build or test headless.
set -euo pipefail

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi

PACKAGES=(
  # Tauri v2 build prerequisites on Debian 12 (libappindicator3-dev does not exist there).
  libwebkit2gtk-4.1-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev libssl-dev
  build-essential pkg-config curl wget file
  # Runtime: the tray library is dlopened, so it never shows up in ldd.
  libayatana-appindicator3-1
  # Headless tests: X server, WebDriver for WebKitGTK, a private session bus, gdbus, screenshots.
  xvfb xauth x11-utils imagemagick webkit2gtk-driver dbus-daemon dbus-bin libglib2.0-bin
  # Bundling: the AppImage step unpacks with squashfs tools; dpkg-deb for the install test.
  squashfs-tools desktop-file-utils
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-tray-deps: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
