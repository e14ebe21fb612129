// run.mjs — browser end-to-end tests of the page: Playwright (playwright-core) driving Debian's Chromium with
// software WebGL2 (SwiftShader). The page publishes window.__moe = {seq, scenario, results, ui, ...} after every
// recompute, so these tests assert numbers and widget rectangles, not pixels; the screenshots they save (in --out)
// are for people to look at.
//
//   node tests/browser/run.mjs --site build-web/site --core build-web/node/moe-core.js \
//        --cli build-native/moe-roofline --out build-web/screenshots
//
// One browser, a few pages; serving.mjs has the tests from (k) on (a second ctest entry, browser_serving, so that
// `ctest -j2` runs the two halves at once). What is checked:
//   (a) the page loads without console errors, every chart is on screen at 1280x800 and 1280x720, the canvas and
//       the widgets follow a resize; (b) a scenario in the URL and a later hashchange; (c) every preset scenario's
//       link (`moe-roofline url ID`) gives `moe-roofline eval ID` to the last digit; (d) real mouse input on the
//       batch slider, the all-to-all combo and the two-batch-overlap checkbox changes the results exactly as the
//       CLI says for the edited scenario, and the URL follows; (e) HiDPI; (f) the one-file page from file://;
//       (g) hostile fragments show a notice and the defaults; (h) the sweep CSV is `moe-roofline sweep`'s text;
//       (i) compare A/B, restored from its link; (j) a dropped config.json / scenario file, Save / Load JSON and a
//       pasted link.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { DESIGN_COLUMNS, cli, cliEval, flatten } from './lib.mjs';
import { CHARTS, SCENARIO_B, assertEditAsCli, assertOnScreen, assertSameAsCli, browserSuite, click, ctx, frames, gotoHash,
         nextHook, open, reload, screenshot, scrollIntoView, settle, waitHook } from './page.mjs';

const opt = browserSuite();
const repo = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

function assertChartsOnScreen(h, width, height, label) {
  assertOnScreen(h, [...CHARTS, ...[0, 1, 2, 3, 4, 5].map((i) => `card.${i}`)], width, height, label);
}

test('(a) the page loads without console errors, shows every chart, and follows a resize', async () => {
  const { page, context, problems } = await open(ctx.server.url);
  const h = await settle(page);
  assert.equal(h.results.status, 'ok', JSON.stringify(h.errors));
  for (const c of DESIGN_COLUMNS) assert.ok(c in h.results, `column ${c} missing`);
  assert.equal(h.notice, '');
  assertChartsOnScreen(h, 1280, 800, '1280x800');
  for (const name of ['model', 'hardware', 'parallel.tp', 'parallel.dp', 'parallel.ep', 'workload.batch']) {
    const r = h.ui[name];
    assert.ok(r && r.w > 0 && r.h > 0 && r.x >= 0 && r.y >= 0 && r.x + r.w <= 1280 && r.y + r.h <= 800,
              `ui.${name} = ${JSON.stringify(r)}`);
  }
  assert.ok(h.perf.sweep_points >= 200, JSON.stringify(h.perf));
  await screenshot(page, 'page.png');

  // Usable at 1280x720: every chart still on screen, nothing overlapping.
  await page.setViewportSize({ width: 1280, height: 720 });
  const h720 = await nextHook(page, h.seq);
  assertChartsOnScreen(h720, 1280, 720, '1280x720');
  await screenshot(page, 'page-1280x720.png');

  // The canvas follows the window: a narrower window moves the widgets and republishes their rectangles.
  await page.setViewportSize({ width: 900, height: 640 });
  const h2 = await nextHook(page, h720.seq);
  const canvas = await page.evaluate(() => [document.getElementById('canvas').width, document.getElementById('canvas').height]);
  assert.deepEqual(canvas, [900, 640]);
  assert.ok(h2.ui['workload.batch'].w < h.ui['workload.batch'].w, 'the slider did not shrink with the window');
  assert.ok(h2.ui['chart.frontier'].x + h2.ui['chart.frontier'].w <= 900);
  assert.deepEqual(problems, []);
  await context.close();
});

test('(b) a scenario in the URL, and a later hashchange, change the published numbers', async () => {
  const base = ctx.core.evalFlat({});
  const { page, context, problems } = await open(ctx.server.url + '#' + ctx.core.urlEncode(SCENARIO_B));
  const h = await settle(page);
  assert.deepEqual(h.scenario, ctx.core.compact(SCENARIO_B));
  assert.equal(h.results.status, 'ok', JSON.stringify(h.errors));
  assert.notEqual(h.results['decode.tpot_ms'], base['decode.tpot_ms']);
  assert.notEqual(h.results['model.total_params'], base['model.total_params']);
  assertSameAsCli(h, 'scenario from the URL');
  assertChartsOnScreen(h, 1280, 800, 'scenario');
  await screenshot(page, 'scenario.png');

  const other = { model: 'qwen3-235b-a22b', hardware: 'h20', parallel: { tp: 4, dp: 2, ep: 8 } };
  await page.evaluate((f) => { window.location.hash = f; }, ctx.core.urlEncode(other));
  const h2 = await waitHook(page, (m) => window.__moe.scenario.model === m, 'qwen3-235b-a22b');
  assert.deepEqual(h2.scenario, ctx.core.compact(other));
  assert.notEqual(h2.results['decode.tpot_ms'], h.results['decode.tpot_ms']);
  assertSameAsCli(h2, 'scenario after hashchange');
  assert.deepEqual(problems, []);
  await context.close();
});

test('(c) every preset scenario loaded through its link gives `moe-roofline eval ID` to the last digit', async () => {
  const ids = ctx.core.presets().scenarios;
  assert.ok(ids.length >= 8, `only ${ids.length} preset scenarios`);
  const links = ids.map((id) => {
    const u = cli(opt.cli, ['url', id, '--base', ctx.server.url]);
    assert.equal(u.status, 0, u.stderr);
    assert.ok(u.stdout.startsWith(ctx.server.url + '#'), u.stdout);
    return u.stdout.trim();
  });
  // The first link opens the page; each next one is followed in the same tab (a hashchange: the page reads it with
  // the same load_fragment as at start-up, without instantiating the wasm again).
  const { page, context, problems } = await open(links[0]);
  for (const [i, id] of ids.entries()) {
    const h = i === 0 ? await settle(page) : await gotoHash(page, links[i].slice(links[i].indexOf('#')));
    assert.equal(h.notice, '', `${id}: ${h.notice}`);
    const e = cli(opt.cli, ['eval', id, '--format', 'json']);
    assert.equal(e.status, 0, e.stderr);
    const expected = flatten(JSON.parse(e.stdout), Object.keys(h.results));
    assert.deepEqual(h.results, expected, `${id}: page and moe-roofline eval ${id} differ`);
    assert.equal(h.results.status, 'ok', `${id}: ${h.results.error}`);
    if (id === 'deepseek-v3-prefill-h800-ep32') await screenshot(page, 'preset-prefill.png');
    if (id === 'kimi-k2-decode-h200-ep16') await screenshot(page, 'preset-kimi.png');
  }
  assert.deepEqual(problems, []);
  await context.close();
});

// Drags the batch slider's grab from its left end to 80% of the frame with real mouse events.
async function dragBatch(page, dpr) {
  await scrollIntoView(page, 'workload.batch');
  const h = await settle(page);
  const r = h.ui['workload.batch'];
  assert.ok(r, 'ui["workload.batch"] is published');
  const y = r.y + r.h / 2;
  await page.mouse.move(r.x + 3, y);
  await frames(page, 1);
  await page.mouse.down();
  await frames(page, 1);
  await page.mouse.move(r.x + 3 + (r.w * 0.8 - 3), y, { steps: 10 });  // ten mouse moves, as a hand drags
  await frames(page, 1);  // the grab at its last position while the button is held
  await page.mouse.up();
  const h2 = await nextHook(page, h.seq);
  assert.equal(h2.dpr, dpr);
  return { before: h, after: h2 };
}

test('(d) real mouse input on the batch slider, the all-to-all combo and the overlap checkbox', async () => {
  const { page, context, problems } = await open(ctx.server.url + '#' + ctx.core.urlEncode(SCENARIO_B));
  const urlScenario = async () => ctx.core.urlDecode(await page.evaluate(() => window.location.hash)).scenario;

  // batch: a drag
  const { before: h0, after: h1 } = await dragBatch(page, 1);
  const b1 = h1.scenario.workload?.batch;
  assert.ok(b1 > 64 * 4, `batch went from 64 to ${b1}`);
  assertEditAsCli(h0, h1, [`workload.batch=${b1}`], 'batch slider');
  assertSameAsCli(h1, 'after the drag');
  assert.deepEqual(await urlScenario(), h1.scenario, 'the URL follows the drag');
  await screenshot(page, 'after-drag.png');

  // all-to-all backend: open the combo, click an entry
  await click(page, 'runtime.a2a_backend');
  await waitHook(page, () => 'runtime.a2a_backend=deepep_low_latency' in window.__moe.ui);
  await click(page, 'runtime.a2a_backend=deepep_low_latency', { scroll: false });
  const h2 = await waitHook(page, () => window.__moe.scenario.runtime?.a2a_backend === 'deepep_low_latency');
  assertEditAsCli(h1, h2, ['runtime.a2a_backend=deepep_low_latency'], 'a2a combo');
  assert.notEqual(h2.results['prefill.step_ms'], h1.results['prefill.step_ms']);
  assert.deepEqual(await urlScenario(), h2.scenario, 'the URL follows the combo');

  // two-batch overlap: a click on the checkbox turns it off
  await click(page, 'runtime.two_batch_overlap');
  const h3 = await waitHook(page, () => window.__moe.scenario.runtime?.two_batch_overlap === undefined);
  assertEditAsCli(h2, h3, ['runtime.two_batch_overlap=false'], 'overlap checkbox');
  assert.notEqual(h3.results['decode.step_ms'], h2.results['decode.step_ms']);
  assert.deepEqual(await urlScenario(), h3.scenario, 'the URL follows the checkbox');
  assertSameAsCli(h3, 'after three edits');
  assert.deepEqual(problems, []);
  await context.close();
});

test('(e) HiDPI: at devicePixelRatio 2 the rectangles are CSS pixels and the drag still lands', async () => {
  const { page, context, problems } = await open(ctx.server.url, { dpr: 2, width: 1000, height: 700 });
  const h = await settle(page);
  assert.equal(h.dpr, 2);
  const canvas = await page.evaluate(() => {
    const c = document.getElementById('canvas');
    return { w: c.width, h: c.height, cssW: c.clientWidth, cssH: c.clientHeight };
  });
  assert.deepEqual(canvas, { w: 2000, h: 1400, cssW: 1000, cssH: 700 });
  const { before: h1, after: h2 } = await dragBatch(page, 2);  // scrolls the panel with the wheel first
  const r = h1.ui['workload.batch'];
  assert.ok(r.x + r.w <= 1000 && r.y + r.h <= 700, JSON.stringify(r));
  assert.ok((h2.scenario.workload?.batch ?? 64) > 256, JSON.stringify(h2.scenario));
  await screenshot(page, 'page-hidpi.png');
  assert.deepEqual(problems, []);
  await context.close();
});

test('(f) the one-file page works from file://, and the defaults equal the CLI', async () => {
  const file = path.resolve(opt.site, 'moe-roofline.html');
  const html = fs.readFileSync(file, 'utf8');
  assert.ok(!/src=["'][^"']*\.(js|wasm)["']/.test(html), 'moe-roofline.html refers to another file');
  const { page, context, problems } = await open('file://' + file + '#' + ctx.core.urlEncode(SCENARIO_B));
  const h = await settle(page);
  assert.deepEqual(h.scenario, ctx.core.compact(SCENARIO_B));
  assertSameAsCli(h, 'one-file page');
  assertChartsOnScreen(h, 1280, 800, 'file://');
  await screenshot(page, 'single-file.png');
  await page.evaluate(() => { window.location.hash = ''; });
  const h2 = await waitHook(page, () => Object.keys(window.__moe.scenario).length === 0);
  assertSameAsCli(h2, 'defaults');
  assert.deepEqual(problems, []);
  await context.close();
});

test('(g) hostile fragments show a notice and the defaults, inject nothing, log no errors', async () => {
  const b64 = (s) => Buffer.from(s).toString('base64url');
  const valid = ctx.core.urlEncode(SCENARIO_B).slice(2);
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const garbage = Array.from({ length: 1 << 20 }, () => String.fromCharCode(33 + Math.floor(rnd() * 94))).join('');
  const frags = [
    ['markup', '#s=' + b64('{"model":"<img src=x onerror=\\"window.__pwned=1\\">","workload":{"batch":"<script>window.__pwned=2</script>"}}')],
    ['markup, not encoded', '#s=' + encodeURIComponent('<img src=x onerror=window.__pwned=3>')],
    ['1 MB of base64', '#s=' + 'A'.repeat(1 << 20)],
    ['1 MB of garbage', '#s=' + encodeURIComponent(garbage)],
    ['truncated (1 char short of a quad)', '#s=' + valid.slice(0, Math.floor(valid.length / 4) * 4 - 3)],
    ['truncated (half)', '#s=' + valid.slice(0, Math.floor(valid.length / 2))],
    ['wrong type: batch', '#s=' + b64('{"workload":{"batch":"many"}}')],
    ['wrong type: fraction', '#s=' + b64('{"parallel":{"tp":1.5}}')],
    ['wrong type: model', '#s=' + b64('{"model":42}')],
    ['wrong type: array', '#s=' + b64('[1,2,3]')],
    ['not UTF-8', '#s=' + Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]).toString('base64url')],
    ['no scenario', '#x=<script>alert(1)</script>&y=%00'],
  ];
  // The first fragment opens the page; each next one is a hashchange in the same tab (the same load_fragment as at
  // start-up reads it); the last case below is a fresh load again.
  const { page, context, problems } = await open(ctx.server.url + frags[0][1]);
  for (const [what, frag] of frags) {
    const h = frag === frags[0][1] ? await settle(page) : await gotoHash(page, frag);
    assert.ok(h.notice.length > 0, `${what}: no notice`);
    assert.deepEqual(h.scenario, ctx.core.compact({}), `${what}: not the defaults`);
    assert.equal(h.results.status, 'ok', what);
    const dom = await page.evaluate(() => ({
      pwned: window.__pwned, imgs: document.images.length, scripts: document.scripts.length,
      body: document.body.children.length,
    }));
    assert.equal(dom.pwned, undefined, what);
    assert.equal(dom.imgs, 0, what);
    if (what === 'markup') await screenshot(page, 'bad-fragment.png');
    assert.deepEqual(problems, [], what);
  }
  // A valid scenario with a hostile pinned A and view: the scenario loads, A is refused with a notice.
  await reload(page, ctx.server.url + '#s=' + valid + '&a=' + b64('{"model":"<b>x</b>"}') + '&x=%3Cimg%3E&y=__proto__');
  const h = await settle(page);
  assert.deepEqual(h.scenario, ctx.core.compact(SCENARIO_B));
  assert.equal(h.compare, null);
  assert.ok(h.notice.includes('A'), h.notice);
  assert.equal(h.view.sweep_axis, 'batch');
  assert.deepEqual(problems, []);
  await context.close();
});

test('(h) the sweep CSV download is `moe-roofline sweep`\'s text for the same points', async () => {
  const { page, context, problems } = await open(ctx.server.url + '#' + ctx.core.urlEncode(SCENARIO_B));
  const h = await settle(page);
  assert.equal(h.view.sweep_axis, 'batch');
  const [download] = await Promise.all([page.waitForEvent('download'), click(page, 'button.csv', { scroll: false })]);
  const csv = fs.readFileSync(await download.path(), 'utf8');
  const lines = csv.trimEnd().split('\n');
  assert.equal(lines.length - 1, h.sweep.points, 'one row per point');
  const xs = lines.slice(1).map((l) => l.split(',')[0]);
  const r = cli(opt.cli, ['sweep', '-', '--axis', `workload.batch=${xs.join(',')}`, '-o', '-', '-q'], h.scenario);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(csv, r.stdout, 'the page\'s CSV differs from moe-roofline sweep');
  assert.deepEqual(problems, []);
  await context.close();
});

test('(i) compare: pin A, edit B, both evaluated as the CLI says, and the link restores both', async () => {
  const { page, context, problems } = await open(ctx.server.url + '#' + ctx.core.urlEncode(SCENARIO_B));
  await click(page, 'button.pin', { scroll: false });
  const h1 = await waitHook(page, () => window.__moe.compare !== null && window.__moe.view.tab === 1);
  assert.deepEqual(h1.compare.scenario, h1.scenario);
  await click(page, 'runtime.two_batch_overlap');
  const h2 = await waitHook(page, () => window.__moe.scenario.runtime?.two_batch_overlap === undefined);
  assert.deepEqual(h2.compare.scenario, ctx.core.compact(SCENARIO_B), 'A stays pinned');
  assertSameAsCli(h2, 'B');
  assert.deepEqual(h2.compare.results, flatten(cliEval(opt.cli, h2.compare.scenario), Object.keys(h2.compare.results)), 'A');
  assert.notEqual(h2.results['decode.step_ms'], h2.compare.results['decode.step_ms']);
  await screenshot(page, 'compare-table.png');
  await click(page, 'tab.0', { scroll: false });
  await waitHook(page, () => window.__moe.view.tab === 0);
  await screenshot(page, 'compare-charts.png');

  const hash = await page.evaluate(() => window.location.hash);
  assert.ok(hash.includes('&a='), hash);
  await reload(page, ctx.server.url + hash);
  const h3 = await settle(page);
  assert.deepEqual(h3.scenario, h2.scenario);
  assert.deepEqual(h3.compare, h2.compare);
  assert.deepEqual(problems, []);
  await context.close();
});

test('(j) a dropped config.json becomes the model, a dropped scenario file loads, Save / Load JSON, a pasted link opens', async () => {
  const { page, context, problems } = await open(ctx.server.url);
  const drop = (name, text) => page.evaluate(({ name, text }) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], name, { type: 'application/json' }));
    document.getElementById('canvas').dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, { name, text });

  // an HF config (Qwen3-8B's, renamed): the model becomes that config
  const config = JSON.parse(fs.readFileSync(path.join(repo, 'presets/models/qwen3-8b.json'), 'utf8'));
  config._name_or_path = 'my-org/my-model';
  await drop('config.json', JSON.stringify(config));
  const h1 = await waitHook(page, () => typeof window.__moe.scenario.model === 'object');
  assert.equal(h1.last_action, 'load:config');
  assert.equal(h1.scenario.model.hidden_size, config.hidden_size);
  assert.equal(h1.notice, '');
  assertSameAsCli(h1, 'dropped config');
  await screenshot(page, 'dropped-config.png');

  // a scenario file
  const scen = { model: 'mixtral-8x7b', hardware: 'a100-sxm-80g', parallel: { tp: 2 }, workload: { batch: 32 } };
  await drop('scenario.json', JSON.stringify(scen));
  const h2 = await waitHook(page, () => window.__moe.scenario.model === 'mixtral-8x7b');
  assert.deepEqual(h2.scenario, ctx.core.compact(scen));
  assertSameAsCli(h2, 'dropped scenario');

  // a file that is neither: a notice, nothing changed
  await drop('notes.json', '{"hello": [1, 2');
  const h3 = await waitHook(page, () => window.__moe.notice !== '');
  assert.deepEqual(h3.scenario, h2.scenario);

  // Save JSON downloads the scenario; `moe-roofline eval FILE` gives the page's numbers; Load JSON reads it back
  const [saved] = await Promise.all([page.waitForEvent('download'), click(page, 'button.save_json', { scroll: false })]);
  const savedPath = await saved.path();
  assert.deepEqual(JSON.parse(fs.readFileSync(savedPath, 'utf8')), h3.scenario);
  const ev = cli(opt.cli, ['eval', savedPath, '--format', 'json']);
  assert.equal(ev.status, 0, ev.stderr);
  assert.deepEqual(h3.results, flatten(JSON.parse(ev.stdout), Object.keys(h3.results)), 'saved file and page differ');
  const other = path.join(opt.out, 'load-test-scenario.json');
  fs.writeFileSync(other, JSON.stringify({ model: 'gpt-oss-120b', hardware: 'h100-sxm' }));
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), click(page, 'button.load_json', { scroll: false })]);
  await chooser.setFiles(other);
  const hl = await waitHook(page, () => window.__moe.scenario.model === 'gpt-oss-120b');
  assert.deepEqual(hl.scenario, ctx.core.compact({ model: 'gpt-oss-120b', hardware: 'h100-sxm' }));
  assert.equal(hl.notice, '');
  assertSameAsCli(hl, 'loaded file');

  // a pasted link while no text field has focus
  const link = ctx.server.url + '#' + ctx.core.urlEncode(SCENARIO_B);
  await page.evaluate((text) => {
    const dt = new DataTransfer();
    dt.setData('text/plain', text);
    window.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt }));
  }, link);
  const h4 = await waitHook(page, () => window.__moe.scenario.model === 'deepseek-v3');
  assert.deepEqual(h4.scenario, ctx.core.compact(SCENARIO_B));
  assert.equal(h4.notice, '');

  // issue 29: a dropped request trace (.csv, the CLI's format) is the workload, serving switched on; the page's numbers
  // are `moe-roofline eval SCENARIO --set workload.trace=FILE`'s
  const traceCsv = 'isl,osl,prefix_id,prefix_len\n1000,64,sys,600\n1200,64,,\n800,80,sys,600\n1500,64,sys,600\n';
  await drop('trace.csv', traceCsv);
  const h5 = await waitHook(page, () => window.__moe.last_action === 'load:trace');
  assert.equal(h5.notice, '');
  assert.equal(h5.scenario.workload.trace.length, 4);
  assert.equal(h5.scenario.serving.mode, 'aggregated');
  assertSameAsCli(h5, 'dropped trace');
  const tracePath = path.join(opt.out, 'dropped-trace.csv');
  fs.writeFileSync(tracePath, traceCsv);
  const base = JSON.parse(JSON.stringify(h5.scenario));
  delete base.workload.trace;
  const basePath = path.join(opt.out, 'dropped-trace-scenario.json');
  fs.writeFileSync(basePath, JSON.stringify(base));
  const et = cli(opt.cli, ['eval', basePath, '--set', `workload.trace=${tracePath}`, '--format', 'json']);
  assert.equal(et.status, 0, et.stderr);
  assert.deepEqual(h5.results, flatten(JSON.parse(et.stdout), Object.keys(h5.results)), 'dropped trace and eval --set workload.trace differ');
  // (32 attention-DP ranks: each simulates every 32nd request, so these four never meet on one rank's cache)
  assert.ok(h5.results['serving.ttft_ms'] > 0 && h5.results['serving.requests_per_s'] > 0, 'the trace is served');
  await screenshot(page, 'dropped-trace.png');
  // a bad line: a notice naming the file and line, the scenario unchanged
  await drop('bad-trace.csv', 'isl,osl\n1000,64\n-3,64\n');
  const h6 = await waitHook(page, () => window.__moe.notice !== '');
  assert.match(h6.notice_details.join(' '), /bad-trace\.csv line 3: isl/);
  assert.deepEqual(h6.scenario, h5.scenario);
  assert.deepEqual(problems, []);
  await context.close();
});
