// Child processes that are always stopped: SIGTERM, wait for exit, SIGKILL after a grace period.
import { spawn } from "node:child_process";
import net from "node:net";
import fs from "node:fs";

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Spawns a long-running process; stdout/stderr go to `logFile` unless `pipeStdout`. */
export function start(cmd, args, { env, logFile, pipeStdout = false, cwd } = {}) {
  const log = logFile ? fs.openSync(logFile, "a") : "ignore";
  const child = spawn(cmd, args, {
    env: { ...process.env, ...env },
    cwd,
    stdio: ["ignore", pipeStdout ? "pipe" : log, log],
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  child.once("error", () => {});
  let exitInfo = null;
  exited.then((e) => {
    exitInfo = e;
    if (typeof log === "number") fs.closeSync(log);
  });
  return {
    child,
    exited,
    get exitInfo() {
      return exitInfo;
    },
    /** SIGTERM and wait; SIGKILL after `graceMs`. Resolves to how it ended. */
    async stop(graceMs = 5000) {
      if (exitInfo) return { ...exitInfo, forced: false };
      child.kill("SIGTERM");
      let timer;
      const forced = await Promise.race([
        exited.then(() => false),
        new Promise((r) => (timer = setTimeout(() => r(true), graceMs))),
      ]);
      clearTimeout(timer);
      if (forced) {
        child.kill("SIGKILL");
        await exited;
      }
      return { ...exitInfo, forced };
    },
  };
}

/** Reads stdout until a line matches `re`; returns the match. */
export function waitForLine(proc, re, timeoutMs = 10_000) {
  return new Promise((resolve, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${re} (got ${JSON.stringify(buf.slice(-300))})`)), timeoutMs);
    const onData = (d) => {
      buf += d.toString();
      const m = re.exec(buf);
      if (m) {
        clearTimeout(timer);
        proc.child.stdout.off("data", onData);
        proc.child.stdout.resume(); // keep draining so the child never blocks on a full pipe
        resolve(m);
      }
    };
    proc.child.stdout.on("data", onData);
    proc.exited.then((e) => {
      clearTimeout(timer);
      reject(new Error(`process exited (${JSON.stringify(e)}) before printing ${re}: ${buf.slice(-500)}`));
    });
  });
}

/** Runs a command to completion. */
export function run(cmd, args, { env, timeoutMs = 30_000, cwd } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: -1, stdout, stderr: stderr + String(e) });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export async function waitHttp(url, { timeoutMs = 15_000, ok = (r) => r.ok, proc } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    if (proc?.exitInfo) throw new Error(`process exited ${JSON.stringify(proc.exitInfo)} while waiting for ${url}`);
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(1000) });
      if (ok(r)) return r;
      last = `HTTP ${r.status}`;
    } catch (e) {
      last = String(e.cause?.code ?? e);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms (last: ${last})`);
}
