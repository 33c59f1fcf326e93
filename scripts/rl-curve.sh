#!/usr/bin/env bash
# The learning curve through the product against a real Tinker-compatible server (SkyRL on CPU,
# tiny local model with SKYRL_LM_HEAD_SCALE=8): rollout → proxy → policy → verifier → trainer →
# gate → hot swap, printing eval success and seconds per step after every training step, then a
# JSON summary. The same test runs shorter in scripts/rl-contract.sh (CI). The server is
# stopped on exit.
#   usage: scripts/rl-curve.sh [STEPS] [LR]     (defaults 20 and 1e-3; METACLAW_SKYRL_PORT)
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-20}
lr=${2:-1e-3}
port=${METACLAW_SKYRL_PORT:-18777}
out=$(SKYRL_LM_HEAD_SCALE=8 tools/skyrl/up.sh "$port")
trap 'tools/skyrl/down.sh >/dev/null 2>&1 || true' EXIT
url=$(sed -n 's/^TINKER_BASE_URL=//p' <<<"$out")
model=$(sed -n 's/^TINKER_BASE_MODEL=//p' <<<"$out")
METACLAW_SKYRL_URL=$url METACLAW_SKYRL_MODEL=$model \
METACLAW_SKYRL_CURVE_STEPS=$steps METACLAW_SKYRL_CURVE_LR=$lr \
  cargo test --locked -p metaclaw-tests --test skyrl_contract -- --ignored --nocapture \
  --test-threads=1 a_rollout_against_skyrl_learns_and_the_curve_rises
