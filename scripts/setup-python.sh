#!/usr/bin/env bash
# Create (or reuse) the Python venv used by tests/python (official openai/anthropic SDKs + pytest).
# Idempotent: when the venv already has the pinned versions it exits in well under a second.
# Usage: scripts/setup-python.sh        -> prints the venv path on the last line of stdout
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${METACLAW_VENV:-$REPO/.venv}"
PY="${PYTHON:-python3}"

# Pinned to versions verified to install here.
PINS=(
  "openai==3.54.0"
  "anthropic==2.12.0"
  "pytest==9.2.0"
  "httpx==0.28.1"
)
STAMP="$VENV/.metaclaw-pins"
WANT="$(printf '%s\n' "${PINS[@]}")"

if [[ -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]]; then
  echo "$VENV"
  exit 0
fi

if [[ ! -x "$VENV/bin/python" ]]; then
  "$PY" -m venv "$VENV" >&2
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PINS[@]}" >&2
printf '%s\n' "$WANT" > "$STAMP"
echo "$VENV"
