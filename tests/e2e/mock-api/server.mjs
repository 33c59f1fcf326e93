#!/usr/bin/env node
// DEV ONLY: a stand-in for the daemon's /api (docs/api.md) with in-memory seeded data, serving
// ui/dist. For working on the UI without a Rust build:
//
//   node tests/e2e/mock-api/server.mjs [--port 30999]     # prints "listening on http://127.0.0.1:PORT"
//   open http://127.0.0.1:PORT/login?code=dev
//
// The real e2e suite never uses this (it runs against `metaclaw start --foreground`), except when
// a developer sets E2E_TARGET=mock explicitly.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../../..");
const dist = process.env.UI_DIST ?? path.join(repo, "ui", "dist");
const argPort = process.argv.indexOf("--port");
const port = argPort > 0 ? Number(process.argv[argPort + 1]) : Number(process.env.PORT ?? 0);

const TOKEN = "mock-session-token";
const now = () => new Date().toISOString();
const ago = (min) => new Date(Date.now() - min * 60_000).toISOString();

// ---------------------------------------------------------------- seeded state
const state = {
  mode: "skills_only",
  opd_enabled: false,
  rl_enabled: false,
  learning_paused: false,
  llm: { provider: "custom", model_id: "mock-model", api_base: "http://127.0.0.1:9/v1", api_key: "sk-…abcd" },
  skills: new Map(),
  versions: [],
  proposals: [],
  sessions: [],
  turns: new Map(),
  steps: [],
  checkpoints: [],
  generation: 1,
};

function skillDoc(name, description, category, body) {
  return `---\nname: ${name}\ndescription: "${description}"\ncategory: ${category}\n---\n\n${body}\n`;
}

function addSkill(name, description, category, source, content) {
  state.skills.set(name, {
    name,
    description,
    category,
    version: "1",
    source,
    path: `${source === "user" ? "~/.metaclaw/skills" : "bundled"}/${name}/SKILL.md`,
    enabled: true,
    pinned: false,
    injected: Math.floor(Math.random() * 20),
    thumbs_up: Math.floor(Math.random() * 4),
    thumbs_down: Math.floor(Math.random() * 2),
    content,
  });
}

// Bundled skills from the repo's skills/ folder (the real bank).
const bank = path.join(repo, "skills");
for (const dir of fs.existsSync(bank) ? fs.readdirSync(bank).sort() : []) {
  const f = path.join(bank, dir, "SKILL.md");
  if (!fs.existsSync(f)) continue;
  const content = fs.readFileSync(f, "utf8");
  const desc = /description:\s*"?(.*?)"?\s*$/m.exec(content)?.[1] ?? "";
  const cat = /category:\s*(\S+)/m.exec(content)?.[1] ?? "general";
  addSkill(dir, desc, cat, "bundled", content);
}
addSkill(
  "write-release-notes",
  "Use when writing release notes or a changelog entry.",
  "communication",
  "user",
  skillDoc("write-release-notes", "Use when writing release notes or a changelog entry.", "communication", "# Write release notes\n\n1. **Group by impact.**\n2. **Link the PRs.**"),
);
state.versions.push({ skill_name: "write-release-notes", version: 1, content: state.skills.get("write-release-notes").content, author: "user", action: "create", proposal_id: null, generation: 1, created_at: ago(300) });

for (let i = 0; i < 3; i++) {
  const id = `sess-${1000 + i}-${"abcdef".slice(i)}`;
  const turns = [];
  for (let t = 0; t < 3 + i; t++) {
    turns.push({
      id: `turn-${i}-${t}`,
      seq: t + 1,
      turn_type: t === 2 ? "side" : "main",
      api: "openai",
      model: "mock-model",
      status: t === 3 ? "upstream_error" : "ok",
      error: t === 3 ? "upstream answered 502" : null,
      started_at: ago(60 * (i + 1) - t * 2),
      latency_ms: 420 + t * 31,
      user_text: t === 0 ? "Convert 26.2 miles to kilometres, two decimals please." : `Follow-up question number ${t} about the conversion.`,
      assistant_text: t === 0 ? "26.2 miles is about 42.16 km." : `mock reply: follow-up ${t}`,
      injected: t % 2 === 0 ? [{ name: "check-dates-and-timezones", version: "1", score: 0.71 }, { name: "clean-csv-data", version: "1", score: 0.42 }] : [],
      feedback: null,
      skill_generation: 1,
    });
  }
  state.turns.set(id, turns);
  state.sessions.push({ id, source: "header", started_at: ago(60 * (i + 1)), last_seen_at: ago(60 * (i + 1) - 8), ended_at: i === 0 ? null : ago(60 * i), end_reason: i === 0 ? null : "idle_timeout", turn_count: turns.length });
}

const base = state.skills.get("clean-csv-data")?.content ?? skillDoc("clean-csv-data", "x", "data", "# Clean CSV data");
state.proposals.push({
  id: 1,
  kind: "new",
  skill_name: "seeded-proposal",
  content: skillDoc("seeded-proposal", "Use when converting between imperial and metric units with exact factors.", "productivity", "# Convert units precisely\n\n## Steps\n\n1. **Use exact factors.** 1 mile = 1.609344 km.\n2. **Round at the end**, to the precision asked.\n\n## Anti-patterns\n\n- Rounding the factor to 1.6."),
  base_content: null,
  diff: null,
  reason: "The user corrected a sloppy miles→km conversion twice.",
  session_id: state.sessions[0].id,
  turn_ids: ["turn-0-0", "turn-0-1"],
  signals: { correction: 2, thumbs_down: 1, retry: true },
  evolver_model: "mock-model",
  status: "pending",
  reject_reason: null,
  created_at: ago(12),
  decided_at: null,
});
const updated = base.replace("## Steps", "## Steps\n\n0. **Sniff the delimiter first** with `csv.Sniffer`.");
state.proposals.push({
  id: 2,
  kind: "update",
  skill_name: "clean-csv-data",
  content: updated,
  base_content: base,
  diff: `--- a/clean-csv-data/SKILL.md\n+++ b/clean-csv-data/SKILL.md\n@@ -10,3 +10,5 @@\n ## Steps\n \n+0. **Sniff the delimiter first** with \`csv.Sniffer\`.\n+\n 1. **Load as text.**\n-2. Old step.\n`,
  reason: "A semicolon-separated file broke the first attempt.",
  session_id: state.sessions[1].id,
  turn_ids: ["turn-1-2"],
  signals: [{ kind: "error_then_retry", turn_id: "turn-1-2" }],
  evolver_model: "mock-model",
  status: "pending",
  reject_reason: null,
  created_at: ago(30),
  decided_at: null,
});

for (let s = 1; s <= 6; s++) {
  state.steps.push({ step: s, started_at: ago(600 - s * 60), finished_at: ago(590 - s * 60), status: "ok", loss: 0.9 / s, mean_reward: 0.1 * s, success_rate: 0.4 + 0.08 * s, tokens: 12000 + s * 800, kl: 0.01 * s, duration_s: 540 + s * 7, checkpoint: s % 2 === 0 ? `ckpt-step-${s}` : null });
  if (s % 2 === 0) state.checkpoints.push({ name: `ckpt-step-${s}`, step: s, created_at: ago(590 - s * 60) });
}

// ---------------------------------------------------------------- helpers
const clients = new Set();
function broadcast(type, data) {
  for (const res of clients) res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
}

function send(res, status, body, headers = {}) {
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", ...headers });
  res.end(text);
}
const fail = (res, status, code, message) => send(res, status, { error: { message, code } });

function readBody(req) {
  return new Promise((resolve) => {
    let b = "";
    req.on("data", (c) => (b += c));
    req.on("end", () => {
      try {
        resolve(b ? JSON.parse(b) : {});
      } catch {
        resolve(null);
      }
    });
  });
}

function skillOut(s) {
  const { content, ...rest } = s;
  return rest;
}

function addVersion(name, content, author, action, proposal_id = null) {
  const prev = state.versions.filter((v) => v.skill_name === name);
  const version = prev.length ? Math.max(...prev.map((v) => v.version)) + 1 : 1;
  state.generation++;
  const row = { skill_name: name, version, content, author, action, proposal_id, generation: state.generation, created_at: now() };
  state.versions.push(row);
  return row;
}

function parseName(content) {
  return /^---[\s\S]*?^name:\s*(\S+)/m.exec(content)?.[1];
}

function validate(content, expected) {
  if (!/^---\r?\n[\s\S]*?\r?\n---/.test(content)) return "SKILL.md: missing YAML frontmatter (the file must start with ---)";
  const name = parseName(content);
  if (!name) return "frontmatter: `name` is required";
  if (expected && name !== expected) return `frontmatter: name must stay "${expected}" (found "${name}")`;
  if (!/^description:/m.test(content)) return "frontmatter: `description` is required";
  return null;
}

function applyContent(name, content, source = "user") {
  const s = state.skills.get(name);
  const desc = /description:\s*"?(.*?)"?\s*$/m.exec(content)?.[1] ?? "";
  const cat = /category:\s*(\S+)/m.exec(content)?.[1] ?? "general";
  if (s) Object.assign(s, { content, description: desc, category: cat, source: "user", version: String(Number(s.version) + 1) });
  else addSkill(name, desc, cat, source, content);
}

function chart(name, theme) {
  const dark = theme === "dark";
  const bg = dark ? "#171b21" : "#ffffff";
  const fg = dark ? "#e6e9ee" : "#1b1f24";
  const values = state.steps.map((s) => ({ reward: s.mean_reward, loss: s.loss, success_rate: s.success_rate, kl: s.kl })[name] ?? Math.random());
  const pts = (values.length ? values : [0.2, 0.4, 0.3, 0.6]).map((v, i, a) => `${40 + (i * 340) / Math.max(1, a.length - 1)},${170 - v * 120}`).join(" ");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200" viewBox="0 0 400 200"><rect width="400" height="200" fill="${bg}"/><text x="12" y="20" fill="${fg}" font-size="13" font-family="sans-serif">${name}</text><polyline points="${pts}" fill="none" stroke="#6366f1" stroke-width="2"/></svg>`;
}

function schedulerView() {
  const h = 3600_000;
  const t = Date.now();
  return {
    enabled: state.mode === "auto",
    state: state.mode === "auto" ? "idle_wait" : "disabled",
    source: null,
    sources: { sleep: { start: "23:00", end: "07:00" }, idle: { threshold_minutes: 30, available: false }, calendar: { paths: ["/home/me/work.ics"], urls: [] } },
    next_window: state.mode === "auto" ? { start: new Date(t + 5 * h).toISOString(), end: new Date(t + 7 * h).toISOString(), source: "sleep" } : null,
    timeline: [
      { start: new Date(t - 9 * h).toISOString(), end: new Date(t - 8 * h).toISOString(), kind: "training" },
      { start: new Date(t + 2 * h).toISOString(), end: new Date(t + 3 * h).toISOString(), kind: "calendar" },
      { start: new Date(t - 3 * h).toISOString(), end: new Date(t - 2.5 * h).toISOString(), kind: "calendar" },
    ],
  };
}

function statusView() {
  const turns = [...state.turns.values()].flat();
  return {
    version: "0.1.0-mock",
    pid: process.pid,
    uptime_s: Math.round(process.uptime()),
    mode: state.mode,
    opd_enabled: state.opd_enabled,
    rl_enabled: state.rl_enabled,
    learning_paused: state.learning_paused,
    upstream: { url: state.llm.api_base, reachable: true, detail: "200 in 12 ms" },
    counts: { sessions: state.sessions.length, turns: turns.length, turns_today: turns.length, skills: state.skills.size, pending_proposals: state.proposals.filter((p) => p.status === "pending").length },
    training: { running: state.rl_enabled, step: state.rl_enabled ? state.steps.length + 1 : state.steps.length, progress: state.rl_enabled ? 0.42 : null, message: state.rl_enabled ? "sampling 12/32" : null },
    scheduler: { enabled: state.mode === "auto", state: state.mode === "auto" ? "idle_wait" : null, source: null, next_window: schedulerView().next_window },
    last_evolution_failure: { at: ago(90), session_id: state.sessions[2].id, error: "evolver returned invalid JSON (attempt 2 of 2)" },
  };
}

function configView() {
  return {
    mode: state.mode,
    llm: { ...state.llm },
    proxy: { host: "127.0.0.1", port: server.address().port, api_key: "***" },
    rl: { enabled: state.rl_enabled, evolver_model: "" },
    opd: { enabled: state.opd_enabled },
    skills: { retrieval_mode: "template", dir: "~/.metaclaw/skills" },
  };
}

// ---------------------------------------------------------------- routes
async function api(req, res, url) {
  const p = url.pathname;
  const m = req.method;
  let mm;
  if (m === "GET" && p === "/api/status") return send(res, 200, statusView());
  if (m === "GET" && p === "/api/events") {
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" });
    res.write(": hello\n\n");
    clients.add(res);
    req.on("close", () => clients.delete(res));
    return;
  }
  if (m === "GET" && p === "/api/sessions") return send(res, 200, state.sessions.slice(0, Number(url.searchParams.get("limit") ?? 100)));
  if (m === "GET" && (mm = /^\/api\/sessions\/([^/]+)$/.exec(p))) {
    const id = decodeURIComponent(mm[1]);
    const s = state.sessions.find((x) => x.id === id);
    return s ? send(res, 200, { session: s, turns: state.turns.get(id) }) : fail(res, 404, "not_found", `no session ${id}`);
  }
  if (m === "POST" && (mm = /^\/api\/turns\/([^/]+)\/feedback$/.exec(p))) {
    const id = decodeURIComponent(mm[1]);
    const b = await readBody(req);
    if (!b || (b.rating !== 1 && b.rating !== -1)) return fail(res, 400, "bad_request", "rating must be 1 or -1");
    const t = [...state.turns.values()].flat().find((x) => x.id === id);
    if (!t) return fail(res, 404, "not_found", `no turn ${id}`);
    t.feedback = { rating: b.rating, note: b.note ?? null };
    broadcast("turn", { turn_id: id });
    return send(res, 200, { ok: true });
  }
  if (m === "GET" && p === "/api/skills") {
    const q = (url.searchParams.get("q") ?? "").toLowerCase();
    const c = url.searchParams.get("category") ?? "";
    const list = [...state.skills.values()]
      .filter((s) => (!q || s.name.includes(q) || s.description.toLowerCase().includes(q)) && (!c || s.category === c))
      .map(skillOut);
    return send(res, 200, list);
  }
  if (m === "POST" && p === "/api/skills") {
    const b = await readBody(req);
    const err = validate(b?.content ?? "");
    if (err) return fail(res, 400, "bad_request", err);
    const name = parseName(b.content);
    if (state.skills.has(name)) return fail(res, 409, "conflict", `skill ${name} already exists`);
    applyContent(name, b.content);
    const row = addVersion(name, b.content, "user", "create");
    broadcast("skill_changed", { name });
    return send(res, 200, row);
  }
  if ((mm = /^\/api\/skills\/([^/]+)(\/[a-z]+)?$/.exec(p))) {
    const name = decodeURIComponent(mm[1]);
    const sub = mm[2];
    const s = state.skills.get(name);
    if (!s && !(sub === "/history")) return fail(res, 404, "not_found", `no skill ${name}`);
    if (m === "GET" && !sub) return send(res, 200, { skill: skillOut(s), content: s.content, problems: s.content.includes("TODO") ? [{ level: "warning", message: "body contains TODO" }] : [] });
    if (m === "PUT" && !sub) {
      const b = await readBody(req);
      const err = validate(b?.content ?? "", name);
      if (err) return fail(res, 400, "bad_request", err);
      if (!state.versions.some((v) => v.skill_name === name)) addVersion(name, s.content, "user", "create");
      applyContent(name, b.content);
      const row = addVersion(name, b.content, "user", "edit");
      broadcast("skill_changed", { name });
      return send(res, 200, row);
    }
    if (m === "DELETE" && !sub) {
      if (s.source !== "user") return fail(res, 409, "conflict", "only your own skills can be deleted");
      state.skills.delete(name);
      const row = addVersion(name, "", "user", "delete");
      broadcast("skill_changed", { name });
      return send(res, 200, row);
    }
    if (m === "POST" && sub === "/state") {
      const b = await readBody(req);
      if (typeof b?.enabled === "boolean") s.enabled = b.enabled;
      if (typeof b?.pinned === "boolean") s.pinned = b.pinned;
      broadcast("skill_changed", { name });
      return send(res, 200, { ok: true });
    }
    if (m === "GET" && sub === "/history") return send(res, 200, state.versions.filter((v) => v.skill_name === name).sort((a, b) => b.version - a.version));
    if (m === "POST" && sub === "/rollback") {
      const b = await readBody(req);
      const v = state.versions.find((x) => x.skill_name === name && x.version === b?.version);
      if (!v) return fail(res, 404, "not_found", `no version ${b?.version} of ${name}`);
      applyContent(name, v.content);
      const row = addVersion(name, v.content, "user", "rollback");
      broadcast("skill_changed", { name });
      return send(res, 200, row);
    }
  }
  if (m === "POST" && p === "/api/retrieval") {
    const b = await readBody(req);
    const words = String(b?.query ?? "").toLowerCase().split(/\W+/).filter((w) => w.length > 2);
    const cands = [...state.skills.values()]
      .map((s) => {
        const hay = (s.name + " " + s.description).toLowerCase();
        const hits = words.filter((w) => hay.includes(w));
        return { name: s.name, category: s.category, version: s.version, score: hits.length / Math.max(1, words.length), injected: false, reason: hits.length ? `matched: ${hits.join(", ")}` : "no overlap" };
      })
      .filter((c) => c.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, 6);
    cands.forEach((c, i) => {
      c.injected = i < 2 && c.score >= 0.3;
      if (!c.injected) c.reason += i >= 2 ? " · below top_k" : " · below min_score";
    });
    return send(res, 200, { query: b?.query, mode: "template", candidates: cands });
  }
  if (m === "GET" && p === "/api/proposals") {
    const st = url.searchParams.get("status");
    return send(res, 200, state.proposals.filter((x) => !st || x.status === st));
  }
  if ((mm = /^\/api\/proposals\/(\d+)(\/[a-z]+)?$/.exec(p))) {
    const pr = state.proposals.find((x) => x.id === Number(mm[1]));
    if (!pr) return fail(res, 404, "not_found", `no proposal ${mm[1]}`);
    const sub = mm[2];
    if (m === "GET" && !sub) return send(res, 200, pr);
    if (m === "POST" && sub === "/approve") {
      if (pr.status !== "pending") return fail(res, 409, "conflict", `proposal ${pr.id} is ${pr.status}`);
      const b = await readBody(req);
      const content = b?.content ?? pr.content;
      const err = validate(content, pr.skill_name);
      if (err) return fail(res, 400, "bad_request", err);
      applyContent(pr.skill_name, content);
      Object.assign(pr, { status: "approved", decided_at: now() });
      const row = addVersion(pr.skill_name, content, "evolver", "approve", pr.id);
      broadcast("proposals", { id: pr.id });
      broadcast("skill_changed", { name: pr.skill_name });
      return send(res, 200, row);
    }
    if (m === "POST" && sub === "/reject") {
      const b = await readBody(req);
      Object.assign(pr, { status: "rejected", decided_at: now(), reject_reason: b?.reason ?? null });
      broadcast("proposals", { id: pr.id });
      return send(res, 200, { ok: true });
    }
    if (m === "POST" && sub === "/undo") {
      if (pr.status !== "approved") return fail(res, 409, "conflict", "only approved proposals can be undone");
      pr.status = "undone";
      if (pr.base_content) applyContent(pr.skill_name, pr.base_content);
      else state.skills.delete(pr.skill_name);
      const row = addVersion(pr.skill_name, pr.base_content ?? "", "user", "undo", pr.id);
      broadcast("proposals", { id: pr.id });
      return send(res, 200, row);
    }
  }
  if (m === "POST" && p === "/api/proposals/bulk") {
    const b = await readBody(req);
    const results = (b?.ids ?? []).map((id) => {
      const pr = state.proposals.find((x) => x.id === id);
      if (!pr || pr.status !== "pending") return { id, ok: false, error: "not pending" };
      if (b.action === "approve") {
        applyContent(pr.skill_name, pr.content);
        addVersion(pr.skill_name, pr.content, "evolver", "approve", pr.id);
        Object.assign(pr, { status: "approved", decided_at: now() });
      } else Object.assign(pr, { status: "rejected", decided_at: now(), reject_reason: b.reason ?? null });
      return { id, ok: true, error: null };
    });
    broadcast("proposals", {});
    return send(res, 200, { results });
  }
  if (m === "POST" && p === "/api/distil") {
    const b = await readBody(req);
    return send(res, 200, { session_id: b?.session_id ?? state.sessions[0].id, status: "ok", proposals: [], dropped: [], signals: {}, error: null });
  }
  if (m === "GET" && p === "/api/training/steps") return send(res, 200, state.steps);
  if (m === "GET" && p === "/api/training/checkpoints") return send(res, 200, state.checkpoints);
  if (m === "GET" && p === "/api/scheduler") return send(res, 200, schedulerView());
  if (m === "GET" && p === "/api/config") return send(res, 200, configView());
  if (m === "PATCH" && p === "/api/config") {
    const b = await readBody(req);
    if (!b) return fail(res, 400, "bad_request", "invalid JSON");
    let restart = false;
    if (b.mode !== undefined) {
      if (!["skills_only", "rl", "auto"].includes(b.mode)) return fail(res, 400, "bad_request", `mode: "${b.mode}" is not one of skills_only, rl, auto`);
      state.mode = b.mode;
    }
    for (const k of ["opd_enabled", "rl_enabled", "learning_paused"]) if (typeof b[k] === "boolean") state[k] = b[k];
    if (b.llm) {
      for (const k of ["api_base", "model_id"]) if (typeof b.llm[k] === "string") state.llm[k] = b.llm[k];
      if (typeof b.llm.api_key === "string") state.llm.api_key = b.llm.api_key.length > 12 ? b.llm.api_key.slice(0, 3) + "…" + b.llm.api_key.slice(-4) : "***";
      restart = true;
    }
    broadcast("state", {});
    return send(res, 200, { config: configView(), restart_required: restart });
  }
  if (m === "POST" && p === "/api/config/test-connection") {
    const b = await readBody(req);
    if (b?.target === "embedding") return send(res, 200, { ok: false, detail: "no embedding endpoint configured (retrieval_mode is template)", latency_ms: null });
    return send(res, 200, { ok: true, detail: "HTTP 200, model mock-model listed", latency_ms: 14 });
  }
  if (m === "GET" && (mm = /^\/api\/charts\/([a-z_]+)\.svg$/.exec(p))) {
    res.writeHead(200, { "Content-Type": "image/svg+xml" });
    return res.end(chart(mm[1], url.searchParams.get("theme")));
  }
  return fail(res, 404, "not_found", `no route ${m} ${p}`);
}

const MIME = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png" };

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, "http://x");
  if (url.pathname === "/healthz") return send(res, 200, { ok: true });
  if (url.pathname === "/login") {
    if (url.searchParams.get("code") !== "dev") return send(res, 401, { error: { message: "invalid or expired code", code: "unauthorized" } });
    res.writeHead(302, { Location: "/", "Set-Cookie": `metaclaw_session=${TOKEN}; HttpOnly; SameSite=Strict; Path=/` });
    return res.end();
  }
  if (url.pathname.startsWith("/api/")) {
    if (!(req.headers.cookie ?? "").includes(`metaclaw_session=${TOKEN}`)) return fail(res, 401, "unauthorized", "missing or invalid dashboard token");
    try {
      return await api(req, res, url);
    } catch (e) {
      return fail(res, 500, "internal", String(e));
    }
  }
  const rel = url.pathname === "/" ? "index.html" : decodeURIComponent(url.pathname.slice(1));
  const file = path.join(dist, rel);
  if (!file.startsWith(dist) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) return send(res, 404, { error: { message: "not found", code: "not_found" } });
  res.writeHead(200, { "Content-Type": MIME[path.extname(file)] ?? "application/octet-stream" });
  fs.createReadStream(file).pipe(res);
});

// Simulated live activity: a turn every 20 s.
setInterval(() => broadcast("turn", { session_id: state.sessions[0].id }), 20_000).unref();

server.listen(port, "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => { for (const c of clients) c.end(); server.close(() => process.exit(0)); setTimeout(() => process.exit(0), 500).unref(); });
