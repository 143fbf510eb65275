// Drives the page in headless Chromium: types each query (a pair [a, b] into
// the two boxes of a sentence-pair classifier), reads the prediction from the
// DOM, prints one JSON object on stdout.
//
//   node test/drive.mjs <url> <queries.json> <screenshot.png> [chromium]
//
// Output: {results: [{query, kind, label|intent, score (none for a slot
// tagger: kind 'slot_tagger'), bars, words: [{word, tag}], slots: [{type,
// score}]}], model: the page's model line
// (a pair's query: its two texts, a tab between them),
// console: [messages], external: [requests to other hosts, refused]}.
// Every request outside the page's own origin is aborted and listed.
import { readFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const [url, queriesPath, screenshot, executablePath = "/usr/bin/chromium"] = process.argv.slice(2);
if (!url || !queriesPath || !screenshot) {
  console.error("usage: node test/drive.mjs <url> <queries.json> <screenshot.png> [chromium]");
  process.exit(2);
}
const queries = JSON.parse(readFileSync(queriesPath, "utf8"));
const origin = new URL(url).origin;
const profile = mkdtempSync(join(tmpdir(), "mixvocab-chromium-"));
const messages = [];
const external = [];

const browser = await chromium.launchPersistentContext(profile, {
  executablePath,
  headless: true,
  viewport: { width: 900, height: 640 },
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
try {
  const page = browser.pages()[0] ?? (await browser.newPage());
  await page.route("**/*", (route) => {
    const request = route.request();
    if (new URL(request.url()).origin === origin) return route.continue();
    external.push(`${request.method()} ${request.url()}`);
    return route.abort();
  });
  page.on("console", (m) => messages.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => messages.push(`pageerror: ${e.message}`));
  await page.goto(url);
  await page.waitForFunction(
    () => ["ready", "error"].includes(document.getElementById("status").dataset.state),
    null,
    { timeout: 120000 },
  );
  const state = await page.getAttribute("#status", "data-state");
  if (state !== "ready") {
    throw new Error(`the page did not load its model: ${await page.textContent("#status")}`);
  }
  const box = page.locator("#query");
  const boxB = page.locator("#query-b");
  const results = [];
  for (const entry of queries) {
    const pair = Array.isArray(entry);
    const query = pair ? entry.join("\t") : entry;
    if (pair !== (await boxB.isVisible())) {
      throw new Error(`the page shows ${pair ? "one box" : "two boxes"} for ${JSON.stringify(entry)}`);
    }
    await box.fill("");
    if (pair) await boxB.fill("");
    await box.pressSequentially(pair ? entry[0] : entry);
    if (pair) await boxB.pressSequentially(entry[1]);
    await page.waitForFunction(
      (q) =>
        document.getElementById("result").dataset.query === q &&
        ["ready", "error"].includes(document.getElementById("status").dataset.state),
      query,
      { timeout: 60000 },
    );
    if ((await page.getAttribute("#status", "data-state")) === "error") {
      throw new Error(`prediction failed on ${JSON.stringify(query)}: ${await page.textContent("#status")}`);
    }
    results.push(
      await page.evaluate(() => {
        const result = document.getElementById("result");
        const label = result.querySelector(".label");
        const row = { query: result.dataset.query, kind: result.dataset.kind };
        // A slot tagger's answer has no label.
        if (label) {
          row.score = Number(label.dataset.score);
          row.shown = result.querySelector(".score").textContent;
          if (label.dataset.intent !== undefined) row.intent = label.dataset.intent;
          else row.label = label.dataset.label;
        }
        row.bars = result.querySelectorAll(".top li").length;
        row.words = [...result.querySelectorAll(".word")].map((w) => ({ word: w.dataset.word, tag: w.dataset.tag }));
        row.slots = [...result.querySelectorAll(".slot")].map((m) => ({ type: m.dataset.slot, score: Number(m.dataset.score) }));
        return row;
      }),
    );
  }
  await page.screenshot({ path: screenshot, fullPage: true });
  const model = await page.textContent("#model-info");
  console.log(JSON.stringify({ results, model, console: messages, external }));
} catch (error) {
  console.log(JSON.stringify({ error: String(error.stack || error), console: messages, external }));
  process.exitCode = 1;
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
