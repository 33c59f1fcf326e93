// Seeding the daemon's home for the e2e suite. Kept apart so the strategy can be swapped.
//
// Preferred: `metaclaw dev seed` (sessions + turns, a pending proposal named `seeded-proposal`,
// training steps), run before the daemon starts. Fallback while that command does not exist:
// turns through the proxy and a proposal from the mock evolver (`metaclaw skills distil`); that
// path cannot create training steps.
import { run } from "./proc.mjs";

export const SEEDED_PROPOSAL = "seeded-proposal";

/** Runs `metaclaw dev seed`. Returns a description, or null when the command does not exist. */
export async function seedOffline({ bin, env }) {
  const r = await run(bin, ["dev", "seed"], { env, timeoutMs: 30_000 });
  if (r.code === 0) return `metaclaw dev seed: ${(r.stdout + r.stderr).trim().split("\n").slice(-3).join(" | ")}`;
  if (/unrecognized subcommand '(dev|seed)'/.test(r.stderr)) return null;
  throw new Error(`metaclaw dev seed failed (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
}

async function chat(base, proxyKey, sessionId, messages) {
  const r = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${proxyKey}`, "x-session-id": sessionId },
    body: JSON.stringify({ model: "m", messages }),
  });
  if (!r.ok) throw new Error(`seed turn failed: HTTP ${r.status} ${await r.text()}`);
  return (await r.json()).choices?.[0]?.message?.content ?? "";
}

/** Fallback seeding against the running daemon. */
export async function seedLive({ base, proxyKey, mockBase, bin, env }) {
  const sys = { role: "system", content: "You are helpful." };
  const q1 = "Convert 26.2 miles to kilometres, two decimals please.";
  const a1 = await chat(base, proxyKey, "e2e-seed-1", [sys, { role: "user", content: q1 }]);
  await chat(base, proxyKey, "e2e-seed-1", [
    sys,
    { role: "user", content: q1 },
    { role: "assistant", content: a1 },
    { role: "user", content: "That's wrong: use 1.609344, not 1.6." },
  ]);
  await chat(base, proxyKey, "e2e-seed-2", [sys, { role: "user", content: "Write release notes for version 1.2." }]);

  const proposal = {
    name: SEEDED_PROPOSAL,
    description: "Use when converting between miles and kilometres or other imperial and metric units",
    category: "productivity",
    body: "# Convert units precisely\n\n## Steps\n1. Use 1 mile = 1.609344 km.\n2. Round at the end.\n\n## Anti-patterns\n- Rounding the factor to 1.6.",
    reason: "The user corrected a sloppy conversion.",
    turns: [],
  };
  const script = await fetch(`${mockBase}/_mock/script`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify([{ kind: "match", contains: "## Existing skills", then: { kind: "reply", text: JSON.stringify({ proposals: [proposal] }) } }]),
  });
  if (!script.ok) throw new Error(`mock script failed: HTTP ${script.status}`);
  // Turns are committed asynchronously; give the writer a moment.
  await new Promise((r) => setTimeout(r, 500));
  const d = await run(bin, ["skills", "distil", "e2e-seed-1"], { env, timeoutMs: 30_000 });
  if (d.code !== 0) throw new Error(`metaclaw skills distil failed (exit ${d.code}):\n${d.stdout}\n${d.stderr}`);
  return "fallback: 3 turns through the proxy + a proposal via `metaclaw skills distil` (no training steps)";
}
