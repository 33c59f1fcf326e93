// End-to-end test of the desktop app under Xvfb and a private session bus (run by
// scripts/tray-test.sh inside `dbus-run-session`):
//  1. tauri-driver + WebKitWebDriver start the app; the window shows the dashboard (Overview,
//     mode skills_only) and a screenshot is kept;
//  2. the tray menu is driven over D-Bus (the app's StatusNotifierItem + com.canonical.dbusmenu,
//     with gdbus): Mode ▸ rl is refused while OPD has no teacher (a desktop notification says
//     why, seen with dbus-monitor), OPD off, then Mode ▸ rl changes the core's mode (its
//     /api/status, config.yaml, and the dashboard in the window, live);
//  3. closing the window (WM_DELETE_WINDOW) hides it and keeps the app and tray; Open
//     dashboard shows it again;
//  4. a second launch hands over to the first (single instance) and exits 0;
//  5. Quit from the tray ends the app with status 0 and removes daemon.json.
// Plain W3C WebDriver over fetch: no npm dependencies. Only 127.0.0.1; every process started
// here is stopped here.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, readFileSync, existsSync, mkdirSync } from "node:fs";
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

// ---- the app's home: RL settings complete except the OPD teacher (OPD is on) ----
const home = mkdtempSync(join(tmpdir(), "metaclaw-tray-e2e-"));
const port = await freePort();
writeFileSync(
  join(home, "config.yaml"),
  [
    "mode: skills_only",
    "claw_type: none",
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
const env = { ...process.env, METACLAW_HOME: home, METACLAW_LOG: "info", NO_PROXY: "127.0.0.1,localhost" };
for (const k of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"]) delete env[k];

// Desktop notifications are D-Bus calls to org.freedesktop.Notifications: watch for them.
const monitorLog = join(ART, "dbus-notifications.log");
const monitor = spawn(
  "sh",
  ["-c", `exec dbus-monitor --session "type='method_call',interface='org.freedesktop.Notifications'" > '${monitorLog}' 2>&1`],
  { stdio: "ignore" },
);
children.push(monitor);

const driverPort = await freePort();
const nativePort = await freePort();
const driver = spawn(DRIVER, ["--port", String(driverPort), "--native-port", String(nativePort)], {
  env,
  stdio: ["ignore", "inherit", "inherit"],
});
children.push(driver);
const WD = `http://127.0.0.1:${driverPort}`;

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

const api = async (path) => {
  const token = readFileSync(join(home, "dashboard.token"), "utf8").trim();
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`${path}: ${res.status}`);
  return res.json();
};

// Sends WM_DELETE_WINDOW (there is no window manager under Xvfb to do it).
const CLOSE_WINDOW = new URL("./close-window.py", import.meta.url).pathname;

// "IsViewable" or "IsUnMapped", from xwininfo.
function mapState(win) {
  const out = execFileSync("xwininfo", ["-id", win], { encoding: "utf8" });
  return out.match(/Map State: (\w+)/)?.[1];
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
  await until("tauri-driver", async () => (await fetch(`${WD}/status`)).ok, 10000);
  let t = Date.now();
  session = (await wd("POST", "/session", { capabilities: { alwaysMatch: { "tauri:options": { application: APP } } } })).sessionId;
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

  // Closing the window (what a window manager's close button sends) hides it: the app, its
  // core and the tray keep running, and Open dashboard shows the same window again.
  const state = JSON.parse(readFileSync(join(home, "daemon.json"), "utf8"));
  const win = execFileSync("python3", [CLOSE_WINDOW, "MetaClaw"], { encoding: "utf8" }).trim().split(" ")[0];
  await until("the window to be hidden", async () => mapState(win) === "IsUnMapped", 5000);
  await sleep(500);
  process.kill(state.pid, 0);
  if ((await api("/api/status")).mode !== "rl") throw new Error("the core stopped answering after the window closed");
  if (!findTray()) throw new Error("the tray went away with the window");
  click(tray, "Open dashboard");
  await until("the window to be shown again", async () => mapState(win) === "IsViewable", 5000);
  await until("the dashboard in the reopened window", async () => {
    const el = Object.values(await wd("POST", `/session/${session}/element`, { using: "css selector", value: "[data-testid=overview-mode]" }))[0];
    return (await wd("GET", `/session/${session}/element/${el}/attribute/data-mode`)) === "rl";
  }, 10000);
  log(`closing the window (${win}) hid it; the app and tray kept running; Open dashboard showed it again`);

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
  click(tray, "Quit");
  await until("the app to exit", async () => {
    try {
      process.kill(state.pid, 0);
      return false;
    } catch {
      return true;
    }
  }, 15000);
  if (existsSync(join(home, "daemon.json"))) throw new Error("daemon.json left behind after Quit");
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
  for (const c of children.reverse()) c.kill("SIGTERM");
  await sleep(300);
}
process.exit(failed ? 1 : 0);
