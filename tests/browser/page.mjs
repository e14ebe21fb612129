// page.mjs — helpers of the browser tests (run.mjs, serving.mjs, plan.mjs, layout.mjs): the suite's setup, open a page and wait for its hook, real clicks
// and typing on the widgets the hook names, screenshots, and the page's numbers against the CLI's.
// `ctx` is filled by browserSuite()'s before(): {browser, server, core, out, cli}.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before } from 'node:test';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { DESIGN_COLUMNS, chromiumArgs, cliEval, cliEvalSet, flatten, loadCore, pngColours, serve } from './lib.mjs';

export const ctx = {};

// A scenario different from the defaults in every headline number (run.mjs, serving.mjs).
// (scripts/run.sh opens the same one; its screenshot, scenario.png, is the README's.)
export const SCENARIO_B = { model: 'deepseek-v3', hardware: 'h800', parallel: { tp: 1, dp: 32, ep: 32 },
                            workload: { batch: 64 }, runtime: { two_batch_overlap: true } };
export const CHARTS = ['chart.layers', 'chart.memory', 'chart.roofline', 'chart.sweep', 'chart.frontier'];

// What every browser test file starts with: its arguments (--site, --core, --cli, --out, all required), the
// screenshot directory, and a before() that loads the core module, serves the site and starts Chromium into `ctx`
// (an after() stops them). Returns the arguments.
export function browserSuite() {
  const { values: opt } = parseArgs({
    options: { site: { type: 'string' }, core: { type: 'string' }, cli: { type: 'string' }, out: { type: 'string' } },
  });
  for (const k of ['site', 'core', 'cli', 'out']) if (!opt[k]) throw new Error(`--${k} is required`);
  fs.mkdirSync(opt.out, { recursive: true });
  before(async () => {
    const core = await loadCore(opt.core);
    const server = await serve(opt.site);
    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
                                            args: chromiumArgs(), headless: true });
    Object.assign(ctx, { browser, server, core, out: opt.out, cli: opt.cli });
  });
  after(async () => {
    await ctx.browser?.close();
    ctx.server?.stop();
  });
  return opt;
}

// Opens a page and waits for its first publication. Collects console errors and uncaught exceptions.
export async function open(url, { dpr = 1, width = 1280, height = 800, permissions } = {}) {
  const context = await ctx.browser.newContext({ viewport: { width, height }, deviceScaleFactor: dpr, acceptDownloads: true });
  if (permissions) await context.grantPermissions(permissions, { origin: ctx.server.url });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console.error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.goto(url);
  await page.waitForFunction(() => window.__moe && window.__moe.seq >= 1, null, { timeout: 60000 });
  return { page, context, problems };
}

// A fresh load of `url` in an open page (not a same-document hash navigation).
export async function reload(page, url) {
  await page.goto('about:blank');
  await page.goto(url);
  await page.waitForFunction(() => window.__moe && window.__moe.seq >= 1, null, { timeout: 60000 });
}

// A same-document navigation to `fragment` ("#..."), as a link to this page does in an open tab: the page reads it on
// its hashchange (the same load_fragment as at start-up). Resolves with the settled hook once a frame after the
// event has published (loading a fragment always recomputes, and a recompute always publishes).
export async function gotoHash(page, fragment) {
  await page.evaluate((f) => {
    window.__moeHashSeq = undefined;
    const before = window.location.href;
    window.location.hash = f;
    const want = window.location.href;
    if (want === before) throw new Error('gotoHash: the page is already at ' + f.slice(0, 80));
    const onHash = (e) => {
      if (e.newURL !== want) return;  // (an earlier write of the page's own fragment)
      window.__moeHashSeq = window.__moe.seq;
      window.removeEventListener('hashchange', onHash);
    };
    window.addEventListener('hashchange', onHash);
  }, fragment);
  await page.waitForFunction(() => window.__moeHashSeq !== undefined && window.__moe.seq > window.__moeHashSeq, null, { timeout: 30000 });
  return settle(page);
}

export const hook = (page) => page.evaluate(() => window.__moe);

// The rectangles of the named widgets (ui[name], undefined when not published): a small read, not the whole hook.
export const rects = (page, names) => page.evaluate((ns) => ns.map((n) => window.__moe.ui[n]), names);

// Waits `n` frames of the page. Its main loop runs on requestAnimationFrame (Emscripten, fps 0) and queues its next
// frame while drawing this one, before this call queues its callback: in every frame the page draws first, so after
// n frames the page has drawn n whole frames that began after this call, and input sent before it (mouse, keys) has
// been seen by ImGui, which reads input once per frame.
export function frames(page, n) {
  return page.evaluate((k) => new Promise((resolve) => {
    const tick = () => (--k <= 0 ? resolve() : requestAnimationFrame(tick));
    requestAnimationFrame(tick);
  }), n);
}

// Whole frames without a newer publication before the page counts as settled: ImGui can take a frame to size a window
// that appears (a popup, a combo's list) before it draws it; 2 frames cover that. (The fixed 150 ms this replaced was
// 1 to 2 frames of a page drawing at 7 to 13 fps, as it does with the two cores busy.)
const QUIET_FRAMES = 2;

// Waits for a publication newer than `seq`, then for the page to settle (no newer one for a few frames).
export async function nextHook(page, seq) {
  await page.waitForFunction((s) => window.__moe.seq > s, seq, { timeout: 30000 });
  return settle(page);
}

// The hook once QUIET_FRAMES frames in a row brought no newer publication (counted in the page, one round trip).
export function settle(page) {
  return page.evaluate((quiet) => new Promise((resolve) => {
    let seq = window.__moe.seq, still = 0;
    const tick = () => {
      if (window.__moe.seq !== seq) {
        seq = window.__moe.seq;
        still = 0;
      } else if (++still >= quiet) {
        resolve(window.__moe);
        return;
      }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }), QUIET_FRAMES);
}

// After input that may or may not move anything (a wheel at the end of its range): the hook after the next
// publication, or after `n` frames without one.
function publishedWithin(page, seq, n) {
  return page.evaluate(({ s, k }) => new Promise((resolve) => {
    const tick = () => (window.__moe.seq > s || --k <= 0 ? resolve(window.__moe.seq) : requestAnimationFrame(tick));
    requestAnimationFrame(tick);
  }), { s: seq, k: n });
}

// Waits until the hook satisfies `pred` (a function of the hook, run in the page).
export async function waitHook(page, pred, arg) {
  await page.waitForFunction(pred, arg, { timeout: 30000 });
  return settle(page);
}

// Saves a screenshot of the page, after the page has settled with the mouse in a corner (no hover tooltip in the
// picture), and checks that it is a rendered page (many colours, lib.mjs pngColours).
export async function screenshot(page, name) {
  await page.mouse.move(2, 2);
  await settle(page);
  const file = path.join(ctx.out, name);
  const png = await page.screenshot({ path: file });
  const colours = pngColours(png);
  assert.ok(colours > 20, `${name}: only ${colours} colours, the page did not render`);
  return file;
}

// The page's numbers equal the CLI's (and the node core module's) for the page's own scenario, exactly.
export function assertSameAsCli(h, label) {
  const keys = Object.keys(h.results);
  for (const c of DESIGN_COLUMNS) assert.ok(keys.includes(c), `${label}: column ${c} not published`);
  const cli_ = flatten(cliEval(ctx.cli, h.scenario), keys);
  assert.deepEqual(h.results, cli_, `${label}: page and moe-roofline eval differ`);
  assert.deepEqual(h.results, ctx.core.evalFlat(h.scenario), `${label}: page and the core module differ`);
}

// The page's results equal `moe-roofline eval <before> --set <sets>`: the widget changed exactly that field.
export function assertEditAsCli(before, after, sets, label) {
  const expected = cliEvalSet(ctx.cli, before.scenario, sets);
  assert.deepEqual(after.results, flatten(expected, Object.keys(after.results)), `${label}: page and CLI (--set ${sets}) differ`);
  assert.deepEqual(after.scenario, ctx.core.compact(cliScenarioAfter(before.scenario, sets)), `${label}: scenario`);
}

// The scenario `before` with --set PATH=VALUE applied, as the CLI parses VALUE (numbers, booleans, strings).
export function cliScenarioAfter(scenario, sets) {
  const s = structuredClone(scenario);
  for (const set of sets) {
    const [p, v] = set.split('=');
    const keys = p.split('.');
    let o = s;
    for (const k of keys.slice(0, -1)) o = (o[k] ??= {});
    o[keys.at(-1)] = v === 'true' ? true : v === 'false' ? false : /^-?[0-9.]+$/.test(v) ? Number(v) : v;
  }
  return s;
}

// Scrolls the scenario panel with the mouse wheel until ui[name] is inside it. The first notch (100 px of wheel, one
// ImGui step) measures how far a notch moves the panel; the rest of the way is then one wheel of as many notches.
export async function scrollIntoView(page, name) {
  let step = 0;  // CSS px the panel moves per 100 px of wheel, once measured
  for (let i = 0; i < 40; i++) {
    const [r, p, seq] = await page.evaluate((n) => [window.__moe.ui[n], window.__moe.ui['panel.scenario'], window.__moe.seq], name);
    assert.ok(r && p, `ui["${name}"] / ui["panel.scenario"] not published`);
    if (r.x < p.x || r.x > p.x + p.w) return;  // not in the panel
    const above = r.y < p.y + 6, below = r.y + r.h > p.y + p.h - 6;
    if (!above && !below) return;
    // the distance that brings the item's far edge 12 px inside the panel (6 px margin and 6 more)
    const need = below ? r.y + r.h - (p.y + p.h - 12) : p.y + 12 - r.y;
    const notches = step > 0 ? Math.max(1, Math.min(Math.ceil(need / step), Math.floor((p.h - r.h - 24) / step) || 1)) : 1;
    await page.mouse.move(p.x + p.w / 2, p.y + p.h / 2);
    await page.mouse.wheel(0, (below ? 100 : -100) * notches);
    await publishedWithin(page, seq, 4);
    if (notches === 1 && !step) {
      const [r2] = await rects(page, [name]);
      step = Math.abs(r2.y - r.y);
    }
  }
  assert.fail(`could not scroll ${name} into view`);
}

// A real click at the centre of ui[name]: hover first (a frame sees the item under the mouse), then press and release
// and a frame. (ImGui 1.86's GLFW backend keeps a press seen between two frames as held for one frame, so a press
// and release in the same frame is still a click on the hovered item; the next input comes after that frame.)
export async function click(page, name, { scroll = true } = {}) {
  if (scroll) await scrollIntoView(page, name);
  const [r] = await rects(page, [name]);
  assert.ok(r, `ui["${name}"] not published`);
  await page.mouse.move(r.x + r.w / 2, r.y + r.h / 2);
  await frames(page, 1);
  await page.mouse.down();
  await page.mouse.up();
  await frames(page, 1);
}

// A key held long enough for ImGui to see it (1.86 reads key states once per frame; a press and release between
// two frames would be lost): held for a whole frame, then a frame after the release.
export async function press(page, key) {
  await page.keyboard.down(key);
  await frames(page, 1);
  await page.keyboard.up(key);
  await frames(page, 1);
}

// Types a value into the text field ui[name]: click (which selects all of it), type, Enter. The characters go to
// ImGui's input queue (none is lost between frames); a frame passes before Enter.
export async function typeInto(page, name, text) {
  await click(page, name);
  await page.keyboard.type(text);
  await frames(page, 1);
  await press(page, 'Enter');
}

// The digits a card shows are the CLI's value rounded to as many decimals as the card prints; so are its band's ends
// (issue 28: "p10 870 – p90 1,300 ms", the CLI's serving.*_p10 / _p90). extra: more eval arguments (--engines FILE).
export function assertCardsAsCli(h, label, extra = []) {
  const cli_ = cliEval(ctx.cli, h.scenario, extra);
  // issue 26, one verdict per screen: with serving on, the deployment's fit is the page's, and no warning contradicts it
  assert.equal(h.fits, cli_.serving.fits, `${label}: the page's verdict is the deployment's (serving.fits)`);
  const contra = h.warnings.filter((w) => h.fits ? /does not fit/.test(w) : false);
  assert.deepEqual(contra, [], `${label}: the deployment fits, yet the page warns`);
  const names = Object.keys(h.cards).filter((n) => n.startsWith('card.serving.'));
  assert.equal(names.length, 6, `${label}: serving cards ${JSON.stringify(Object.keys(h.cards))}`);
  for (const name of names) {
    const c = h.cards[name];
    const [area, key] = c.column.split('.');
    const v = cli_[area][key];
    assert.equal(typeof v, 'number', `${label}: ${c.column} = ${v} in moe-roofline eval`);
    const decimals = (c.value.split('.')[1] ?? '').length;
    assert.equal(Number(c.value.replace(/,/g, '')), Number((v / c.scale).toFixed(decimals)),
                 `${label}: ${name} shows ${c.value} ${c.unit}, moe-roofline eval ${c.column} = ${v}`);
    for (const end of ['p10', 'p90']) {
      const shown = c[`band_${end}`] ?? '';
      const want = cli_[area][`${key}_${end}`];
      if (shown === '') {
        assert.ok(want === null || want === undefined || c.sub.startsWith('A '), `${label}: ${name} shows no band, the CLI has ${key}_${end} = ${want}`);
        continue;
      }
      assert.equal(typeof want, 'number', `${label}: ${name} shows a band, the CLI has no ${key}_${end}`);
      const d = (shown.split('.')[1] ?? '').length;
      assert.equal(Number(shown.replace(/,/g, '')), Number((want / c.scale).toFixed(d)),
                   `${label}: ${name} band ${end} ${shown} ${c.unit}, moe-roofline eval ${c.column}_${end} = ${want}`);
      assert.ok(c.sub.includes(`${end} ${shown}`), `${label}: ${name} sub line '${c.sub}' does not show ${end} ${shown}`);
    }
  }
}

// Cards, tabs and the given charts are on screen and do not overlap one another.
export function assertOnScreen(h, names, width, height, label) {
  const rects = names.map((n) => [n, h.ui[n]]);
  for (const [n, r] of rects) {
    assert.ok(r, `${label}: ui["${n}"] not published`);
    assert.ok(r.x >= 0 && r.y >= 0 && r.x + r.w <= width + 0.5 && r.y + r.h <= height + 0.5, `${label}: ${n} off screen ${JSON.stringify(r)}`);
    if (n.startsWith('chart.')) assert.ok(r.w >= 250 && r.h >= 180, `${label}: ${n} too small ${JSON.stringify(r)}`);
  }
  for (let i = 0; i < rects.length; i++) {
    for (let j = i + 1; j < rects.length; j++) {
      const [a, b] = [rects[i][1], rects[j][1]];
      const overlap = a.x < b.x + b.w - 0.5 && b.x < a.x + a.w - 0.5 && a.y < b.y + b.h - 0.5 && b.y < a.y + a.h - 0.5;
      assert.ok(!overlap, `${label}: ${rects[i][0]} overlaps ${rects[j][0]}`);
    }
  }
}

export const SERVING_CARDS = ['ttft', 'tpot', 'gpu', 'user', 'latency', 'gpus'].map((n) => `card.serving.${n}`);
export const STEP_CARDS = [0, 1, 2, 3, 4, 5].map((i) => `card.${i}`);

// Opens a combo ui[path] and clicks its entry `value`.
export async function choose(page, path, value) {
  await click(page, path);
  await waitHook(page, (n) => n in window.__moe.ui, `${path}=${value}`);
  await click(page, `${path}=${value}`, { scroll: false });
}
