// End-to-end test of the desktop app under Xvfb and a private session bus (run by
// scripts/tray-test.sh inside `dbus-run-session`):
//  1. first launch on a fresh home (no LLM configured): the window opens on onboarding
//     (#/welcome); closing it destroys the webview (the WebKit web process exits) while the app
//     and tray keep running; "Enable RL" with no RL settings opens a new window on Settings'
//     RL section (#/settings/rl);
//  2. on a configured home, tauri-driver + WebKitWebDriver start the app; the window shows the
//     dashboard (Overview, mode skills_only) and a screenshot is kept;
//  3. the tray menu is driven over D-Bus (the app's StatusNotifierItem + com.canonical.dbusmenu,
//     with gdbus): Mode ▸ rl is refused while OPD has no teacher (a desktop notification says
//     why, seen with dbus-monitor), OPD off, then Mode ▸ rl changes the core's mode (its
//     /api/status, config.yaml, and the dashboard in the window, live);
//  4. closing the window (WM_DELETE_WINDOW) destroys it and its web process; the app, core and
//     tray keep running; Open dashboard builds a new window on the dashboard;
//  5. a second launch hands over to the first (single instance) and exits 0;
//  6. Quit from the tray ends the app with status 0 and removes daemon.json.
// Plain W3C WebDriver over fetch: no npm dependencies. Only 127.0.0.1; every process started
// here is stopped here.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, readFileSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const APP = process.env.TRAY_APP;
const DRIVER = process.env.TAURI_DRIVER || "tauri-driver";
const ART = process.env.ARTIFACTS || "target/ci-artifacts/tray";
if (!APP || !existsSync(APP)) throw new Error(`TRAY_APP not found: ${APP}`);
mkdirSync(ART, { recursive: true });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const children = [];
const t0 = Date.now();
const log = (msg) => console.log(`[tray-e2e +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}`);

async function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function until(what, fn, timeoutMs = 20000) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ""}`);
}

// ---- the configured home: RL settings complete except the OPD teacher (OPD is on) ----
const home = mkdtempSync(join(tmpdir(), "metaclaw-tray-e2e-"));
const port = await freePort();
writeFileSync(
  join(home, "config.yaml"),
  [
    "mode: skills_only",
    "claw_type: none",
    // An upstream (a closed local port: never reached), so no onboarding.
    "llm:",
    "  api_base: http://127.0.0.1:9/v1",
    "proxy:",
    "  host: 127.0.0.1",
    `  port: ${port}`,
    "rl:",
    "  model: Qwen/Qwen3-4B",
    "  api_key: tk-e2e",
    "  prm_api_key: sk-e2e",
    // Nothing may leave the machine: a closed local port, a tokenizer path that does not exist.
    "  base_url: http://127.0.0.1:9",
    "  tokenizer_path: /nonexistent/tokenizer.json",
    "opd:",
    "  enabled: true",
    "",
  ].join("\n"),
);
// ---- a fresh home: no LLM configured (a first run), no RL settings ----
const fresh = mkdtempSync(join(tmpdir(), "metaclaw-tray-e2e-fresh-"));
const freshPort = await freePort();
writeFileSync(join(fresh, "config.yaml"), `claw_type: none\nproxy:\n  host: 127.0.0.1\n  port: ${freshPort}\n`);

function envFor(h) {
  const e = { ...process.env, METACLAW_HOME: h, METACLAW_LOG: "info", NO_PROXY: "127.0.0.1,localhost" };
  for (const k of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"]) delete e[k];
  return e;
}
const env = envFor(home);

// Desktop notifications are D-Bus calls to org.freedesktop.Notifications: watch for them.
const monitorLog = join(ART, "dbus-notifications.log");
const monitor = spawn(
  "sh",
  ["-c", `exec dbus-monitor --session "type='method_call',interface='org.freedesktop.Notifications'" > '${monitorLog}' 2>&1`],
  { stdio: "ignore" },
);
children.push(monitor);

// tauri-driver passes its environment to the app, so each home gets its own driver. In its own
// process group: stopping it also stops its WebKitWebDriver child.
let WD;
let driver;
async function startDriver(driverEnv) {
  const driverPort = await freePort();
  const nativePort = await freePort();
  driver = spawn(DRIVER, ["--port", String(driverPort), "--native-port", String(nativePort)], {
    env: driverEnv,
    stdio: ["ignore", "inherit", "inherit"],
    detached: true,
  });
  WD = `http://127.0.0.1:${driverPort}`;
  await until("tauri-driver", async () => (await fetch(`${WD}/status`)).ok, 10000);
}
function stopDriver() {
  if (!driver) return;
  try {
    process.kill(-driver.pid, "SIGTERM");
  } catch {
    // already gone
  }
  driver = undefined;
}

async function wd(method, path, body) {
  const res = await fetch(WD + path, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json.value)}`);
  return json.value;
}

const apiOf = (h, p) => async (path) => {
  const token = readFileSync(join(h, "dashboard.token"), "utf8").trim();
  const res = await fetch(`http://127.0.0.1:${p}${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return res.json();
};
const api = apiOf(home, port);

const pidOf = (h) => JSON.parse(readFileSync(join(h, "daemon.json"), "utf8")).pid;
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// Sends WM_DELETE_WINDOW (there is no window manager under Xvfb to do it).
const CLOSE_WINDOW = new URL("./close-window.py", import.meta.url).pathname;

function windowExists() {
  try {
    execFileSync("xwininfo", ["-name", "MetaClaw"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

// The WebKit web processes under a pid (WebKit may start them through bwrap).
function webProcesses(root) {
  const kids = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!kids.has(ppid)) kids.set(ppid, []);
      kids.get(ppid).push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  const found = [];
  const todo = [root];
  while (todo.length) {
    for (const c of kids.get(todo.pop()) || []) {
      todo.push(c);
      try {
        const argv0 = readFileSync(`/proc/${c}/cmdline`, "utf8").split("\0")[0];
        if (argv0.split("/").pop().startsWith("WebKitWebProcess")) found.push(c);
      } catch {
        // exited meanwhile
      }
    }
  }
  return found;
}

// Closing the window destroys it and its webview: the X window goes, the WebKit web process
// exits, and the app with its core and tray keeps running.
async function closeWindowFreesWebview(pid, apiCall) {
  const before = webProcesses(pid);
  if (!before.length) throw new Error("no WebKit web process under the app while its window is open");
  execFileSync("python3", [CLOSE_WINDOW, "MetaClaw"], { encoding: "utf8" });
  await until("the window to be destroyed", async () => !windowExists(), 5000);
  await until(`the WebKit web process (${before.join(", ")}) to exit`, async () => webProcesses(pid).length === 0, 15000);
  if (!alive(pid)) throw new Error("the app exited with its window");
  await apiCall("/api/status");
  log(`closing the window destroyed it; WebKit web process ${before.join(", ")} exited; app ${pid} runs on`);
}

// The current URL once it satisfies `ok`.
async function windowUrl(session, what, ok, timeoutMs = 20000) {
  return until(what, async () => {
    const url = await wd("GET", `/session/${session}/url`);
    return ok(url) && url;
  }, timeoutMs);
}

// A window built again after a close: a new X window and a new WebKit web process. WebDriver
// cannot look inside it: wry hands WebKit's automation session only the first webview it
// built, so the page a reopened window shows is checked by the mock-runtime tests.
async function reopened(pid, what) {
  await until(`${what}: a new window`, async () => windowExists(), 10000);
  const web = await until(`${what}: a new WebKit web process`, async () => {
    const w = webProcesses(pid);
    return w.length && w;
  }, 10000);
  log(`${what}: a new window with WebKit web process ${web.join(", ")}`);
}

async function newSession() {
  return (await wd("POST", "/session", { capabilities: { alwaysMatch: { "tauri:options": { application: APP } } } })).sessionId;
}

async function quitFromTray(tray, h) {
  const pid = pidOf(h);
  click(tray, "Quit");
  await until("the app to exit", async () => !alive(pid), 15000);
  if (existsSync(join(h, "daemon.json"))) throw new Error("daemon.json left behind after Quit");
}

function gdbus(...args) {
  return execFileSync("gdbus", ["call", "--session", ...args], { encoding: "utf8" });
}

// The tray's StatusNotifierItem lives at /org/ayatana/NotificationItem/<id> on the app's
// connection; its menu is <path>/Menu (com.canonical.dbusmenu).
function findTray() {
  const names = gdbus("--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.ListNames");
  for (const name of names.match(/:\d+\.\d+/g) || []) {
    try {
      const xml = gdbus("--dest", name, "--object-path", "/org/ayatana/NotificationItem", "--method", "org.freedesktop.DBus.Introspectable.Introspect");
      const node = xml.match(/<node name=\\?"([^"\\]+)\\?"/);
      if (node) return { owner: name, path: `/org/ayatana/NotificationItem/${node[1]}` };
    } catch {
      // not this connection
    }
  }
  return null;
}

function menuLayout(tray) {
  const out = gdbus("--dest", tray.owner, "--object-path", `${tray.path}/Menu`, "--method", "com.canonical.dbusmenu.GetLayout", "--", "0", "-1", "[]");
  const items = new Map();
  // Each item prints as "(<id>, {... 'label': <'text'> ...}"; labels carry GTK mnemonics.
  for (const m of out.matchAll(/\((\d+), \{([^}]*)\}/g)) {
    const label = m[2].match(/'label': <'([^']*)'>/);
    if (label) items.set(label[1].replace(/__/g, "\u0000").replace(/_/g, "").replace(/\u0000/g, "_"), { id: Number(m[1]), props: m[2] });
  }
  return items;
}

function click(tray, label) {
  const item = menuLayout(tray).get(label);
  if (!item) throw new Error(`no tray menu item "${label}" in ${[...menuLayout(tray).keys()].join(" | ")}`);
  gdbus("--dest", tray.owner, "--object-path", `${tray.path}/Menu`, "--method", "com.canonical.dbusmenu.Event", "--", String(item.id), "clicked", "<0>", "0");
  log(`clicked tray item "${label}" (id ${item.id})`);
}

let session;
let failed = false;
const timings = {};
try {
  // 1. First launch on a fresh home: the window opens on onboarding.
  await startDriver(envFor(fresh));
  let t = Date.now();
  session = await newSession();
  const freshApi = apiOf(fresh, freshPort);
  const welcome = await windowUrl(session, "the onboarding page", (u) => u.endsWith("#/welcome"));
  timings.first_launch_onboarding_s = (Date.now() - t) / 1000;
  if (!welcome.startsWith(`http://127.0.0.1:${freshPort}/`)) throw new Error(`window shows ${welcome}`);
  if (!(await freshApi("/api/status")).needs_onboarding) throw new Error("a fresh home does not need onboarding");
  log(`first launch: the window opened on ${welcome}`);
  const freshTray = await until("the tray's StatusNotifierItem", async () => findTray());
  t = Date.now();
  await closeWindowFreesWebview(pidOf(fresh), freshApi);
  timings.close_frees_webview_s = (Date.now() - t) / 1000;
  // Enable RL with no RL settings: refused by the core, which names what is missing; the tray
  // opens a new window on Settings' RL section.
  click(freshTray, "Enable RL");
  await until("a notification that RL cannot start", async () => readFileSync(monitorLog, "utf8").includes("RL cannot start yet"), 5000);
  t = Date.now();
  await reopened(pidOf(fresh), "Enable RL without RL settings");
  timings.reopen_s = (Date.now() - t) / 1000;
  if ((await freshApi("/api/status")).rl_enabled) throw new Error("RL turned on with no RL settings");
  await quitFromTray(freshTray, fresh);
  await wd("DELETE", `/session/${session}`).catch(() => {});
  session = undefined;
  stopDriver();
  log("first-run home: Quit ended the app");

  // 2. The configured home.
  await startDriver(env);
  t = Date.now();
  session = await newSession();
  timings.session_s = (Date.now() - t) / 1000;
  log(`WebDriver session ${session}`);

  // 1. The window renders the dashboard.
  t = Date.now();
  const modeEl = await until("the dashboard's Overview", async () => {
    const el = await wd("POST", `/session/${session}/element`, { using: "css selector", value: "[data-testid=overview-mode]" });
    return Object.values(el)[0];
  });
  const mode0 = await wd("GET", `/session/${session}/element/${modeEl}/attribute/data-mode`);
  if (mode0 !== "skills_only") throw new Error(`dashboard shows mode ${mode0}`);
  timings.dashboard_s = (Date.now() - t) / 1000;
  const url = await wd("GET", `/session/${session}/url`);
  if (!url.startsWith(`http://127.0.0.1:${port}/`)) throw new Error(`window shows ${url}`);
  log(`dashboard rendered at ${url} (mode ${mode0})`);

  // 2. The tray over D-Bus.
  const tray = await until("the tray's StatusNotifierItem", async () => findTray());
  log(`tray at ${tray.owner} ${tray.path}`);
  const labels = [...menuLayout(tray).keys()];
  for (const want of ["Open dashboard", "Mode", "skills_only", "rl", "auto", "Enable RL", "OPD", "Pause learning", "Pending skills (0)", "Start at login", "Quit"]) {
    if (!labels.includes(want)) throw new Error(`tray menu lacks "${want}": ${labels.join(" | ")}`);
  }

  click(tray, "rl");
  await sleep(700);
  let status = await api("/api/status");
  if (status.mode !== "skills_only") throw new Error(`mode changed to ${status.mode} although OPD has no teacher`);
  await until("a notification explaining what RL misses", async () => readFileSync(monitorLog, "utf8").includes("opd.teacher_url"), 5000);
  log("Mode ▸ rl refused, and a notification named opd.teacher_url");

  click(tray, "OPD");
  await until("OPD off", async () => (await api("/api/status")).opd_enabled === false, 5000);
  t = Date.now();
  click(tray, "rl");
  status = await until("mode rl", async () => {
    const s = await api("/api/status");
    return s.mode === "rl" && s;
  }, 5000);
  timings.mode_toggle_s = (Date.now() - t) / 1000;
  if (!readFileSync(join(home, "config.yaml"), "utf8").includes("mode: rl")) throw new Error("config.yaml keeps the old mode");
  if (!menuLayout(tray).get("rl").props.includes("'toggle-state': <1>")) throw new Error("the rl radio item is not checked");
  log("Mode ▸ rl: the core's mode is rl (API, config.yaml, menu)");

  // The dashboard follows live (its event stream reports the config change).
  await until("the dashboard to show mode rl", async () => {
    const el = Object.values(await wd("POST", `/session/${session}/element`, { using: "css selector", value: "[data-testid=overview-mode]" }))[0];
    return (await wd("GET", `/session/${session}/element/${el}/attribute/data-mode`)) === "rl";
  }, 10000);
  await wd("POST", `/session/${session}/execute/async`, {
    script: "const done = arguments[arguments.length - 1]; requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 300)));",
    args: [],
  });
  const png = await wd("GET", `/session/${session}/screenshot`);
  writeFileSync(join(ART, "tray-dashboard.png"), Buffer.from(png, "base64"));
  log(`screenshot ${join(ART, "tray-dashboard.png")}`);

  // Closing the window (what a window manager's close button sends) destroys it and its
  // webview: the app, its core and the tray keep running, and Open dashboard builds a new one.
  const state = JSON.parse(readFileSync(join(home, "daemon.json"), "utf8"));
  await closeWindowFreesWebview(state.pid, api);
  if ((await api("/api/status")).mode !== "rl") throw new Error("the core lost its mode after the window closed");
  if (!findTray()) throw new Error("the tray went away with the window");
  click(tray, "Open dashboard");
  await reopened(state.pid, "Open dashboard");
  // And closing that one frees its webview too.
  await closeWindowFreesWebview(state.pid, api);
  click(tray, "Open dashboard");
  await reopened(state.pid, "Open dashboard again");


  // A second launch on the same home hands over to the running app (single instance over
  // D-Bus) and exits 0; the first keeps running.
  t = Date.now();
  execFileSync(APP, [], { env, timeout: 20000, stdio: ["ignore", "ignore", "pipe"] });
  timings.second_launch_s = (Date.now() - t) / 1000;
  process.kill(state.pid, 0);
  if ((await api("/api/status")).pid !== state.pid) throw new Error("a second app took over");
  log("second launch handed over to the running app and exited 0");

  // Quit from the tray.
  if (state.kind !== "tray" || state.port !== port) throw new Error(`daemon.json: ${JSON.stringify(state)}`);
  await quitFromTray(tray, home);
  log("Quit: the app exited and removed daemon.json");
  console.log(`tray-e2e timings: ${JSON.stringify(timings)}`);
  console.log("tray-e2e: PASS");
} catch (e) {
  failed = true;
  console.error(`tray-e2e: FAIL: ${e.stack || e}`);
  if (session) {
    try {
      const png = await wd("GET", `/session/${session}/screenshot`);
      writeFileSync(join(ART, "tray-failure.png"), Buffer.from(png, "base64"));
    } catch {
      // the app may be gone
    }
  }
} finally {
  // tauri-driver allows one session: always end it (it stops the app if still running).
  if (session) await wd("DELETE", `/session/${session}`).catch(() => {});
  stopDriver();
  for (const c of children.reverse()) c.kill("SIGTERM");
  await sleep(300);
  // The two homes go with a passing run; a failing one keeps them to look into.
  if (failed) console.error(`tray-e2e: homes kept: ${home} ${fresh}`);
  else for (const h of [home, fresh]) rmSync(h, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
