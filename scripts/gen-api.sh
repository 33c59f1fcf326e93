#!/usr/bin/env bash
# Regenerates the API contract from the Rust types: docs/openapi.json (from the operations in
# crates/metaclaw-core/src/api) and the UI's TypeScript types ui/src/lib/api-types.ts (from that
# document). Run after changing an operation or a type it uses; CI fails when either is stale
# (`cargo test -p metaclaw-core openapi` and scripts/build-ui.sh check them).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
METACLAW_UPDATE_API=1 cargo test -q -p metaclaw-core --lib openapi >/dev/null
cd ui
[[ -d node_modules ]] || npm ci --no-audit --no-fund >&2
npm run --silent gen:api
echo "updated docs/openapi.json and ui/src/lib/api-types.ts"
