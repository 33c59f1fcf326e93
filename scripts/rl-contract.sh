#!/usr/bin/env bash
# Opt-in contract test of RL mode against a real Tinker-compatible server: SkyRL (JAX on
# CPU) with a tiny Qwen3 generated locally. The first run installs a ~5 GB venv (~10 min);
# later runs take a few minutes, mostly JAX compiling. The server is stopped on exit. It
# serves the tiny model with its output layer ×8 (SKYRL_LM_HEAD_SCALE=8): the stock one
# cannot show a learning curve, which the rollout test draws (scripts/rl-curve.sh: longer).
#   usage: scripts/rl-contract.sh            (METACLAW_SKYRL_PORT, default 18777)
set -euo pipefail
cd "$(dirname "$0")/.."
port=${METACLAW_SKYRL_PORT:-18777}
out=$(SKYRL_LM_HEAD_SCALE=8 tools/skyrl/up.sh "$port")
trap 'tools/skyrl/down.sh >/dev/null 2>&1 || true' EXIT
url=$(sed -n 's/^TINKER_BASE_URL=//p' <<<"$out")
model=$(sed -n 's/^TINKER_BASE_MODEL=//p' <<<"$out")
METACLAW_SKYRL_URL=$url METACLAW_SKYRL_MODEL=$model \
  cargo test --locked -p metaclaw-tests --test skyrl_contract -- --ignored --nocapture --test-threads=1
