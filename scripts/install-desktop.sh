#!/usr/bin/env bash
# Installs and launches the MetaClaw desktop app on Debian/Ubuntu, with no questions asked:
#   deps     scripts/install-deps.sh (build packages, webkit2gtk/appindicator, Node, ui/dist)
#   bundle   the `metaclaw` CLI and the tray app, bundled into a .deb by the Tauri bundler; the
#            .deb carries /usr/bin/metaclaw-app, /usr/bin/metaclaw, the menu entry and icons
#   install  the .deb, system-wide (dpkg; apt fills in missing runtime packages)
#   launch   /usr/bin/metaclaw-app, detached: the command returns, the app stays in the tray.
#            On first launch (no LLM configured) its window opens on onboarding.
# scripts/tray-test.sh runs the bundle and install steps, so a green CI means this works.
#
# Usage: scripts/install-desktop.sh [--profile release|debug] [--steps deps,bundle,install,launch]
#   --profile  release (default; ~12 MB .deb) or debug (reuses a debug build; what CI bundles)
#   --steps    a comma-separated subset, run in the order above (default: all four)
# Env: TRAY_TARGET_DIR  cargo target dir (default <repo>/target/tray, shared with tray-test.sh)
#      METACLAW_HOME    the home the launched app uses (default ~/.metaclaw)
# Prints the .deb's path after the bundle step.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
PROFILE=release
STEPS=deps,bundle,install,launch
while (($#)); do
  case "$1" in
    --profile) PROFILE="${2:?--profile needs release or debug}"; shift 2 ;;
    --steps) STEPS="${2:?--steps needs a list}"; shift 2 ;;
    -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-desktop: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$PROFILE" == release || "$PROFILE" == debug ]] \
  || { echo "install-desktop: --profile must be release or debug, not $PROFILE" >&2; exit 2; }
for s in ${STEPS//,/ }; do
  [[ "$s" =~ ^(deps|bundle|install|launch)$ ]] \
    || { echo "install-desktop: unknown step $s (deps, bundle, install, launch)" >&2; exit 2; }
done
wants() { [[ ",$STEPS," == *",$1,"* ]]; }

export CARGO_TARGET_DIR="${TRAY_TARGET_DIR:-$REPO/target/tray}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
say() { echo "install-desktop: $*" >&2; }

# The newest .deb the bundle step made for this profile.
deb_path() {
  local deb
  deb="$(ls -t "$CARGO_TARGET_DIR/$PROFILE"/bundle/deb/*.deb 2>/dev/null | head -1)"
  [[ -n "$deb" ]] || { say "no .deb in $CARGO_TARGET_DIR/$PROFILE/bundle/deb; run the bundle step"; return 1; }
  echo "$deb"
}

if wants deps; then
  say "system packages, Node, ui/dist (scripts/install-deps.sh)"
  "$REPO/scripts/install-deps.sh"
fi

if wants bundle; then
  [[ -f ui/dist/index.html ]] || { say "ui/dist is missing; run scripts/build-ui.sh (or the deps step)"; exit 1; }
  # The Tauri CLI is a prebuilt binary from npm (no tauri-cli compile). `npm install`, not
  # `npm ci`: the lock lists only the Linux x64 binary, and `npm ci` refuses that lock.
  (cd src-tauri && { [[ -x node_modules/.bin/tauri ]] || npm install --no-audit --no-fund >&2; })
  cargo_profile=()
  tauri_profile=()
  [[ "$PROFILE" == release ]] && cargo_profile=(--release)
  [[ "$PROFILE" == debug ]] && tauri_profile=(--debug)
  say "building the metaclaw CLI ($PROFILE)"
  cargo build --locked "${cargo_profile[@]}" -p metaclaw-cli --bin metaclaw
  cli="$CARGO_TARGET_DIR/$PROFILE/metaclaw"
  # The CLI goes into the .deb beside the app. Given here rather than in tauri.conf.json: its
  # path depends on the target dir and profile (the CLI merges this into the config).
  extra="$(printf '{"bundle":{"linux":{"deb":{"files":{"/usr/bin/metaclaw":"%s"}}}}}' "$cli")"
  say "building and bundling the tray app ($PROFILE; the first build takes several minutes)"
  # Run from the root (tauri.conf.json and the package manifest are there). `-p metaclaw-app`
  # goes to cargo: the root is also the workspace, whose default members leave the app out.
  src-tauri/node_modules/.bin/tauri build "${tauri_profile[@]}" --ci --bundles deb --config "$extra" \
    -- -p metaclaw-app --locked >&2
  # The CLI may touch Cargo.toml's tauri features to match tauri.conf.json; it must not.
  git diff --quiet -- Cargo.toml 2>/dev/null || { say "tauri build changed Cargo.toml"; exit 1; }
  deb="$(deb_path)"
  grep -Eq ' (\./)?usr/bin/metaclaw$' <(dpkg-deb --contents "$deb") \
    || { say "$deb lacks /usr/bin/metaclaw"; exit 1; }
  echo "$deb"
fi

if wants install; then
  deb="$(deb_path)"
  pkg="$(dpkg-deb --field "$deb" Package)"
  say "installing $deb (package $pkg)"
  # dpkg -i reinstalls even at the same version (apt would skip it); apt then adds any runtime
  # package dpkg found missing.
  if ! $SUDO env DEBIAN_FRONTEND=noninteractive dpkg -i "$deb" >&2; then
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -f -y -qq --no-install-recommends >&2
  fi
  dpkg-query -W -f='${Status}' "$pkg" | grep -q "install ok installed" \
    || { say "$pkg is not installed"; exit 1; }
  say "installed: /usr/bin/metaclaw-app, /usr/bin/metaclaw, the \"MetaClaw\" menu entry (remove: sudo dpkg -r $pkg)"
fi

if wants launch; then
  if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
    say "no graphical session here: start MetaClaw from the applications menu, or run it headless with \`metaclaw setup && metaclaw start\`"
    exit 0
  fi
  home="${METACLAW_HOME:-$HOME/.metaclaw}"
  # setsid: its own session, so closing this terminal does not end the app. Its log is the
  # home's metaclaw.log.
  setsid /usr/bin/metaclaw-app </dev/null >/dev/null 2>&1 &
  pid=$!
  disown
  say "launched metaclaw-app (pid $pid); waiting for it to start"
  # "<pid> <kind>" from daemon.json, which the app writes once its core serves.
  running() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("pid"), d.get("kind"))' \
      "$home/daemon.json" 2>/dev/null || true
  }
  for _ in $(seq 150); do
    state="$(running)"
    if [[ "$state" == "$pid tray" ]]; then
      say "MetaClaw is running in the tray; its window shows the dashboard (onboarding on first run)"
      exit 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      # A running app on this home takes the launch over and shows its window.
      if [[ "$state" == *" tray" ]]; then
        say "MetaClaw was already running; its window is shown"
        exit 0
      fi
      say "metaclaw-app exited; the end of $home/metaclaw.log:"
      tail -5 "$home/metaclaw.log" >&2 2>/dev/null || true
      exit 1
    fi
    sleep 0.2
  done
  say "metaclaw-app (pid $pid) did not start within 30 s; see $home/metaclaw.log"
  exit 1
fi
