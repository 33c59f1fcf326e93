// A seeded, headless MetaClaw daemon for the dashboard tests. For UI work without the tests, run
// the same: `metaclaw dev seed && metaclaw start`, then `cd ui && npm run dev` (Vite proxies /api).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, run, start, waitForLine, waitHttp } from "./proc.mjs";
import { seedLive, seedOffline } from "./seed.mjs";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const METACLAW_BIN = process.env.METACLAW_BIN || path.join(REPO, "target/debug/metaclaw");
export const MOCK_UPSTREAM_BIN = process.env.MOCK_UPSTREAM_BIN || path.join(REPO, "target/debug/mock-upstream");
export const FAKE_TINKER_BIN = process.env.FAKE_TINKER_BIN || path.join(REPO, "target/debug/fake-tinker");
const PROXY_KEY = "pk";

// Talk to 127.0.0.1 directly, never through a proxy from the environment.
for (const v of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"]) delete process.env[v];
process.env.NO_PROXY = process.env.no_proxy = "127.0.0.1,localhost";

/**
 * Starts mock upstream + seeded daemon. Returns { base, mockBase, loginUrl, home, seeded, log(), stop() }.
 * `stop()` is safe to call more than once and after a failed start.
 *
 * `fresh`: a first run instead: config.yaml names no upstream (only the proxy's port and key),
 * nothing is seeded, and HOME is the temp home, so no installed agent is found.
 */
export async function startDaemon({ fresh = false } = {}) {
  for (const [what, p] of [["METACLAW_BIN", METACLAW_BIN], ["MOCK_UPSTREAM_BIN", MOCK_UPSTREAM_BIN]]) {
    if (!fs.existsSync(p)) throw new Error(`${what} not found at ${p}; build with: cargo build -p metaclaw-cli --bin metaclaw && cargo build -p metaclaw-tests --bin mock-upstream`);
  }
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "metaclaw-ui-e2e-"));
  const procs = [];
  const logFile = path.join(home, "daemon.out");
  /** Stops the processes; removes the temp home unless `keep` (for a failed run's post-mortem). */
  const stop = async ({ keep = false } = {}) => {
    const results = [];
    for (const p of procs.reverse()) results.push(await p.stop());
    procs.length = 0;
    if (!keep && !process.env.E2E_KEEP_HOME) fs.rmSync(home, { recursive: true, force: true });
    return results;
  };
  try {
    const mock = start(MOCK_UPSTREAM_BIN, ["--port", "0"], { pipeStdout: true, logFile: path.join(home, "mock.err") });
    procs.push(mock);
    const [, mockBase] = await waitForLine(mock, /listening on (http:\/\/127\.0\.0\.1:\d+)/);

    const port = await freePort();
    const lines = fresh
      ? [`proxy: {port: ${port}, api_key: ${PROXY_KEY}}`, ""]
      : [
          "mode: skills_only",
          `llm: {provider: custom, model_id: mock-model, api_base: "${mockBase}/v1", api_key: k}`,
          `proxy: {port: ${port}, api_key: ${PROXY_KEY}}`,
          "claw_type: none",
          "skills: {auto_evolve: false}",
          "",
        ];
    fs.writeFileSync(path.join(home, "config.yaml"), lines.join("\n"));
    const env = fresh ? { METACLAW_HOME: home, NO_COLOR: "1", HOME: home } : { METACLAW_HOME: home, NO_COLOR: "1" };
    let seeded = fresh ? "nothing (fresh home)" : await seedOffline({ bin: METACLAW_BIN, env });

    const daemon = start(METACLAW_BIN, ["start", "--foreground"], { env, logFile });
    procs.push(daemon);
    const base = `http://127.0.0.1:${port}`;
    await waitHttp(`${base}/healthz`, { proc: daemon });

    if (!seeded) seeded = await seedLive({ base, proxyKey: PROXY_KEY, mockBase, bin: METACLAW_BIN, env });

    const r = await run(METACLAW_BIN, ["dashboard", "--print-url"], { env });
    const loginUrl = r.stdout.trim().split("\n").pop()?.trim() ?? "";
    if (r.code !== 0 || !/^http:\/\/127\.0\.0\.1:\d+\/login\?code=\S+$/.test(loginUrl)) {
      throw new Error(`metaclaw dashboard --print-url failed (exit ${r.code}): ${JSON.stringify(r.stdout)} ${r.stderr}`);
    }
    return {
      kind: "daemon",
      base,
      mockBase,
      proxyKey: PROXY_KEY,
      loginUrl,
      home,
      seeded,
      log: () => tail(logFile),
      stop,
    };
  } catch (e) {
    e.message += `\n--- daemon log ---\n${tail(logFile)}`;
    await stop();
    throw e;
  }
}

function tail(file, n = 4000) {
  try {
    const s = fs.readFileSync(file, "utf8");
    return s.slice(-n);
  } catch {
    return "";
  }
}
