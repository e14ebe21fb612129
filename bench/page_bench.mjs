// page_bench.mjs — the page's size and speed (a benchmark, not a test): what the README's "Page" figures come from.
//
//   node bench/page_bench.mjs [--site build-web/site] [--cli build-native/moe-roofline] [--runs 5]
//
//   size:           index.wasm + index.js, raw and gzip -9 (budget: 600 KB gzipped), and the one-file page
//   first results:  performance.now() when the page first published window.__moe (results of the link's scenario),
//                   measured from navigation start, each run in a fresh browser context (no cached wasm) with
//                   software WebGL (SwiftShader), like the browser tests. Budget: 2 s.
//   sweep:          wasm time of the sweep chart's recompute (256 points, every output column), for the default
//                   scenario and the heaviest presets: the fastest of 10 back-to-back recomputes in the page
//                   (Module._moe_page_bench_sweep), and the median of window.__moe.perf.sweep_ms over the page's own
//                   recomputes after a few edits. Budget: 8 ms (one frame).
//   plan:           the Plan tab's search for DeepSeek-V3 on 64 H200 (2K / 1K, TPOT <= 30 ms, every switch on) opened
//                   from a link: wall time from its start to done (slices of ~30 ms per frame) and the wasm compute
//                   time. Budget: 10 s.
// Prints a Markdown table. Runs on one core if started as `taskset -c 0 node bench/page_bench.mjs`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import { spawnSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { chromiumArgs, serve } from '../tests/browser/lib.mjs';

const here = path.dirname(new URL(import.meta.url).pathname);
const { values: opt } = parseArgs({
  options: { site: { type: 'string', default: path.join(here, '../build-web/site') },
             cli: { type: 'string', default: path.join(here, '../build-native/moe-roofline') },
             runs: { type: 'string', default: '5' } },
});
const runs = Math.max(1, Number(opt.runs));
const kb = (n) => (n / 1000).toFixed(0) + ' KB';
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor((s.length - 1) / 2)]; };

// ---- size
const file = (name) => fs.readFileSync(path.join(opt.site, name));
const gz = (b) => zlib.gzipSync(b, { level: 9 }).length;
const wasm = file('index.wasm'), js = file('index.js'), single = file('moe-roofline.html');
const size = { raw: wasm.length + js.length, gzip: gz(wasm) + gz(js), wasmRaw: wasm.length, wasmGz: gz(wasm),
               jsRaw: js.length, jsGz: gz(js), singleRaw: single.length, singleGz: gz(single) };

const link = (id, scenario) => {
  const r = spawnSync(opt.cli, ['url', scenario ? '-' : id, '--base', server.url],
                      { encoding: 'utf8', input: scenario ? JSON.stringify(scenario) : undefined });
  if (r.status !== 0) throw new Error(`moe-roofline url ${id}: ${r.stderr}`);
  return r.stdout.trim();
};

const server = await serve(opt.site);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: chromiumArgs(), headless: true });
try {
  // ---- first results, cold
  const first = [];
  for (let i = 0; i < runs; i++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(link('deepseek-v3-decode-h800-ep128'));
    await page.waitForFunction(() => window.__moe && window.__moe.seq >= 1, null, { timeout: 60000 });
    first.push(await page.evaluate(() => window.__moe.perf.first_results_ms));
    await context.close();
  }

  // ---- sweep compute
  const sweeps = [];
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  for (const [label, url] of [["default (Qwen3-30B-A3B, H200)", server.url],
                              ['DeepSeek-V3 on 32 H800, prefill and decode', link('', { model: 'deepseek-v3', hardware: 'h800',
                                 parallel: { dp: 32, ep: 32 }, runtime: { two_batch_overlap: true } })],
                              ['deepseek-v3-decode-h800-ep128', link('deepseek-v3-decode-h800-ep128')],
                              ['deepseek-v3-prefill-h800-ep32', link('deepseek-v3-prefill-h800-ep32')],
                              ['kimi-k2-decode-h200-ep16', link('kimi-k2-decode-h200-ep16')]]) {
    await page.goto('about:blank');
    await page.goto(url);
    await page.waitForFunction(() => window.__moe && window.__moe.seq >= 1, null, { timeout: 60000 });
    const points = await page.evaluate(() => window.__moe.perf.sweep_points);
    const axis = await page.evaluate(() => window.__moe.view.sweep_axis);
    await page.evaluate(() => Module._moe_page_bench_sweep(20));  // warm up (V8 tiers the wasm up)
    const best = [];
    for (let k = 0; k < 5; k++) best.push(await page.evaluate(() => Module._moe_page_bench_sweep(10)));
    // the page's own recomputes: move the decode context (changes every point of a batch / chunk sweep)
    const own = [];
    for (let k = 0; k < 8; k++) {
      const seq = await page.evaluate(() => window.__moe.seq);
      await page.evaluate((ctx) => {
        const s = window.__moe.scenario;
        s.workload = { ...(s.workload || {}), context_len: ctx };
        const b = btoa(JSON.stringify(s)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
        window.location.hash = 's=' + b;
      }, 3000 + 100 * k);
      await page.waitForFunction((q) => window.__moe.seq > q && window.__moe.scenario.workload?.context_len, seq);
      await page.waitForTimeout(100);
      own.push(await page.evaluate(() => window.__moe.perf.sweep_ms));
    }
    sweeps.push({ label, axis, points, best: Math.min(...best), median: median(own) });
  }
  await context.close();

  // ---- plan on the page (issue 13's target: <= 10 s): DeepSeek-V3 on 64 H200, 2K in / 1K out, TPOT <= 30 ms, every
  // search switch on (aggregated, disaggregated, MTP, formats, overlap); the link opens the Plan tab and runs it
  const planContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const planPage = await planContext.newPage();
  await planPage.goto(link('', { model: 'deepseek-v3', hardware: 'h200', workload: { prompt_len: 2048, output_len: 1024 } }) +
                      '&plan=g64_tpot30_agg_dis_mtp_fmt_tbo');
  await planPage.waitForFunction(() => window.__moe && window.__moe.plan && window.__moe.plan.state === 'done', null,
                                 { timeout: 600000 });
  const plan = await planPage.evaluate(() => window.__moe.plan);
  await planContext.close();

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  console.log(`Page figures (${new Date().toISOString().slice(0, 10)}, ${cpu}, ${os.cpus().length} cores, headless Chromium with SwiftShader)\n`);
  console.log('| what | figure | budget |');
  console.log('|---|---:|---:|');
  console.log(`| index.wasm + index.js, gzip -9 | ${kb(size.gzip)} (${kb(size.wasmGz)} + ${kb(size.jsGz)}; raw ${kb(size.raw)}) | 600 KB |`);
  console.log(`| one-file page moe-roofline.html | ${kb(size.singleRaw)} raw, ${kb(size.singleGz)} gzip | |`);
  console.log(`| first results after navigation, cold (median / worst of ${runs}) | ${median(first).toFixed(0)} / ${Math.max(...first).toFixed(0)} ms | 2000 ms |`);
  console.log(`| plan on the page: DeepSeek-V3 on 64 H200, TPOT <= 30 ms, ${plan.points} points (wall / computing) | ` +
              `${(plan.wall_ms / 1000).toFixed(2)} / ${(plan.compute_ms / 1000).toFixed(2)} s | 10 s |`);
  for (const s of sweeps) {
    console.log(`| sweep chart, ${s.points} points over ${s.axis}: ${s.label} (fastest / median in-page recompute) | ${s.best.toFixed(1)} / ${s.median.toFixed(1)} ms | 8 ms |`);
  }
} finally {
  await browser.close();
  server.stop();
}
