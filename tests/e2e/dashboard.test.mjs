// Dashboard end-to-end tests: a seeded headless daemon + Debian chromium (playwright-core).
//
//   scripts/ui-e2e.sh                      # what CI runs
//   cd tests/e2e && npm ci && npm test     # the same, by hand
//
// Env: METACLAW_BIN, MOCK_UPSTREAM_BIN (default <repo>/target/debug/...), SCREENSHOT_DIR (default
// <repo>/target/ui-screenshots), CHROMIUM_PATH (default /usr/bin/chromium).
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import fs from "node:fs";
import { FAKE_TINKER_BIN, METACLAW_BIN, REPO, startDaemon } from "./lib/daemon.mjs";
import { freePort, run, start, waitForLine } from "./lib/proc.mjs";
import { launch, screenshot, settle } from "./lib/browser.mjs";
import { SEEDED_PROPOSAL } from "./lib/seed.mjs";

const SHOTS = process.env.SCREENSHOT_DIR || path.join(REPO, "target", "ui-screenshots");
const TIMEOUT = 8000;

let target;
let browser;
let context;
let page;
const apiLog = []; // every /api response with status >= 400: method, url, request body, status, response body
const pageErrors = [];
let failed = false;
const consoleErrors = [];

function watch(p) {
  p.on("pageerror", (e) => pageErrors.push(String(e)));
  p.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text());
  });
  p.on("response", async (r) => {
    const u = new URL(r.url());
    if (!u.pathname.startsWith("/api/") || r.status() < 400) return;
    let body = "";
    try {
      body = await r.text();
    } catch {
      /* body gone */
    }
    apiLog.push(`${r.request().method()} ${u.pathname}${u.search} ${r.request().postData() ?? ""} -> ${r.status()} ${body.slice(0, 500)}`);
  });
}

/** A test whose failure message includes the API errors seen while it ran. */
function scenario(name, fn) {
  it(name, async (t) => {
    const mark = apiLog.length;
    try {
      await fn(t);
    } catch (e) {
      failed = true;
      const api = apiLog.slice(mark);
      if (api.length) e.message += `\n--- API errors during this test ---\n${api.join("\n")}`;
      if (pageErrors.length) e.message += `\n--- page errors ---\n${pageErrors.join("\n")}`;
      throw e;
    }
  });
}

const tid = (id) => `[data-testid="${id}"]`;

async function go(pageName) {
  await page.locator(tid(`nav-${pageName}`)).click();
  await page.locator(tid(`page-${pageName}`)).waitFor();
}

/** Polls until the locator's text matches (Playwright's `expect` is not part of playwright-core). */
async function expectText(locator, re, timeout = TIMEOUT) {
  const deadline = Date.now() + timeout;
  let last = "";
  while (Date.now() < deadline) {
    try {
      last = (await locator.textContent({ timeout: 500 })) ?? "";
      if (re.test(last)) return last;
    } catch {
      /* not there yet */
    }
    await page.waitForTimeout(50);
  }
  assert.fail(`expected ${locator} to match ${re}, last text: ${JSON.stringify(last)}`);
}

async function expectValue(locator, re, timeout = TIMEOUT) {
  const deadline = Date.now() + timeout;
  let last = "";
  while (Date.now() < deadline) {
    last = await locator.inputValue().catch(() => "");
    if (re.test(last)) return last;
    await page.waitForTimeout(50);
  }
  assert.fail(`expected ${locator} value to match ${re}, last: ${JSON.stringify(last.slice(0, 300))}`);
}

describe("dashboard", { timeout: 90_000 }, () => {
  before(async () => {
    target = await startDaemon();
    console.log(`# target: ${target.kind} at ${target.base} (seeded by ${target.seeded})`);
    browser = await launch();
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: "light", reducedMotion: "reduce" });
    context.setDefaultTimeout(TIMEOUT);
    page = await context.newPage();
    watch(page);
    await page.goto(target.loginUrl);
    await page.locator(tid("page-overview")).waitFor();
  });

  after(async () => {
    // Browser first: its open EventSource must not hold the daemon's shutdown.
    await browser?.close().catch(() => {});
    if (failed && target?.home) console.log(`# daemon home kept for inspection: ${target.home}\n# daemon log tail:\n${target.log().replace(/^/gm, "# ")}`);
    const stopped = (await target?.stop({ keep: failed })) ?? [];
    for (const s of stopped) {
      if (s?.forced) console.log(`# warning: a process ignored SIGTERM for 5 s and was killed: ${JSON.stringify(s)}`);
    }
    if (consoleErrors.length) console.log(`# browser console errors:\n# ${consoleErrors.join("\n# ")}`);
  });

  scenario("logging in lands on the overview with live updates", async () => {
    await expectText(page.locator(tid("overview-mode")), /Skills only/);
    await page.locator(tid("live-state") + '[data-state="live"]').waitFor();
    await screenshot(page, SHOTS, "overview");
  });

  scenario("approve the pending skill and see it in Skills", async () => {
    await go("inbox");
    const card = page.locator(tid(`proposal-${SEEDED_PROPOSAL}`));
    await card.waitFor();
    // Provenance and the proposed text are shown before deciding.
    await expectText(card.locator(tid(`provenance-${SEEDED_PROPOSAL}`)), /Session[\s\S]*Turns[\s\S]*Signals[\s\S]*Evolver/);
    await expectText(card, new RegExp(`name: ${SEEDED_PROPOSAL}`));
    await screenshot(page, SHOTS, "inbox");

    await card.locator(tid(`approve-${SEEDED_PROPOSAL}`)).click();
    await card.waitFor({ state: "detached" });
    await expectText(page.locator(tid("toast")).last(), new RegExp(`Approved ${SEEDED_PROPOSAL}`));

    await go("skills");
    await page.locator(tid("skill-search")).fill(SEEDED_PROPOSAL);
    const row = page.locator(tid(`skill-row-${SEEDED_PROPOSAL}`));
    await row.waitFor();
    await row.locator(tid(`skill-link-${SEEDED_PROPOSAL}`)).click();
    await page.locator(tid("page-skill")).waitFor();
    await expectValue(page.locator(tid("skill-content")), new RegExp(`name: ${SEEDED_PROPOSAL}`));
  });

  scenario("edit a skill and roll it back from history", async () => {
    const name = "e2e-rollback-skill";
    const original = "Original body: measure twice.";
    const edited = "Edited body: cut once.";
    await go("skills");
    await page.locator(tid("new-skill")).click();
    await page.locator(tid("page-skill")).waitFor();
    await page
      .locator(tid("skill-content"))
      .fill(`---\nname: ${name}\ndescription: "Use when an e2e test needs a skill with history."\ncategory: general\n---\n\n# Rollback test\n\n${original}\n`);
    await page.locator(tid("skill-save")).click();
    await page.waitForURL(new RegExp(`#/skills/${name}$`));
    await expectValue(page.locator(tid("skill-content")), new RegExp(original));

    // An invalid SKILL.md is refused, and the daemon's validation message is shown.
    const editor = page.locator(tid("skill-content"));
    const valid = await editor.inputValue();
    await editor.fill("# no frontmatter here\n");
    await page.locator(tid("skill-save")).click();
    await expectText(page.locator(tid("skill-save-error")), /frontmatter/i);

    // Edit the body and save: a new version.
    await editor.fill(valid.replace(original, edited));
    await expectText(page.locator(tid("skill-preview")), new RegExp(edited));
    await page.locator(tid("skill-save")).click();
    await expectText(page.locator(tid("toast")).last(), new RegExp(`Saved ${name}`));
    await page.locator(tid("dirty")).waitFor({ state: "detached" });

    // History: restore the version that has the original text.
    const rows = page.locator(`${tid("skill-history")} li.history-row`);
    await page.waitForFunction(() => document.querySelectorAll(".history-row").length >= 2);
    const count = await rows.count();
    let restored = false;
    for (let i = 0; i < count; i++) {
      const pre = rows.nth(i).locator("pre");
      const text = (await pre.count()) ? await pre.textContent() : "";
      const btn = rows.nth(i).locator('[data-testid^="rollback-"]');
      if (text?.includes(original) && (await btn.count())) {
        await btn.click();
        restored = true;
        break;
      }
    }
    assert.ok(restored, "no history row with the original text and a Restore button");
    await expectValue(editor, new RegExp(original));
    await expectText(page.locator(tid("skill-preview")), new RegExp(original));
    assert.doesNotMatch(await editor.inputValue(), new RegExp(edited));
    await page.waitForFunction(() => document.querySelectorAll(".history-row").length >= 3);
    await screenshot(page, SHOTS, "skill");
  });

  scenario("run MetaClaw-Bench from the Training page and read its table", async () => {
    await go("training");
    const card = page.locator(tid("bench-run"));
    await card.locator(tid("bench-dir")).fill(path.join(REPO, "tests", "fixtures", "metaclaw-bench-mini"));
    await card.locator(tid("bench-start")).click();
    // The mock's replies write no file and give no \bbox: both arms score 0; RL is off here.
    const table = card.locator(tid("bench-table"));
    await expectText(table, /baseline[\s\S]*0\.0 %[\s\S]*0\/3[\s\S]*skills[\s\S]*skills-rl\s*Not run: RL is off/, 60_000);
    await expectText(card.locator(tid("bench-progress")), /eval\/day02\/questions\.json line 38 skipped/);
    await screenshot(page, SHOTS, "training-bench");
  });

  scenario("switch mode to rl in Settings and see it on Overview", async () => {
    await go("settings");
    // RL needs a Tinker key first: the switch is refused with what is missing.
    await page.locator(tid("mode-rl")).click();
    await expectText(page.locator(tid("settings-error")), /RL cannot start yet[\s\S]*rl\.api_key/);
    // The radio snaps back once the status is read again, which can land just after the error.
    await page.locator(tid("mode-skills_only") + ":checked").waitFor({ state: "attached" });
    // Settings given with the CLI reach the running daemon at once (no restart, no polling).
    // A closed local port and a missing tokenizer: RL fails fast, never leaving the machine.
    const env = { METACLAW_HOME: target.home, NO_COLOR: "1" };
    for (const [key, value] of [
      ["rl.api_key", "tk-e2e"],
      ["rl.base_url", "http://127.0.0.1:9"],
      ["rl.tokenizer_path", "/nonexistent/tokenizer.json"],
    ]) {
      const r = await run(METACLAW_BIN, ["config", key, value], { env });
      assert.equal(r.code, 0, `metaclaw config ${key}: ${r.stderr}`);
    }
    await page.locator(tid("mode-rl")).check();
    await expectText(page.locator(tid("toast")).last(), /Saved: mode RL/);
    assert.equal(await page.locator(tid("settings-error")).count(), 0);
    await screenshot(page, SHOTS, "settings");
    await go("overview");
    await expectText(page.locator(tid("overview-mode")), /^RL$/);
  });

  scenario("open Training and see the reward chart loaded", async () => {
    await go("training");
    const img = page.locator(tid("chart-img-reward"));
    await img.waitFor();
    await page.waitForFunction(
      (sel) => {
        const el = document.querySelector(sel);
        return el instanceof HTMLImageElement && el.complete && el.naturalWidth > 0;
      },
      tid("chart-img-reward"),
      { timeout: TIMEOUT },
    );
    const src = await img.getAttribute("src");
    assert.match(src ?? "", /^\/api\/charts\/reward\.svg\?theme=light/);
    await page.locator(tid("steps-table")).waitFor();
    await page.waitForFunction(() => [...document.querySelectorAll(".chart img")].every((i) => i.complete));
    await screenshot(page, SHOTS, "training");
  });

  scenario("give a turn a thumbs-down in Sessions and see it marked", async () => {
    await go("sessions");
    await page.locator(tid("sessions-table")).waitFor();
    await screenshot(page, SHOTS, "sessions");
    await page.locator('[data-testid^="session-link-"]').first().click();
    await page.locator(tid("page-session")).waitFor();
    const turn = page.locator("li.turn").first();
    await turn.waitFor();
    const id = (await turn.getAttribute("data-testid")).replace(/^turn-/, "");
    await turn.locator(tid(`note-toggle-${id}`)).click();
    await turn.locator(tid(`note-${id}`)).fill("e2e: wrong units");
    await turn.locator(tid(`thumb-down-${id}`)).click();
    await expectText(turn.locator(tid(`turn-feedback-${id}`)), /unhelpful/);
    assert.equal(await turn.locator(tid(`thumb-down-${id}`)).getAttribute("aria-pressed"), "true");

    // It is stored, not just shown: a reload reads it back from the API.
    await page.reload();
    const again = page.locator(tid(`turn-${id}`));
    await again.waitFor();
    await expectText(again.locator(tid(`turn-feedback-${id}`)), /unhelpful.*e2e: wrong units/);
    await screenshot(page, SHOTS, "session");
  });

  scenario("live: a turn through the proxy appears in Sessions without a reload", async (t) => {
    if (!target.proxyKey) return t.skip("the mock API has no proxy");
    await go("sessions");
    await page.locator(tid("sessions-table")).waitFor();
    const r = await fetch(`${target.base}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${target.proxyKey}`, "x-session-id": "e2e-live" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hello from the e2e test" }] }),
    });
    assert.equal(r.status, 200, await r.text());
    await page.locator(tid("session-row-e2e-live")).waitFor();
  });

  scenario("agents: a turn sent with an agent's own key is filtered under that agent, its key never shown", async (t) => {
    if (!target.proxyKey) return t.skip("the mock API has no proxy");
    const key = "mc-e2e-codex-key-0123456789abcdef";
    // Through the settings path, as the wiring does when it creates a key.
    const set = await page.evaluate(async (k) => {
      const r = await fetch("/api/config", { method: "PATCH", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ set: { "agents.codex.api_key": k } }) });
      return r.status;
    }, key);
    assert.equal(set, 200);
    const r = await fetch(`${target.base}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${key}`, "x-session-id": "e2e-codex" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hello from codex" }] }),
    });
    assert.equal(r.status, 200, await r.text());
    await page.reload();
    const picker = page.locator(tid("agent-picker"));
    await picker.locator('option[value="codex"]').waitFor({ state: "attached" });
    await picker.selectOption("codex");
    await go("sessions");
    await page.locator(tid("session-row-e2e-codex")).waitFor();
    await expectText(page.locator(tid("session-agent-e2e-codex")), /^codex$/);
    assert.equal(await page.locator(tid("session-row-e2e-live")).count(), 0, "another agent's session is listed");
    await go("settings");
    const agents = page.locator(tid("settings-group-agents"));
    await expectText(agents, /codex: proxy key/);
    assert.ok(!(await page.content()).includes(key), "the agent's key is shown whole");
    await screenshot(page, SHOTS, "settings-agents");
    // Back to every agent for the scenarios after this one.
    await picker.selectOption("");
  });

  scenario("Settings: test the connection; an endpoint change keeps the key and applies without a restart", async () => {
    await go("settings");
    await page.locator(tid("test-llm")).click();
    await expectText(page.locator(tid("test-result-llm")), /OK/);

    const model = page.locator(tid("llm-model"));
    await model.fill((await model.inputValue()) + "-2");
    const [req, resp] = await Promise.all([
      page.waitForRequest((r) => r.method() === "PATCH" && r.url().endsWith("/api/config")),
      page.waitForResponse((r) => r.request().method() === "PATCH" && r.url().endsWith("/api/config")),
      page.locator(tid("llm-save")).click(),
    ]);
    const body = req.postDataJSON();
    assert.ok(body.llm?.model_id?.endsWith("-2"), JSON.stringify(body));
    assert.equal("api_key" in body.llm, false, "an untouched key field must not be sent");
    const answer = await resp.json();
    assert.equal(answer.restart_required, false, JSON.stringify(answer));
    // The running core took the new endpoint settings: the form shows them after a reload,
    // and no restart is asked for.
    await page.reload();
    await expectValue(page.locator(tid("llm-model")), /-2$/);
    assert.equal(await page.locator(tid("restart-banner")).count(), 0);
  });

  scenario("skill health shows each skill's evidence, or that there is not enough of it", async () => {
    await go("skills");
    const card = page.locator(tid("skill-health"));
    await card.waitFor();
    // A few seeded turns: every estimate says why it is missing.
    await card.locator(tid("health-all") + " summary").click();
    const rows = card.locator(`${tid("health-all")} tbody tr`);
    assert.ok((await rows.count()) > 0, "every skill has a row");
    await expectText(rows.first(), /not enough data[\s\S]*Not enough data: \d+ turns with it and \d+ .* \(needs 20 each\)/);
    await screenshot(page, SHOTS, "skill-health");
  });

  scenario("every page renders: screenshots, dark theme, 900 px, logged out", async () => {
    await go("skills");
    await page.locator(tid("skills-table")).waitFor();
    await page.locator(tid("retrieval-query")).fill("convert miles to kilometres");
    await page.locator(tid("retrieval-run")).click();
    await page.locator(tid("retrieval-results")).waitFor();
    await screenshot(page, SHOTS, "skills");

    await go("scheduler");
    await page.locator(tid("scheduler-timeline")).waitFor();
    await screenshot(page, SHOTS, "scheduler");

    await go("overview");
    await screenshot(page, SHOTS, "overview");

    // Dark theme through the toggle; the chart images follow it.
    await page.locator(tid("theme-dark")).check();
    await page.waitForFunction(() => document.documentElement.dataset.theme === "dark");
    await screenshot(page, SHOTS, "overview-dark");
    await go("training");
    await page.waitForFunction(() => {
      const i = document.querySelector('[data-testid="chart-img-reward"]');
      return i instanceof HTMLImageElement && i.src.includes("theme=dark") && i.complete && i.naturalWidth > 0;
    });
    await screenshot(page, SHOTS, "training-dark");
    await page.locator(tid("theme-system")).check();

    // Responsive down to 900 px: no page scrolls sideways.
    await page.setViewportSize({ width: 900, height: 800 });
    for (const p of ["overview", "skills", "inbox", "sessions", "training", "scheduler", "settings"]) {
      await go(p);
      await settle(page);
      const w = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(w <= 900, `${p} is ${w}px wide at a 900px viewport`);
    }
    await screenshot(page, SHOTS, "settings-900");
    await page.setViewportSize({ width: 1280, height: 860 });

    // Without the session cookie the UI explains how to get in.
    const anon = await browser.newContext({ viewport: { width: 1280, height: 700 }, colorScheme: "light" });
    try {
      const p2 = await anon.newPage();
      await p2.goto(target.base + "/");
      await p2.locator(tid("unauthorized")).waitFor({ timeout: TIMEOUT });
      assert.match((await p2.locator(tid("unauthorized")).textContent()) ?? "", /metaclaw dashboard/);
      await screenshot(p2, SHOTS, "unauthorized");
    } finally {
      await anon.close();
    }
    assert.deepEqual(pageErrors, [], "uncaught errors in the page");
  });
});

// First run: a home whose config.yaml names no upstream. The dashboard opens on onboarding and
// the user gets from nothing to a working proxy without a terminal.
describe("onboarding on a fresh home", { timeout: 90_000 }, () => {
  let fresh;
  let freshBrowser;
  let ctx;

  before(async () => {
    fresh = await startDaemon({ fresh: true });
    console.log(`# fresh target: ${fresh.base} (mock upstream ${fresh.mockBase})`);
    freshBrowser = await launch();
    ctx = await freshBrowser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: "light", reducedMotion: "reduce" });
    ctx.setDefaultTimeout(TIMEOUT);
    page = await ctx.newPage();
    watch(page);
  });

  after(async () => {
    await ctx?.close().catch(() => {});
    await freshBrowser?.close().catch(() => {});
    if (failed && fresh?.home) console.log(`# fresh home kept for inspection: ${fresh.home}\n# daemon log tail:\n${fresh.log().replace(/^/gm, "# ")}`);
    await fresh?.stop({ keep: failed });
  });

  scenario("provider, failing and passing test, skills, agent, done, then a chat reaches the upstream", async () => {
    await page.goto(fresh.loginUrl);
    // Lands on onboarding, not on an Overview without an upstream.
    await page.locator(tid("page-onboarding")).waitFor();
    assert.match(page.url(), /#\/welcome$/);
    await expectText(page.locator(tid("onboarding-step-title")), /Step 1 of 5: Provider/);
    for (const name of ["kimi", "qwen", "openai", "openrouter", "anthropic", "ollama", "vllm", "lmstudio", "custom"]) {
      await page.locator(tid(`preset-${name}`)).waitFor({ state: "attached" });
    }
    // Choosing a local server fills in its URL; keyboard: the presets are one radio group.
    await page.locator(tid("preset-ollama")).check();
    await expectValue(page.locator(tid("onboarding-base")), /^http:\/\/127\.0\.0\.1:11434\/v1$/);
    await page.keyboard.press("ArrowDown"); // next radio in the group: vLLM
    await expectValue(page.locator(tid("onboarding-base")), /:8000\/v1$/);
    await page.locator(tid("preset-custom")).check();
    await screenshot(page, SHOTS, "onboarding-1-provider");

    // A port nobody listens on: the test says so in words, and nothing is saved.
    const closed = await freePort();
    await page.locator(tid("onboarding-base")).fill(`http://127.0.0.1:${closed}/v1`);
    await page.locator(tid("onboarding-base")).press("Enter"); // the form submits from the keyboard
    await expectText(page.locator(tid("onboarding-step-title")), /Step 2 of 5: Test connection/);
    await expectText(page.locator(tid("onboarding-models-hint")), /did not list its models \(Nothing is listening/);
    await page.locator(tid("onboarding-model-input")).fill("mock-model");
    await page.locator(tid("onboarding-test-button")).click();
    await expectText(page.locator(tid("onboarding-failure-summary")), /^Nothing is listening at that address$/);
    assert.equal(await page.locator(tid("onboarding-save")).count(), 0, "a failed test offers no plain save");
    await page.locator(tid("onboarding-save-anyway")).waitFor();
    await screenshot(page, SHOTS, "onboarding-2-test-failed");
    assert.equal((await (await fetchApi(fresh, "/api/status")).json()).needs_onboarding, true);

    // Back to the provider, the mock upstream this time: its model list fills a picker.
    await page.getByRole("button", { name: "Back" }).click();
    await page.locator(tid("onboarding-base")).fill(`${fresh.mockBase}/v1`);
    await page.locator(tid("onboarding-key")).fill("sk-onboarding-test");
    await page.locator(tid("onboarding-next")).click();
    const picker = page.locator(tid("onboarding-model-select"));
    await picker.waitFor();
    assert.deepEqual(await picker.locator("option").allTextContents(), ["mock-claude", "mock-model"]);
    await picker.selectOption("mock-model");
    await page.locator(tid("onboarding-test-button")).click();
    await expectText(page.locator(tid("onboarding-test-ok")), /Connected: mock-model answered in \d+ ms/);
    await screenshot(page, SHOTS, "onboarding-2-test");
    // Light and dark, and no sideways scrolling at 900 px.
    await page.setViewportSize({ width: 900, height: 800 });
    await settle(page);
    assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 900, "onboarding scrolls sideways at 900 px");
    await page.evaluate(() => (document.documentElement.dataset.theme = "dark"));
    await screenshot(page, SHOTS, "onboarding-2-test-dark-900");
    await page.evaluate(() => (document.documentElement.dataset.theme = "light"));
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.locator(tid("onboarding-save")).click();

    // Skills: the bundled bank, with its count.
    await expectText(page.locator(tid("onboarding-step-title")), /Step 3 of 5: Skills/);
    const label = await expectText(page.locator(tid("onboarding-install-skills")), /Install the \d+ built-in skills/);
    const count = Number(/(\d+)/.exec(label)[1]);
    assert.ok(count > 0);
    await screenshot(page, SHOTS, "onboarding-3-skills");
    await page.locator(tid("onboarding-install-skills")).click();
    await expectText(page.locator(tid("onboarding-skills-installed")), new RegExp(`Installed ${count} of ${count} built-in skills`));
    await page.locator(tid("onboarding-skills-next")).click();

    // No agent in this HOME: the manual settings, with the proxy's URL and key.
    await expectText(page.locator(tid("onboarding-step-title")), /Step 4 of 5: Connect your agent/);
    await page.locator(tid("onboarding-no-agent")).waitFor();
    const port = new URL(fresh.base).port;
    await expectText(page.locator(tid("onboarding-snippet")), new RegExp(`http://127\\.0\\.0\\.1:${port}/v1[\\s\\S]*API key:\\s+${fresh.proxyKey}[\\s\\S]*mock-model`));
    await screenshot(page, SHOTS, "onboarding-4-agent");
    await page.locator(tid("onboarding-agent-next")).click();

    await expectText(page.locator(tid("onboarding-step-title")), /Step 5 of 5: Done/);
    await expectText(page.locator(tid("onboarding-done")), /Enable RL when you want/);
    await screenshot(page, SHOTS, "onboarding-5-done");
    await page.locator(tid("onboarding-finish")).click();

    // The Overview shows the saved upstream.
    await page.locator(tid("page-overview")).waitFor();
    await expectText(page.locator(tid("card-upstream")), new RegExp(`${fresh.mockBase.replace(/[.]/g, "\\.")}/v1`));
    assert.equal(await page.locator(tid("overview-onboarding")).count(), 0);

    // A chat through the proxy reaches the mock upstream with the saved key.
    const r = await fetch(`${fresh.base}/v1/chat/completions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${fresh.proxyKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ model: "any", messages: [{ role: "user", content: "hello after onboarding" }] }),
    });
    assert.equal(r.status, 200, await r.text());
    const seen = await (await fetch(`${fresh.mockBase}/_mock/requests`)).json();
    const last = seen.filter((q) => q.path === "/v1/chat/completions").pop();
    assert.match(JSON.stringify(last.body), /hello after onboarding/);
    assert.equal(last.headers.authorization, "Bearer sk-onboarding-test");

    // Settings can start it again.
    await go("settings");
    await page.locator(tid("settings-onboarding")).click();
    await page.locator(tid("page-onboarding")).waitFor();
    assert.deepEqual(pageErrors, [], "uncaught errors in the page");
  });
});

// "Use my agent's own sign-in" at the provider step: with no key of MetaClaw's there is nothing
// to test with, onboarding says what will not run and offers to add a key, and the Overview
// keeps saying it after saving.
describe("onboarding with the agent's own sign-in", { timeout: 90_000 }, () => {
  let fresh;
  let freshBrowser;
  let ctx;

  before(async () => {
    fresh = await startDaemon({ fresh: true });
    freshBrowser = await launch();
    ctx = await freshBrowser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: "light", reducedMotion: "reduce" });
    ctx.setDefaultTimeout(TIMEOUT);
    page = await ctx.newPage();
    watch(page);
  });

  after(async () => {
    await ctx?.close().catch(() => {});
    await freshBrowser?.close().catch(() => {});
    if (failed && fresh?.home) console.log(`# fresh home kept for inspection: ${fresh.home}\n# daemon log tail:\n${fresh.log().replace(/^/gm, "# ")}`);
    await fresh?.stop({ keep: failed });
  });

  scenario("pass-through without a key of MetaClaw's is said at onboarding and on the Overview", async () => {
    await page.goto(fresh.loginUrl);
    await page.locator(tid("page-onboarding")).waitFor();
    await page.locator(tid("preset-anthropic")).check();
    await page.locator(tid("onboarding-base")).fill(fresh.mockBase);
    // Anthropic needs a key, unless the agent signs in itself.
    await page.locator(tid("onboarding-next")).click();
    await expectText(page.locator(tid("onboarding-provider-error")), /needs an API key/);
    await page.locator(tid("onboarding-own-sign-in")).locator("input").check();
    await expectText(page.locator(tid("onboarding-key-hint")), /needs a key of its own/);
    await page.locator(tid("onboarding-next")).click();

    await expectText(page.locator(tid("onboarding-step-title")), /Step 2 of 5: Test connection/);
    await expectText(page.locator(tid("onboarding-own-endpoint")), /learning skills, the judge and connection checks will not run/);
    assert.equal(await page.locator(tid("onboarding-test-button")).count(), 0, "nothing to test with");
    await screenshot(page, SHOTS, "onboarding-2-own-sign-in");
    // "Add a key" goes back to the provider step with the choice kept.
    await page.locator(tid("onboarding-add-own-key")).click();
    await expectText(page.locator(tid("onboarding-step-title")), /Step 1 of 5: Provider/);
    assert.equal(await page.locator(tid("onboarding-own-sign-in")).locator("input").isChecked(), true);
    await page.locator(tid("onboarding-next")).click();
    const model = page.locator(`${tid("onboarding-model-input")}, ${tid("onboarding-model-select")}`);
    await model.first().waitFor();
    if ((await page.locator(tid("onboarding-model-input")).count()) > 0) await page.locator(tid("onboarding-model-input")).fill("claude-mock");
    await page.locator(tid("onboarding-save-own-sign-in")).click();
    await expectText(page.locator(tid("onboarding-step-title")), /Step 3 of 5: Skills/);

    const status = await (await fetchApi(fresh, "/api/status")).json();
    assert.equal(status.needs_onboarding, false);
    assert.match(status.warnings.join(" "), /no key of its own/);
    await page.goto(`${fresh.base}/#/overview`);
    await expectText(page.locator(tid("overview-config-warning")).first(), /skill distillation, the judge and connection checks cannot run/);
    await screenshot(page, SHOTS, "overview-pass-through-warning");
    assert.deepEqual(pageErrors, [], "uncaught errors in the page");
  });
});

/** GET an /api route with the session cookie of the current browser context. */
// Every setting from the catalogue, validated at the field, applied live; "Enable RL" with
// settings missing, then filled in against a fake Tinker server until the policy serves.
describe("settings from the catalogue", { timeout: 90_000 }, () => {
  let t;
  let tinker;
  let b;
  let ctx;
  const GROUPS = ["general", "llm", "skills", "evolution", "rl", "judge", "teacher", "scheduler", "data"];
  const TOKENIZER = path.join(REPO, "tests/fixtures/rl/tiny-qwen3-tokenizer.json");

  before(async () => {
    t = await startDaemon();
    tinker = start(FAKE_TINKER_BIN, ["--vocab", "362"], { pipeStdout: true, logFile: path.join(t.home, "tinker.err") });
    [, t.tinkerBase] = await waitForLine(tinker, /listening on (http:\/\/127\.0\.0\.1:\d+)/);
    b = await launch();
    ctx = await b.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: "light", reducedMotion: "reduce" });
    ctx.setDefaultTimeout(TIMEOUT);
    page = await ctx.newPage();
    watch(page);
    await page.goto(t.loginUrl);
    await page.locator(tid("page-overview")).waitFor();
  });

  after(async () => {
    await ctx?.close().catch(() => {});
    await b?.close().catch(() => {});
    await tinker?.stop();
    if (failed && t?.home) console.log(`# settings home kept for inspection: ${t.home}\n# daemon log tail:\n${t.log().replace(/^/gm, "# ")}`);
    await t?.stop({ keep: failed });
  });

  const field = (key) => page.locator(tid(`field-${key}`));
  const input = (key) => page.locator(tid(`input-${key}`));

  scenario("every group renders; an invalid value shows the CLI's message under the field and changes nothing", async () => {
    await go("settings");
    for (const g of GROUPS) {
      const card = page.locator(tid(`settings-group-${g}`));
      await card.waitFor();
      await card.scrollIntoViewIfNeeded();
      await settle(page);
      await card.screenshot({ path: path.join(SHOTS, `settings-${g}.png`) });
    }
    const yaml = () => fs.readFileSync(path.join(t.home, "config.yaml"), "utf8");
    const before = yaml();
    await input("skills.top_k").fill("many");
    await page.locator(tid("save-skills.top_k")).click();
    await expectText(page.locator(tid("field-error-skills.top_k")), /^invalid value for `skills\.top_k`: "many" \(expected an integer >= 1\)$/);
    // The CLI says exactly the same.
    const cli = await run(METACLAW_BIN, ["config", "skills.top_k", "many"], { env: { METACLAW_HOME: t.home, NO_COLOR: "1" } });
    assert.notEqual(cli.code, 0);
    assert.match(cli.stderr + cli.stdout, /invalid value for `skills\.top_k`: "many" \(expected an integer >= 1\)/);
    assert.equal(yaml(), before, "config.yaml unchanged");

    // A valid value: saved, the error goes, no restart banner.
    await input("skills.top_k").fill("2");
    const [resp] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "PATCH" && r.url().endsWith("/api/config")),
      page.locator(tid("save-skills.top_k")).click(),
    ]);
    const answer = await resp.json();
    assert.equal(answer.restart_required, false, JSON.stringify(answer));
    assert.deepEqual(resp.request().postDataJSON(), { set: { "skills.top_k": 2 } }, "only that key is sent");
    await page.locator(tid("field-error-skills.top_k")).waitFor({ state: "detached" });
    assert.match(yaml(), /top_k: 2/);
    await input("scheduler.sleep_start").fill("22:30");
    await input("scheduler.sleep_start").press("Enter");
    await expectText(page.locator(tid("toast")).last(), /Saved: Sleep from/);
    assert.equal(await page.locator(tid("restart-banner")).count(), 0);
  });

  scenario("Enable RL with settings missing lands on RL with them marked; filled in and tested, RL serves", async () => {
    // Where the tray's "Enable RL" sends the user: the RL section, what is missing marked.
    await page.evaluate(() => (location.hash = "#/settings/rl"));
    await expectText(page.locator(tid("field-error-rl.api_key")), /needed for RL: a Tinker API key/);
    await page.evaluate(() => (location.hash = "#/settings"));
    await page.reload();
    await page.locator(tid("settings-group-rl")).waitFor();
    assert.equal(await page.locator(tid("field-error-rl.api_key")).count(), 0);
    await page.locator(tid("toggle-rl")).click({ force: true }); // the switch's track covers the input
    await expectText(page.locator(tid("field-error-rl.api_key")), /needed for RL: a Tinker API key/);
    // Scrolled to the RL section.
    await page.waitForFunction(() => {
      const r = document.querySelector('[data-testid="settings-group-rl"]').getBoundingClientRect();
      return r.top < window.innerHeight && r.bottom > 0;
    });
    assert.match((await field("rl.api_key").getAttribute("class")) ?? "", /field-invalid/);
    await screenshot(page, SHOTS, "settings-rl-missing");

    for (const [key, value] of [
      ["rl.model", "Qwen/Qwen3-4B-Instruct-2507"],
      ["rl.base_url", t.tinkerBase],
      ["rl.tokenizer_path", TOKENIZER],
      ["rl.batch_size", "2"],
    ]) {
      await input(key).fill(value);
      await page.locator(tid(`save-${key}`)).click();
      await page.locator(tid(`save-${key}`)).waitFor({ state: "detached" });
    }
    await page.locator(tid("test-tinker")).click();
    await expectText(page.locator(tid("test-result-tinker")), /✓ OK.*session/);
    await page.locator(tid("toggle-rl")).click({ force: true }); // the switch's track covers the input
    await expectText(page.locator(tid("toast")).last(), /Saved: RL on/);
    await go("training");
    await expectText(page.locator(tid("rl-phase")), /Serving/, 20_000);
    await expectText(page.locator(tid("rl-phase-message")), /Qwen\/Qwen3-4B-Instruct-2507 serves chat/);
    await screenshot(page, SHOTS, "training-rl-serving");

    // The agent chats through the proxy: the policy answers; the user rates both turns in
    // Sessions; with no judge, rated turns are what trains, and the new step shows up.
    const turn = async (messages, done) => {
      const r = await fetch(`${t.base}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Authorization: `Bearer ${t.proxyKey}`,
          "x-session-id": "e2e-rl",
          ...(done ? { "x-session-done": "true" } : {}),
        },
        body: JSON.stringify({ model: "policy", messages }),
      });
      assert.equal(r.status, 200, await r.clone().text());
      return (await r.json()).choices[0].message.content;
    };
    const steps = await (await fetchApi(t, "/api/training/steps")).json();
    const seededSteps = Math.max(0, ...steps.map((x) => x.step));
    const first = await turn([{ role: "user", content: "count to three" }], false);
    await turn(
      [
        { role: "user", content: "count to three" },
        { role: "assistant", content: first },
        { role: "user", content: "now backwards" },
      ],
      true,
    );
    await page.evaluate(() => (location.hash = "#/sessions/e2e-rl"));
    await page.locator(tid("page-session")).waitFor();
    const turns = page.locator("li.turn");
    await page.waitForFunction(() => document.querySelectorAll("li.turn").length === 2);
    // One up, one down: answers that all got the same reward teach nothing (the step is
    // skipped, as it should be).
    const lis = await turns.all();
    for (const [li, thumb, said] of [
      [lis[0], "up", /^\W*helpful/],
      [lis[1], "down", /unhelpful/],
    ]) {
      const id = (await li.getAttribute("data-testid")).replace(/^turn-/, "");
      await li.locator(tid(`thumb-${thumb}-${id}`)).click();
      await expectText(li.locator(tid(`turn-feedback-${id}`)), said);
    }
    await go("training");
    // The seeded home already has steps: wait for a newer one, finished.
    const row = page.locator(tid("steps-table")).locator("tbody tr").first();
    const deadline = Date.now() + 30_000;
    let cells = [];
    while (Date.now() < deadline) {
      cells = await row.locator("td").allTextContents().catch(() => []);
      if (Number(cells[0]) > seededSteps && /^ok$/.test((cells[1] ?? "").trim())) break;
      await page.waitForTimeout(100);
    }
    assert.ok(Number(cells[0]) > seededSteps && (cells[1] ?? "").trim() === "ok", `no new finished step: ${JSON.stringify(cells)}`);
    await screenshot(page, SHOTS, "training-new-step");
  });
});

async function fetchApi(t, route) {
  const cookies = await page.context().cookies(t.base);
  return fetch(`${t.base}${route}`, { headers: { Cookie: cookies.map((c) => `${c.name}=${c.value}`).join("; ") } });
}
