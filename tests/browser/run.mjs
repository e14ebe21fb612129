// run.mjs — browser end-to-end tests of the page: Playwright (playwright-core) driving Debian's Chromium with
// software WebGL2 (SwiftShader). The page publishes window.__moe = {seq, scenario, results, ui, ...} after every
// recompute, so these tests assert numbers and widget rectangles, not pixels.
//
//   node tests/browser/run.mjs --site build-web/site --core build-web/node/moe-core.js \
//        --cli build-native/moe-roofline --out build-web/screenshots
//
// (a) loads without console errors and renders (screenshots in --out); (b) a scenario in the URL (and a later
// hashchange) changes the numbers; (c) a real mouse drag on the batch slider changes them, also at
// devicePixelRatio 2; (d) the numbers equal `moe-roofline eval --format json` for the same scenario, to the
// last digit; (e) the one-file page works from file://; (f) a hostile fragment shows a notice and the
// defaults, injects nothing.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { DESIGN_COLUMNS, chromiumArgs, cliEval, flatten, loadCore, serve } from './lib.mjs';

const { values: opt } = parseArgs({
  options: { site: { type: 'string' }, core: { type: 'string' }, cli: { type: 'string' }, out: { type: 'string' } },
});
for (const k of ['site', 'core', 'cli', 'out']) if (!opt[k]) throw new Error(`--${k} is required`);
fs.mkdirSync(opt.out, { recursive: true });

let server, browser, core;

before(async () => {
  core = await loadCore(opt.core);
  server = await serve(opt.site);
  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
                                    args: chromiumArgs(), headless: true });
});

after(async () => {
  await browser?.close();
  server?.stop();
});

// Opens a page and waits for its first publication. Collects console errors and uncaught exceptions.
async function open(url, { dpr = 1, width = 1280, height = 800 } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: dpr });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console.error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.goto(url);
  await page.waitForFunction(() => window.__moe && window.__moe.seq >= 1, null, { timeout: 60000 });
  return { page, context, problems };
}

const hook = (page) => page.evaluate(() => window.__moe);

// Waits for a publication newer than `seq`, then for the page to settle (no newer one for a few frames).
async function nextHook(page, seq) {
  await page.waitForFunction((s) => window.__moe.seq > s, seq, { timeout: 30000 });
  let h = await hook(page);
  for (;;) {
    await page.waitForTimeout(150);
    const h2 = await hook(page);
    if (h2.seq === h.seq) return h2;
    h = h2;
  }
}

// How many distinct colours a PNG has (decoded by the browser, in a blank page): a rendered page has many.
async function distinctColours(png) {
  const page = await browser.newPage();
  try {
    return await page.evaluate(async (b64) => {
      const img = new Image();
      img.src = 'data:image/png;base64,' + b64;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const g = c.getContext('2d');
      g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data;
      const seen = new Set();
      for (let i = 0; i < d.length; i += 4 * 7) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      return seen.size;
    }, png.toString('base64'));
  } finally {
    await page.close();
  }
}

async function screenshot(page, name) {
  const file = path.join(opt.out, name);
  const png = await page.screenshot({ path: file });
  const colours = await distinctColours(png);
  assert.ok(colours > 20, `${name}: only ${colours} colours, the page did not render`);
  return file;
}

// The page's numbers equal the CLI's (and the node core module's) for the page's own scenario, exactly.
function assertSameAsCli(h, label) {
  const keys = Object.keys(h.results);
  for (const c of DESIGN_COLUMNS) assert.ok(keys.includes(c), `${label}: column ${c} not published`);
  const cli = flatten(cliEval(opt.cli, h.scenario), keys);
  assert.deepEqual(h.results, cli, `${label}: page and moe-roofline eval differ`);
  assert.deepEqual(h.results, core.evalFlat(h.scenario), `${label}: page and the core module differ`);
}

// A scenario different from the defaults in every headline number.
// (scripts/run.sh opens the same one; its screenshot, scenario.png, is the README's.)
const SCENARIO_B = { model: 'deepseek-v3', hardware: 'h800', parallel: { tp: 1, dp: 32, ep: 32 },
                     workload: { batch: 64 }, runtime: { two_batch_overlap: true } };

test('(a) the page loads without console errors, renders, and publishes every column', async () => {
  const { page, context, problems } = await open(server.url);
  const h = await hook(page);
  assert.equal(h.results.status, 'ok', JSON.stringify(h.errors));
  for (const c of DESIGN_COLUMNS) assert.ok(c in h.results, `column ${c} missing`);
  assert.equal(h.notice, '');
  for (const name of ['model', 'hardware', 'parallel.tp', 'parallel.dp', 'parallel.ep', 'workload.batch',
                      'workload.context_len', 'runtime.a2a_backend', 'runtime.two_batch_overlap']) {
    const r = h.ui[name];
    assert.ok(r && r.w > 0 && r.h > 0 && r.x >= 0 && r.y >= 0 && r.x + r.w <= 1280 && r.y + r.h <= 800,
              `ui.${name} = ${JSON.stringify(r)}`);
  }
  await page.waitForTimeout(300);
  await screenshot(page, 'page.png');

  // The canvas follows the window: a narrower window moves the widgets and republishes their rectangles.
  await page.setViewportSize({ width: 900, height: 640 });
  const h2 = await nextHook(page, h.seq);
  const canvas = await page.evaluate(() => [document.getElementById('canvas').width, document.getElementById('canvas').height]);
  assert.deepEqual(canvas, [900, 640]);
  assert.ok(h2.ui['workload.batch'].w < h.ui['workload.batch'].w, 'the slider did not shrink with the window');
  assert.ok(h2.ui['runtime.a2a_backend'].x + h2.ui['runtime.a2a_backend'].w <= 900);
  assert.deepEqual(problems, []);
  await context.close();
});

test('(b) a scenario in the URL, and a later hashchange, change the published numbers', async () => {
  const base = core.evalFlat({});
  const { page, context, problems } = await open(server.url + '#' + core.urlEncode(SCENARIO_B));
  const h = await hook(page);
  assert.deepEqual(h.scenario, core.compact(SCENARIO_B));
  assert.equal(h.results.status, 'ok', JSON.stringify(h.errors));
  assert.notEqual(h.results['decode.tpot_ms'], base['decode.tpot_ms']);
  assert.notEqual(h.results['model.total_params'], base['model.total_params']);
  assertSameAsCli(h, 'scenario from the URL');
  await screenshot(page, 'scenario.png');

  const other = { model: 'qwen3-235b-a22b', hardware: 'h20', parallel: { tp: 4, dp: 2, ep: 8 } };
  await page.evaluate((f) => { window.location.hash = f; }, core.urlEncode(other));
  const h2 = await nextHook(page, h.seq);
  assert.deepEqual(h2.scenario, core.compact(other));
  assert.notEqual(h2.results['decode.tpot_ms'], h.results['decode.tpot_ms']);
  assertSameAsCli(h2, 'scenario after hashchange');
  assert.deepEqual(problems, []);
  await context.close();
});

// Drags the batch slider's grab from its left end to 80% of the frame with real mouse events.
async function dragBatch(page, dpr) {
  const h = await hook(page);
  const r = h.ui['workload.batch'];
  assert.ok(r, 'ui["workload.batch"] is published');
  const y = r.y + r.h / 2;
  await page.mouse.move(r.x + 3, y);
  await page.waitForTimeout(100);
  await page.mouse.down();
  await page.waitForTimeout(100);
  for (let i = 1; i <= 10; i++) {
    await page.mouse.move(r.x + 3 + (r.w * 0.8 - 3) * i / 10, y);
    await page.waitForTimeout(50);
  }
  await page.mouse.up();
  const h2 = await nextHook(page, h.seq);
  assert.equal(h2.dpr, dpr);
  return { before: h, after: h2 };
}

test('(c) a real mouse drag on the batch slider changes the numbers and the URL', async () => {
  const { page, context, problems } = await open(server.url + '#' + core.urlEncode(SCENARIO_B));
  const { before: h, after: h2 } = await dragBatch(page, 1);
  const b1 = h.scenario.workload?.batch ?? 64;
  const b2 = h2.scenario.workload?.batch;
  assert.ok(b2 > b1 * 4, `batch went from ${b1} to ${b2}`);
  assert.notEqual(h2.results['decode.tpot_ms'], h.results['decode.tpot_ms']);
  assert.notEqual(h2.results['decode.tokens_per_s_per_gpu'], h.results['decode.tokens_per_s_per_gpu']);
  // The URL follows the edit, and reading it back gives the dragged scenario.
  const hash = await page.evaluate(() => window.location.hash);
  assert.deepEqual(core.urlDecode(hash).scenario, h2.scenario);
  assertSameAsCli(h2, 'after the drag');
  await screenshot(page, 'after-drag.png');
  assert.deepEqual(problems, []);
  await context.close();
});

test('(c) HiDPI: at devicePixelRatio 2 the rectangles are CSS pixels and the drag still lands', async () => {
  const { page, context, problems } = await open(server.url, { dpr: 2, width: 1000, height: 700 });
  const h = await hook(page);
  assert.equal(h.dpr, 2);
  const canvas = await page.evaluate(() => {
    const c = document.getElementById('canvas');
    return { w: c.width, h: c.height, cssW: c.clientWidth, cssH: c.clientHeight };
  });
  assert.deepEqual(canvas, { w: 2000, h: 1400, cssW: 1000, cssH: 700 });
  const r = h.ui['workload.batch'];
  assert.ok(r.x + r.w <= 1000 && r.y + r.h <= 700, JSON.stringify(r));
  const { after: h2 } = await dragBatch(page, 2);
  assert.ok((h2.scenario.workload?.batch ?? 64) > 256, JSON.stringify(h2.scenario));
  await screenshot(page, 'page-hidpi.png');
  assert.deepEqual(problems, []);
  await context.close();
});

test('(d) the default scenario: the page equals moe-roofline eval to the last digit', async () => {
  const { page, context } = await open(server.url);
  assertSameAsCli(await hook(page), 'defaults');
  await context.close();
});

test('(e) the one-file page works from file://', async () => {
  const file = path.resolve(opt.site, 'moe-roofline.html');
  const html = fs.readFileSync(file, 'utf8');
  assert.ok(!/src=["'][^"']*\.(js|wasm)["']/.test(html), 'moe-roofline.html refers to another file');
  const { page, context, problems } = await open('file://' + file + '#' + core.urlEncode(SCENARIO_B));
  const h = await hook(page);
  assert.deepEqual(h.scenario, core.compact(SCENARIO_B));
  assertSameAsCli(h, 'one-file page');
  await screenshot(page, 'single-file.png');
  assert.deepEqual(problems, []);
  await context.close();
});

test('(f) a hostile fragment shows a notice and the defaults, and injects nothing', async () => {
  const evil = '{"model":"<img src=x onerror=\\"window.__pwned=1\\">","workload":{"batch":"<script>window.__pwned=2</script>"}}';
  const frags = ['#s=' + Buffer.from(evil).toString('base64url'), '#s=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E',
                 '#s=' + 'A'.repeat(100000)];
  for (const frag of frags) {
    const { page, context, problems } = await open(server.url + frag);
    const h = await hook(page);
    assert.ok(h.notice.length > 0, `no notice for ${frag.slice(0, 40)}`);
    assert.deepEqual(h.scenario, core.compact({}));
    assert.equal(h.results.status, 'ok');
    const dom = await page.evaluate(() => ({
      pwned: window.__pwned, imgs: document.images.length, scripts: document.scripts.length,
      body: document.body.children.length,
    }));
    assert.equal(dom.pwned, undefined);
    assert.equal(dom.imgs, 0);
    if (frag === frags[0]) await screenshot(page, 'bad-fragment.png');
    assert.deepEqual(problems, []);
    await context.close();
  }
});
