#!/usr/bin/env bash
# Dashboard end-to-end tests (tests/e2e): a seeded headless daemon + Debian chromium driven by
# playwright-core through node's built-in test runner. Builds nothing: build first with
#   scripts/build-ui.sh && cargo build -p metaclaw-cli --bin metaclaw && cargo build -p metaclaw-tests --bin mock-upstream --bin fake-tinker
#
# Arguments go to `node --test` (e.g. --test-name-pattern="onboarding").
# Env: METACLAW_BIN (default <repo>/target/debug/metaclaw), MOCK_UPSTREAM_BIN (default
# <repo>/target/debug/mock-upstream), SCREENSHOT_DIR (default <repo>/target/ui-screenshots),
# CHROMIUM_PATH (default /usr/bin/chromium; `apt-get install --no-install-recommends chromium`).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export METACLAW_BIN="${METACLAW_BIN:-$REPO/target/debug/metaclaw}"
export MOCK_UPSTREAM_BIN="${MOCK_UPSTREAM_BIN:-$REPO/target/debug/mock-upstream}"
export FAKE_TINKER_BIN="${FAKE_TINKER_BIN:-$REPO/target/debug/fake-tinker}"
export SCREENSHOT_DIR="${SCREENSHOT_DIR:-$REPO/target/ui-screenshots}"
export CHROMIUM_PATH="${CHROMIUM_PATH:-/usr/bin/chromium}"

missing=0
for f in "$METACLAW_BIN" "$MOCK_UPSTREAM_BIN" "$FAKE_TINKER_BIN" "$CHROMIUM_PATH"; do
  [[ -x "$f" ]] || { echo "ui-e2e: not found: $f" >&2; missing=1; }
done
if [[ $missing == 1 ]]; then
  echo "ui-e2e: build with: scripts/build-ui.sh && cargo build -p metaclaw-cli --bin metaclaw && cargo build -p metaclaw-tests --bin mock-upstream --bin fake-tinker" >&2
  echo "ui-e2e: chromium:   apt-get install -y --no-install-recommends chromium" >&2
  exit 1
fi

cd "$REPO/tests/e2e"
STAMP="node_modules/.metaclaw-lock.sha256"
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ ! -d node_modules || "$want" != "$(cat "$STAMP" 2>/dev/null || true)" ]]; then
  npm ci --no-audit --no-fund >&2
  echo "$want" > "$STAMP"
fi

mkdir -p "$SCREENSHOT_DIR"
# Keep the test's loopback traffic away from any HTTP proxy in the environment.
env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u http_proxy -u https_proxy -u all_proxy \
  NO_PROXY=127.0.0.1,localhost \
  node --test --test-concurrency=1 --test-reporter=spec "$@" dashboard.test.mjs
echo "ui-e2e: screenshots in $SCREENSHOT_DIR"
