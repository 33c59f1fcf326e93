#!/usr/bin/env bash
# Builds the dashboard (ui/ -> ui/dist) for the daemon to embed. Idempotent and cheap when
# nothing changed: `npm ci` only when node_modules is missing or package-lock.json changed,
# `npm run build` only when a source is newer than ui/dist. Prints the ui/dist path last.
#
# Usage: scripts/build-ui.sh [--force]      (then: cargo build)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
UI="$REPO/ui"
DIST="$UI/dist"
FORCE=0
[[ "${1:-}" == "--force" ]] && FORCE=1

command -v node >/dev/null || { echo "build-ui: node is not installed (need node >= 20.19)" >&2; exit 1; }
command -v npm >/dev/null || { echo "build-ui: npm is not installed" >&2; exit 1; }
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \
  || { echo "build-ui: node $(node --version) is too old (vite 7 needs >= 20.19)" >&2; exit 1; }

cd "$UI"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

# 1. Dependencies: keyed on the lockfile's hash.
STAMP="node_modules/.metaclaw-lock.sha256"
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
have="$(cat "$STAMP" 2>/dev/null || true)"
if [[ ! -d node_modules || "$want" != "$have" ]]; then
  echo "build-ui: npm ci" >&2
  npm ci --no-audit --no-fund >&2
  echo "$want" > "$STAMP"
fi

# 2. Build: only when a source is newer than the last build (or there is none).
needs_build=$FORCE
if [[ ! -f "$DIST/index.html" ]]; then
  needs_build=1
elif [[ -n "$(find src index.html package.json package-lock.json vite.config.ts tsconfig.json \
              -newer "$DIST/index.html" -print -quit 2>/dev/null)" ]]; then
  needs_build=1
fi
if [[ $needs_build == 1 ]]; then
  echo "build-ui: npm run build" >&2
  npm run build >&2
  touch "$DIST/index.html" # the stamp the next run compares against
else
  echo "build-ui: ui/dist is up to date" >&2
fi

echo "$DIST"
