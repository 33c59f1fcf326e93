// Debian chromium through playwright-core (no browser download).
import fs from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

export async function launch() {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`chromium not found at ${CHROMIUM}: apt-get install -y --no-install-recommends chromium`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

/** Screenshots can lag the DOM: wait two animation frames (and a beat) first. */
export async function settle(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
  await page.waitForTimeout(150);
}

export async function screenshot(page, dir, name) {
  fs.mkdirSync(dir, { recursive: true });
  await page.evaluate(() => window.scrollTo(0, 0));
  await settle(page);
  const file = path.join(dir, `${name}.png`);
  // Transient toasts would cover the page; the tests assert on them separately.
  await page.screenshot({ path: file, fullPage: true, style: ".toasts { display: none !important; }" });
  return file;
}
