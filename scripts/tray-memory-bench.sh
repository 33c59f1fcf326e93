#!/usr/bin/env bash
# Memory of the desktop app with its window open, closed, reopened and closed again: PSS and
# RSS of the app and of its WebKit processes, printed as a table (scripts/tray-memory-bench.py).
# Runs under its own Xvfb and private session bus; nothing it starts outlives it.
#
# Usage: scripts/tray-memory-bench.sh [APP_BINARY] [--settle SECONDS]
#   APP_BINARY  default: target/tray/release/metaclaw-app if built, else target/tray/debug/...
#               (release: `cargo build --release -p metaclaw-app --features custom-protocol`)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="${TRAY_TARGET_DIR:-$REPO/target/tray}"
app=""
if [[ $# -gt 0 && "$1" != --* ]]; then
  app="$1"
  shift
fi
if [[ -z "$app" ]]; then
  for p in release debug; do
    [[ -x "$TARGET/$p/metaclaw-app" ]] && { app="$TARGET/$p/metaclaw-app"; break; }
  done
fi
[[ -n "$app" ]] || { echo "tray-memory-bench: no app built in $TARGET; build it first (see --help in the script)" >&2; exit 1; }

display=":$((70 + RANDOM % 9))"
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill "$xvfb" 2>/dev/null || true' EXIT
for _ in $(seq 50); do xdpyinfo -display "$display" >/dev/null 2>&1 && break; sleep 0.1; done
DISPLAY="$display" dbus-run-session -- python3 "$REPO/scripts/tray-memory-bench.py" "$app" "$@"
