// The dashboard API client. Every type comes from ./api-types.ts, which is generated from
// docs/openapi.json (itself generated from the Rust types; scripts/gen-api.sh), and every call
// names a route and method of that document, so a change to the API fails the type check here
// instead of at run time. Relative URLs and the same-origin cookie only: the daemon sets an
// HttpOnly `metaclaw_session` cookie at /login?code=…, so the UI never sees a token.

import type { paths } from "./api-types";

export type * from "./api-types";

/** An API error: the HTTP status plus the server's `{error: {code, message, keys}}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Configuration keys the error is about (an invalid value, settings RL still needs). */
    readonly keys: string[] = [],
    /** Per key, what is wrong with it: shown under the field. */
    readonly fields: { key: string; message: string }[] = [],
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

type Method = "get" | "post" | "put" | "patch" | "delete";
type Route = keyof paths;
type Op<P extends Route, M extends Method> = M extends keyof paths[P] ? paths[P][M] : never;
type Output<P extends Route, M extends Method> =
  Op<P, M> extends { responses: { 200: { content: { "application/json": infer T } } } } ? T : never;
type Body<P extends Route, M extends Method> =
  Op<P, M> extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;
type Query<P extends Route, M extends Method> =
  Op<P, M> extends { parameters: { query?: infer Q } } ? (Q extends undefined ? never : Q) : never;
type PathParams<P extends Route, M extends Method> =
  Op<P, M> extends { parameters: { path: infer A } } ? A : never;

interface Args<P extends Route, M extends Method> {
  path?: PathParams<P, M>;
  query?: Query<P, M>;
  body?: Body<P, M>;
}

const enc = encodeURIComponent;

function url(route: string, path?: object, query?: object): string {
  let u = route.replace(/\{(\w+)\}/g, (_, name: string) => enc(String((path as Record<string, unknown>)?.[name] ?? "")));
  const parts = Object.entries(query ?? {})
    .filter(([, v]) => v !== undefined && v !== null && v !== "")
    .map(([k, v]) => `${enc(k)}=${enc(String(v))}`);
  if (parts.length) u += "?" + parts.join("&");
  return u;
}

/** Call one operation of the document: `call("/api/skills/{name}", "get", { path: { name } })`. */
export async function call<P extends Route, M extends Method>(route: P, method: M, args: Args<P, M> = {}): Promise<Output<P, M>> {
  const target = url(route, args.path as object | undefined, args.query as object | undefined);
  const body = args.body === undefined ? undefined : JSON.stringify(args.body);
  let res: Response;
  try {
    res = await fetch(target, {
      method: method.toUpperCase(),
      credentials: "same-origin",
      headers: body === undefined ? { Accept: "application/json" } : { Accept: "application/json", "Content-Type": "application/json" },
      body,
    });
  } catch {
    emitAuth("offline");
    throw new ApiError(0, "offline", "Cannot reach MetaClaw. Is it running? Start it with `metaclaw start` or the desktop app.");
  }
  emitAuth(res.status === 401 ? "unauthorized" : "ok");
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
    const err = (data as { error?: { message?: string; code?: string; keys?: string[]; fields?: { key: string; message: string }[] } } | undefined)?.error;
    throw new ApiError(
      res.status,
      err?.code ?? "http_" + res.status,
      err?.message ?? `${method.toUpperCase()} ${route} failed: HTTP ${res.status}`,
      err?.keys ?? [],
      err?.fields ?? [],
    );
  }
  return data as Output<P, M>;
}

import type { ConfigPatch, EndpointCandidate, Endpoint, ProposalStatus } from "./api-types";

export type Mode = ConfigPatch["mode"] & string;

export const api = {
  status: () => call("/api/status", "get"),
  sessions: (limit = 100, offset = 0, agent?: string) => call("/api/sessions", "get", { query: { limit, offset, agent } }),
  session: (id: string, limit = 200, offset = 0) => call("/api/sessions/{id}", "get", { path: { id }, query: { limit, offset } }),
  feedback: (id: string, rating: 1 | -1, note?: string) =>
    call("/api/turns/{id}/feedback", "post", { path: { id }, body: note ? { rating, note } : { rating } }),
  skills: (q?: string, category?: string, agent?: string) => call("/api/skills", "get", { query: { q, category, agent } }),
  shareSkill: (name: string, agent: string) => call("/api/skills/{name}/share", "post", { path: { name }, body: { agent } }),
  skill: (name: string) => call("/api/skills/{name}", "get", { path: { name } }),
  createSkill: (content: string) => call("/api/skills", "post", { body: { content } }),
  saveSkill: (name: string, content: string) => call("/api/skills/{name}", "put", { path: { name }, body: { content } }),
  deleteSkill: (name: string) => call("/api/skills/{name}", "delete", { path: { name } }),
  skillState: (name: string, state: { enabled?: boolean; pinned?: boolean }) =>
    call("/api/skills/{name}/state", "post", { path: { name }, body: state }),
  history: (name: string) => call("/api/skills/{name}/history", "get", { path: { name } }),
  rollback: (name: string, version: number) => call("/api/skills/{name}/rollback", "post", { path: { name }, body: { version } }),
  library: () => call("/api/library", "get"),
  installBundled: () => call("/api/library/install-bundled", "post"),
  retrieval: (query: string) => call("/api/retrieval", "post", { body: { query } }),
  skillHealth: (idle_days?: number) => call("/api/skill-health", "get", { query: { idle_days } }),
  reviseSkill: (name: string) => call("/api/skills/{name}/revision", "post", { path: { name } }),
  mergeSkills: (keep: string, absorb: string) => call("/api/skills/{name}/merge", "post", { path: { name: keep }, body: { absorb } }),
  proposals: (status?: ProposalStatus | "all", limit = 100, offset = 0, agent?: string) =>
    call("/api/proposals", "get", { query: { status, limit, offset, agent } }),
  shareProposal: (id: number) => call("/api/proposals/{id}/share", "post", { path: { id } }),
  proposal: (id: number) => call("/api/proposals/{id}", "get", { path: { id } }),
  approve: (id: number, content?: string) =>
    call("/api/proposals/{id}/approve", "post", { path: { id }, body: content === undefined ? {} : { content } }),
  reject: (id: number, reason?: string) => call("/api/proposals/{id}/reject", "post", { path: { id }, body: reason ? { reason } : {} }),
  undo: (id: number) => call("/api/proposals/{id}/undo", "post", { path: { id } }),
  bulk: (action: "approve" | "reject", ids: number[], reason?: string) =>
    call("/api/proposals/bulk", "post", { body: reason ? { action, ids, reason } : { action, ids } }),
  distil: (session_id?: string) => call("/api/distil", "post", { body: session_id ? { session_id } : {} }),
  trainingSteps: () => call("/api/training/steps", "get"),
  checkpoints: () => call("/api/training/checkpoints", "get"),
  rl: () => call("/api/rl", "get"),
  job: () => call("/api/rollouts", "get"),
  startRollout: (b: { dir?: string; split?: string; steps?: number; eval?: string; group?: number }) =>
    call("/api/rollouts", "post", {
      body: { dir: b.dir ?? null, split: b.split ?? null, group: b.group ?? null, concurrency: null, max_steps: null, steps: b.steps ?? null, eval: b.eval ?? null, allow_commands: null },
    }),
  startEval: (b: { dir?: string; split?: string; arms: string[] }) =>
    call("/api/evals", "post", { body: { dir: b.dir ?? null, split: b.split ?? null, arms: b.arms, concurrency: null, max_steps: null } }),
  skillsComparison: () => call("/api/evals/skills", "get"),
  startBench: (b: { dir: string; arms: string[]; days?: number; allow_commands?: boolean }) =>
    call("/api/bench", "post", {
      body: { dir: b.dir, arms: b.arms, days: b.days ?? null, max_steps: null, allow_commands: b.allow_commands ?? null, train_every: null },
    }),
  adapters: () => call("/api/adapters", "get"),
  rollbackAdapter: (step: number) => call("/api/adapters/{step}/rollback", "post", { path: { step } }),
  scheduler: () => call("/api/scheduler", "get"),
  config: () => call("/api/config", "get"),
  patchConfig: (patch: ConfigPatch) => call("/api/config", "patch", { body: patch }),
  testConnection: (target: Endpoint) => call("/api/config/test-connection", "post", { body: { target } }),
  settings: () => call("/api/settings", "get"),
  setSetting: (key: string, value: unknown) => call("/api/config", "patch", { body: { set: { [key]: value } } }),
  testTinker: () => call("/api/config/test-tinker", "post"),
  data: () => call("/api/data", "get"),
  exportSessions: (session?: string) => call("/api/data/export", "get", { query: { session } }),
  deleteSession: (id: string) => call("/api/sessions/{id}", "delete", { path: { id } }),
  wiring: () => call("/api/wiring", "get"),
  agents: () => call("/api/wiring/agents", "get"),
  agentList: () => call("/api/agents", "get"),
  wire: () => call("/api/wiring/wire", "post"),
  unwire: () => call("/api/wiring/unwire", "post"),
  presets: () => call("/api/onboarding/presets", "get"),
  candidateModels: (c: EndpointCandidate) => call("/api/onboarding/models", "post", { body: c }),
  testCandidate: (c: EndpointCandidate) => call("/api/onboarding/test", "post", { body: c }),
  saveEndpoint: (c: EndpointCandidate) => call("/api/onboarding/endpoint", "post", { body: c }),
};

export type ChartName = "reward" | "loss" | "success_rate" | "kl" | "prm_distribution" | "turns_per_day";

export function chartUrl(name: ChartName, theme: "light" | "dark", bust?: number, agent?: string): string {
  return url("/api/charts/{name}", { name: `${name}.svg` }, { theme, v: bust || undefined, agent });
}

export function errorMessage(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}
