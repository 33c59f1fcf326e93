#!/usr/bin/env bash
# The desktop tray app's CI: build, mock-runtime tests, clippy, the Xvfb + WebDriver + D-Bus
# end-to-end test, the .deb/AppImage bundles and the install + launch steps of
# scripts/install-desktop.sh (the README's first command). Called by scripts/test.sh;
# runs on its own too (after scripts/install-deps.sh, which builds ui/dist).
#
# Env:
#   TRAY_TARGET_DIR        cargo target dir (default <repo>/target/tray). Separate from the core's:
#                          tauri turns on extra features of shared crates, and one target dir used
#                          with two package selections would rebuild most of the graph each time.
#   TRAY_BUNDLE_PROFILE    debug (default: reuses this build, ~1 min) or release (~7 min more).
#   TRAY_REQUIRE_APPIMAGE  1: fail when the AppImage cannot be made. The bundler downloads
#                          linuxdeploy from GitHub; without that access the AppImage is skipped
#                          with a message (the .deb is always required).
#   TRAY_SKIP_INSTALL      1: skip the install test (it installs the package system-wide, then
#                          removes it; needs root or sudo).
# Artifacts (screenshot, bundles, logs, timings): <repo>/target/ci-artifacts/tray.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
export CARGO_TARGET_DIR="${TRAY_TARGET_DIR:-$REPO/target/tray}"
export CARGO_TERM_COLOR=never
ART="$REPO/target/ci-artifacts/tray"
PROFILE="${TRAY_BUNDLE_PROFILE:-debug}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
mkdir -p "$ART"
TIMINGS="$ART/timings.txt"
: > "$TIMINGS"

# Runs a step and records its wall time.
step() {
  local name="$1"
  shift
  echo "== tray: $name" >&2
  local start=$SECONDS
  "$@"
  echo "$name: $((SECONDS - start)) s" | tee -a "$TIMINGS" >&2
}

PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

step "apt packages" "$REPO/scripts/install-tray-deps.sh"
[[ -f ui/dist/index.html ]] || { echo "tray: ui/dist is missing; run scripts/build-ui.sh" >&2; exit 1; }

# The Tauri CLI (prebuilt binary from npm: no tauri-cli compile) and tauri-driver (cargo
# install, cached in .cache/tauri-driver).
# `npm install`, not `npm ci`: the lock lists only the Linux x64 binary (the registry mirror
# serves no other platform's optional package), and `npm ci` refuses a lock without them.
step "tauri cli (npm)" bash -c 'cd src-tauri && { [[ -x node_modules/.bin/tauri ]] || npm install --no-audit --no-fund >&2; }'
TAURI_CLI="$REPO/src-tauri/node_modules/.bin/tauri"
DRIVER_ROOT="${TAURI_DRIVER_ROOT:-$REPO/.cache/tauri-driver}"
if [[ ! -x "$DRIVER_ROOT/bin/tauri-driver" ]]; then
  # Its own target dir: it shares no features with the app.
  step "tauri-driver (cargo install)" env CARGO_TARGET_DIR="$DRIVER_ROOT/target" \
    cargo install --locked --quiet tauri-driver --version 2.1.0 --root "$DRIVER_ROOT"
  rm -rf "$DRIVER_ROOT/target"
fi

# One build of every target with one package selection, so test and clippy rebuild nothing
# they do not have to.
step "cargo build (app + tests)" cargo build --locked -p metaclaw-app --all-targets
step "cargo test (unit + mock runtime)" cargo test --locked -p metaclaw-app
step "clippy" cargo clippy --locked -p metaclaw-app --all-targets -- -D warnings

# End to end under Xvfb and a private session bus (the tray exports its StatusNotifierItem and
# dbusmenu there; no tray host is needed).
e2e() {
  local display=":$((90 + RANDOM % 9))"
  Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >"$ART/xvfb.log" 2>&1 &
  local xvfb=$!
  PIDS+=("$xvfb")
  for _ in $(seq 50); do xdpyinfo -display "$display" >/dev/null 2>&1 && break; sleep 0.1; done
  local rc=0
  DISPLAY="$display" TRAY_APP="$CARGO_TARGET_DIR/debug/metaclaw-app" TAURI_DRIVER="$DRIVER_ROOT/bin/tauri-driver" \
    ARTIFACTS="$ART" dbus-run-session -- node src-tauri/e2e/tray-e2e.mjs || rc=$?
  kill "$xvfb" 2>/dev/null || true
  wait "$xvfb" 2>/dev/null || true
  return $rc
}
step "e2e (Xvfb, WebDriver, D-Bus tray)" e2e

# The .deb through scripts/install-desktop.sh, the README's install command (its bundle step:
# the metaclaw CLI and the app through the Tauri bundler). The AppImage is tried here only.
bundle() {
  local deb
  deb="$("$REPO/scripts/install-desktop.sh" --profile "$PROFILE" --steps bundle)"
  cp "$deb" "$ART/"
  local flag=()
  [[ "$PROFILE" == debug ]] && flag=(--debug)
  if "$TAURI_CLI" build "${flag[@]}" --ci --bundles appimage -- -p metaclaw-app --locked >"$ART/appimage.log" 2>&1; then
    cp "$CARGO_TARGET_DIR/$PROFILE"/bundle/appimage/*.AppImage "$ART/"
  elif [[ "${TRAY_REQUIRE_APPIMAGE:-0}" == 1 ]]; then
    cat "$ART/appimage.log" >&2
    return 1
  else
    echo "tray: AppImage not built (the bundler fetches linuxdeploy from GitHub); see $ART/appimage.log" >&2
    tail -3 "$ART/appimage.log" >&2
  fi
  git diff --exit-code -- Cargo.toml >/dev/null || { echo "tray: tauri build changed Cargo.toml" >&2; return 1; }
  ls -l "$ART"/*.deb "$ART"/*.AppImage 2>/dev/null >&2 || true
}
step "bundle ($PROFILE)" bundle

# The install and launch steps of scripts/install-desktop.sh on this machine: the .deb
# installed system-wide (menu entry, icons, both binaries), the app launched detached on a
# fresh home with no LLM configured (its window opens), a second start refused, SIGTERM -> a
# clean exit; then the package is removed again.
install_test() {
  local deb
  deb="$(ls -t "$CARGO_TARGET_DIR/$PROFILE"/bundle/deb/*.deb | head -1)"
  dpkg-deb --info "$deb" | tee "$ART/deb-info.txt" >&2
  dpkg-deb --contents "$deb" > "$ART/deb-contents.txt"
  local pkg
  pkg="$(dpkg-deb --field "$deb" Package)"
  "$REPO/scripts/install-desktop.sh" --profile "$PROFILE" --steps install
  local rc=0
  (
    set -e
    desktop=$(dpkg -L "$pkg" | grep '^/usr/share/applications/.*\.desktop$')
    desktop-file-validate "$desktop"
    grep -q '^Exec=metaclaw-app' "$desktop"
    dpkg -L "$pkg" | grep -q '^/usr/share/icons/hicolor/.*/apps/metaclaw-app.png$'
    dpkg -L "$pkg" | grep -qx '/usr/bin/metaclaw'
    /usr/bin/metaclaw version | tee "$ART/installed-cli.txt" | grep -q .
    home="$(mktemp -d)"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    # No llm section: a first run, which opens the window on onboarding.
    printf 'claw_type: none\nproxy:\n  port: %s\n' "$port" > "$home/config.yaml"
    display=":$((80 + RANDOM % 9))"
    Xvfb "$display" -screen 0 1024x768x24 -nolisten tcp >/dev/null 2>&1 &
    xvfb=$!
    for _ in $(seq 50); do xdpyinfo -display "$display" >/dev/null 2>&1 && break; sleep 0.1; done
    DISPLAY="$display" METACLAW_HOME="$home" "$REPO/scripts/install-desktop.sh" --steps launch \
      2>"$ART/installed-launch.log"
    pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$home/daemon.json")
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null \
      || { echo "installed app did not answer /healthz"; cat "$ART/installed-launch.log"; kill -TERM "$pid"; exit 1; }
    window=0
    for _ in $(seq 100); do
      DISPLAY="$display" xwininfo -name MetaClaw >/dev/null 2>&1 && { window=1; break; }
      sleep 0.2
    done
    # A second start on the same home is refused with a clear message (no display: it cannot
    # hand over to the running app's window).
    second=0
    METACLAW_HOME="$home" DISPLAY= timeout 20 /usr/bin/metaclaw-app 2>"$ART/second-start.log" || second=$?
    kill -TERM "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill "$xvfb" 2>/dev/null || true
    [[ $window == 1 ]] || { echo "the launched app opened no window"; exit 1; }
    [[ $second == 1 ]] && grep -q "already running" "$ART/second-start.log" \
      || { echo "second start: rc $second"; cat "$ART/second-start.log"; exit 1; }
    ! kill -0 "$pid" 2>/dev/null || { echo "the app did not exit on SIGTERM"; kill -KILL "$pid"; exit 1; }
    [[ ! -e "$home/daemon.json" ]] || { echo "daemon.json left behind"; exit 1; }
    rm -rf "$home"
    echo "installed app: menu entry $desktop, metaclaw CLI, launched detached with its window open, /healthz ok, second start refused, clean SIGTERM exit"
  ) || rc=$?
  $SUDO dpkg -r "$pkg" >/dev/null
  return $rc
}
if [[ "${TRAY_SKIP_INSTALL:-0}" != 1 ]]; then
  step "deb install test" install_test
fi

du -sh "$CARGO_TARGET_DIR" | sed 's/^/target dir: /' | tee -a "$TIMINGS" >&2
echo "tray: all passed; artifacts in $ART" >&2
cat "$TIMINGS" >&2
