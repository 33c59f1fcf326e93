// The dashboard API client (docs/api.md). Relative URLs and the same-origin cookie only: the
// daemon sets an HttpOnly `metaclaw_session` cookie at /login?code=…, so the UI never sees a token.

export type Mode = "skills_only" | "rl" | "auto";

export interface Status {
  version: string;
  pid: number;
  uptime_s: number;
  mode: Mode | string;
  opd_enabled: boolean;
  rl_enabled: boolean;
  learning_paused: boolean;
  upstream: { url: string; reachable: boolean | null; detail?: string | null };
  counts: { sessions: number; turns: number; turns_today: number; skills: number; pending_proposals: number };
  training: { running: boolean; step: number | null; progress: number | null; message?: string | null };
  scheduler: { enabled: boolean; state: string | null; source?: string | null; next_window?: Window | string | null };
  last_evolution_failure: unknown;
}

export interface Window {
  start: string;
  end: string;
  source?: string;
}

export interface Session {
  id: string;
  source: string;
  started_at: string;
  last_seen_at: string;
  ended_at: string | null;
  end_reason: string | null;
  turn_count: number;
}

export interface Injected {
  name: string;
  version?: string | number | null;
  score?: number | null;
}

export interface Feedback {
  rating: number;
  note?: string | null;
}

export interface Turn {
  id: string;
  seq: number;
  turn_type: string;
  api: string;
  model: string;
  status: string;
  error: string | null;
  started_at: string;
  latency_ms: number | null;
  user_text: string | null;
  assistant_text: string | null;
  injected: Injected[];
  feedback: Feedback | null;
  skill_generation: number | null;
}

export interface SessionDetail {
  session: Session;
  turns: Turn[];
}

export interface Skill {
  name: string;
  description: string;
  category: string;
  version: string | number;
  source: "user" | "bundled" | string;
  path: string;
  enabled: boolean;
  pinned: boolean;
  injected: number;
  thumbs_up: number;
  thumbs_down: number;
}

export interface Problem {
  level: string;
  message: string;
}

export interface SkillDetail {
  skill: Skill;
  content: string;
  problems: Problem[];
}

export interface VersionRow {
  skill_name: string;
  version: number;
  content: string;
  author: string;
  action: string;
  proposal_id: number | null;
  generation: number | null;
  created_at: string;
}

export interface Candidate {
  name: string;
  category: string;
  version: string | number;
  score: number;
  injected: boolean;
  reason: string;
}

export interface Retrieval {
  query: string;
  mode: string;
  candidates: Candidate[];
}

export interface Proposal {
  id: number;
  kind: "new" | "update" | string;
  skill_name: string;
  content: string;
  base_content: string | null;
  diff: string | null;
  reason: string;
  session_id: string | null;
  turn_ids: string[];
  signals: unknown;
  evolver_model: string;
  status: string;
  reject_reason: string | null;
  created_at: string;
  decided_at: string | null;
}

export interface BulkResult {
  results: { id: number; ok: boolean; error?: string | null }[];
}

export interface DistilResult {
  session_id: string | null;
  status: string;
  proposals: unknown;
  dropped: unknown;
  signals: unknown;
  error: string | null;
}

export interface TrainingStep {
  step: number;
  started_at: string;
  finished_at: string | null;
  status: string;
  loss: number | null;
  mean_reward: number | null;
  success_rate: number | null;
  tokens: number | null;
  kl: number | null;
  duration_s: number | null;
  checkpoint: string | null;
}

export interface Checkpoint {
  name: string;
  step: number;
  created_at: string;
}

export interface TimelineEntry {
  start: string;
  end: string;
  kind: string;
}

export interface Scheduler {
  enabled: boolean;
  state: string | null;
  source: string | null;
  sources: {
    sleep?: { start: string; end: string } | null;
    idle?: { threshold_minutes: number; available: boolean | null } | null;
    calendar?: { paths: string[]; urls: string[] } | null;
  };
  next_window: Window | null;
  timeline: TimelineEntry[];
}

// The effective config (masked). Only the keys the UI reads are typed.
export interface Config {
  mode?: string;
  llm?: { provider?: string; api_base?: string; model_id?: string; api_key?: string };
  rl?: { enabled?: boolean; evolver_api_base?: string; evolver_model?: string };
  opd?: { enabled?: boolean };
  skills?: { dir?: string; retrieval_mode?: string; embedding?: { api_base?: string; model?: string } };
  proxy?: { host?: string; port?: number };
  [key: string]: unknown;
}

export interface ConfigPatch {
  mode?: Mode;
  opd_enabled?: boolean;
  rl_enabled?: boolean;
  learning_paused?: boolean;
  llm?: { api_base?: string; model_id?: string; api_key?: string };
}

export interface ConfigPatchResult {
  config: Config;
  restart_required: boolean;
}

export interface ConnectionTest {
  ok: boolean;
  detail: string;
  latency_ms: number | null;
}

export type ChartName = "reward" | "loss" | "success_rate" | "kl" | "prm_distribution" | "turns_per_day";

/** An API error: the HTTP status plus the server's `{error: {message, code}}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

type AuthListener = (state: "ok" | "unauthorized" | "offline") => void;
const authListeners = new Set<AuthListener>();

/** Called with "unauthorized" on any 401, "offline" when the daemon does not answer. */
export function onAuthState(fn: AuthListener): () => void {
  authListeners.add(fn);
  return () => authListeners.delete(fn);
}

function emitAuth(state: "ok" | "unauthorized" | "offline") {
  for (const fn of authListeners) fn(state);
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: body === undefined ? { Accept: "application/json" } : { Accept: "application/json", "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    emitAuth("offline");
    throw new ApiError(0, "offline", "Cannot reach the MetaClaw daemon. Is it running? Start it with `metaclaw start`.");
  }
  if (res.status === 401) {
    emitAuth("unauthorized");
  } else {
    emitAuth("ok");
  }
  const text = await res.text();
  let data: unknown = undefined;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = undefined;
    }
  }
  if (!res.ok) {
    const err = (data as { error?: { message?: string; code?: string } } | undefined)?.error;
    throw new ApiError(res.status, err?.code ?? "http_" + res.status, err?.message ?? `${method} ${path} failed: HTTP ${res.status}`);
  }
  return data as T;
}

const enc = encodeURIComponent;

function query(params: Record<string, string | number | undefined | null>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== "")
    .map(([k, v]) => `${enc(k)}=${enc(String(v))}`);
  return parts.length ? "?" + parts.join("&") : "";
}

export const api = {
  status: () => request<Status>("GET", "/api/status"),
  sessions: (limit = 100) => request<Session[]>("GET", "/api/sessions" + query({ limit })),
  session: (id: string) => request<SessionDetail>("GET", `/api/sessions/${enc(id)}`),
  feedback: (turnId: string, rating: 1 | -1, note?: string) =>
    request<{ ok: boolean }>("POST", `/api/turns/${enc(turnId)}/feedback`, note ? { rating, note } : { rating }),
  skills: (q?: string, category?: string) => request<Skill[]>("GET", "/api/skills" + query({ q, category })),
  skill: (name: string) => request<SkillDetail>("GET", `/api/skills/${enc(name)}`),
  createSkill: (content: string) => request<VersionRow>("POST", "/api/skills", { content }),
  saveSkill: (name: string, content: string) => request<VersionRow>("PUT", `/api/skills/${enc(name)}`, { content }),
  deleteSkill: (name: string) => request<VersionRow>("DELETE", `/api/skills/${enc(name)}`),
  skillState: (name: string, state: { enabled?: boolean; pinned?: boolean }) =>
    request<{ ok: boolean }>("POST", `/api/skills/${enc(name)}/state`, state),
  history: (name: string) => request<VersionRow[]>("GET", `/api/skills/${enc(name)}/history`),
  rollback: (name: string, version: number) => request<VersionRow>("POST", `/api/skills/${enc(name)}/rollback`, { version }),
  retrieval: (q: string) => request<Retrieval>("POST", "/api/retrieval", { query: q }),
  proposals: (status?: string) => request<Proposal[]>("GET", "/api/proposals" + query({ status })),
  proposal: (id: number) => request<Proposal>("GET", `/api/proposals/${id}`),
  approve: (id: number, content?: string) =>
    request<VersionRow>("POST", `/api/proposals/${id}/approve`, content === undefined ? {} : { content }),
  reject: (id: number, reason?: string) => request<{ ok: boolean }>("POST", `/api/proposals/${id}/reject`, reason ? { reason } : {}),
  undo: (id: number) => request<VersionRow>("POST", `/api/proposals/${id}/undo`, {}),
  bulk: (action: "approve" | "reject", ids: number[], reason?: string) =>
    request<BulkResult>("POST", "/api/proposals/bulk", reason ? { action, ids, reason } : { action, ids }),
  distil: (sessionId?: string) => request<DistilResult>("POST", "/api/distil", sessionId ? { session_id: sessionId } : {}),
  trainingSteps: () => request<TrainingStep[]>("GET", "/api/training/steps"),
  checkpoints: () => request<Checkpoint[]>("GET", "/api/training/checkpoints"),
  scheduler: () => request<Scheduler>("GET", "/api/scheduler"),
  config: () => request<Config>("GET", "/api/config"),
  patchConfig: (patch: ConfigPatch) => request<ConfigPatchResult>("PATCH", "/api/config", patch),
  testConnection: (target: "llm" | "evolver" | "embedding") =>
    request<ConnectionTest>("POST", "/api/config/test-connection", { target }),
};

export function chartUrl(name: ChartName, theme: "light" | "dark", bust?: number): string {
  return `/api/charts/${name}.svg` + query({ theme, v: bust || undefined });
}

export function errorMessage(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}
