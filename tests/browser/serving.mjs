// serving.mjs — the browser end-to-end tests from (k) on (run.mjs has (a) to (j) and says how they work; two files
// so that `ctest -j2` runs them at once): (k) a typed hardware spec becomes {"base", override}; (l) an invalid layout
// shows the core's words and the link keeps the last valid scenario; (m) Copy link; (n) the Serving section driven
// by real clicks (mode, engine, a pool's − / + steppers), its cards to the last printed digit, its link, its charts
// and sweeps; (t) a Tenstorrent mesh with offloaded experts; (u) speculative decoding and multi-turn sessions over KV
// tiers.
//
//   node tests/browser/serving.mjs --site build-web/site --core build-web/node/moe-core.js \
//        --cli build-native/moe-roofline --out build-web/screenshots
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cli, cliAsync, cliEval, cliEvalSet, flatten } from './lib.mjs';
import { CHARTS, SCENARIO_B, SERVING_CARDS, STEP_CARDS, assertCardsAsCli, assertEditAsCli, assertOnScreen,
         assertSameAsCli, browserSuite, choose, click, ctx, open, reload, screenshot, scrollIntoView, settle, typeInto,
         waitHook } from './page.mjs';

const opt = browserSuite();


test('(k) a typed GPU spec becomes {"base": id, override} and the numbers follow', async () => {
  const { page, context, problems } = await open(ctx.server.url + '#' + ctx.core.urlEncode(SCENARIO_B));
  await click(page, 'hardware.specs');
  await waitHook(page, () => 'hardware.hbm_bandwidth_GBps' in window.__moe.ui);
  const h0 = await settle(page);
  await typeInto(page, 'hardware.hbm_bandwidth_GBps', '4000');
  const h1 = await waitHook(page, () => typeof window.__moe.scenario.hardware === 'object');
  assert.deepEqual(h1.scenario.hardware, { base: 'h800', hbm_bandwidth_GBps: 4000 });
  assertSameAsCli(h1, 'edited GPU');
  assert.notEqual(h1.results['decode.tpot_ms'], h0.results['decode.tpot_ms']);
  assert.deepEqual(problems, []);
  await context.close();
});

test('(l) an invalid layout shows the core\'s own words; the link keeps the last valid scenario', async () => {
  const { page, context, problems } = await open(ctx.server.url + '#' + ctx.core.urlEncode(SCENARIO_B));
  const hash0 = await page.evaluate(() => window.location.hash);
  const h0 = await settle(page);
  await typeInto(page, 'parallel.ep.value', '48');
  const h1 = await waitHook(page, () => window.__moe.results.status === 'error');
  const expected = cliEvalSet(opt.cli, h0.scenario, ['parallel.ep=48']);
  assert.equal(h1.results.error, expected.error);
  assert.ok(h1.errors.some((e) => e.startsWith('parallel.ep: 48 does not divide')), JSON.stringify(h1.errors));
  assert.equal(await page.evaluate(() => window.location.hash), hash0, 'the URL keeps the last valid scenario');
  await screenshot(page, 'invalid-layout.png');
  await typeInto(page, 'parallel.ep.value', '16');
  const h2 = await waitHook(page, () => window.__moe.results.status === 'ok');
  assert.equal(h2.scenario.parallel.ep, 16);
  assertSameAsCli(h2, 'valid again');
  assert.notEqual(await page.evaluate(() => window.location.hash), hash0);
  assert.deepEqual(problems, []);
  await context.close();
});

test('(m) Copy link puts a link to exactly this page on the clipboard', async () => {
  const { page, context, problems } = await open(ctx.server.url + '#' + ctx.core.urlEncode(SCENARIO_B),
                                                { permissions: ['clipboard-read', 'clipboard-write'] });
  await click(page, 'button.copy_link', { scroll: false });
  await waitHook(page, () => window.__moe.last_action === 'copy_link');
  const text = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(text, await page.evaluate(() => window.location.href));
  assert.deepEqual(ctx.core.urlDecode(text.slice(text.indexOf('#'))).scenario, ctx.core.compact(SCENARIO_B));
  assert.deepEqual(problems, []);
  await context.close();
});

test('(n) serving: the Serving section by real clicks, cards to the last digit, the link, charts and sweeps', async () => {
  // issue 28's engines file (below) from `moe-roofline calibrate`, started first: it runs while the page is driven
  const runsCsv = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'validation', 'serving_public.csv');
  const [head, ...rest] = fs.readFileSync(runsCsv, 'utf8').split('\n').filter((l) => l !== '');
  const mine = [head, ...['sglang', 'vllm', 'trtllm'].flatMap((e) => rest.filter((l) => l.split(',')[2] === e).slice(0, 12))];
  const runsPath = path.join(opt.out, 'calibration-runs.csv'), calPath = path.join(opt.out, 'calibration.json');
  fs.writeFileSync(runsPath, mine.join('\n') + '\n');
  const calibrating = cliAsync(opt.cli, ['calibrate', runsPath, '-o', calPath, '--bootstrap', '3', '-q']);
  const { page, context, problems } = await open(ctx.server.url);
  const urlScenario = async () => ctx.core.urlDecode(await page.evaluate(() => window.location.hash)).scenario;
  const h0 = await settle(page);
  assert.equal(h0.results['serving.ttft_ms'], null, 'serving is off by default');
  assert.ok(!('card.serving.ttft' in h0.ui), 'no serving cards while serving is off');

  // mode: aggregated (the combo, then its entry); the Serving tab opens
  await choose(page, 'serving.mode', 'aggregated');
  const h1 = await waitHook(page, () => window.__moe.scenario.serving?.mode === 'aggregated' && window.__moe.view.tab === 4);
  // (issue 26: the Workload's prompt, 4096 by default, becomes the served ISL: one set of request lengths)
  assertEditAsCli(h0, h1, ['serving.mode=aggregated', 'serving.isl=4096'], 'serving mode');
  assert.ok(h1.results['serving.ttft_ms'] > 0 && h1.results['serving.tpot_ms'] > 0, JSON.stringify(h1.results));
  assertCardsAsCli(h1, 'aggregated');

  // engine: vllm
  await choose(page, 'runtime.engine', 'vllm');
  const h2 = await waitHook(page, () => window.__moe.scenario.runtime?.engine === 'vllm');
  assertEditAsCli(h1, h2, ['runtime.engine=vllm'], 'engine combo');
  assertSameAsCli(h2, 'aggregated, vllm');
  assertCardsAsCli(h2, 'aggregated, vllm');
  assert.deepEqual(await urlScenario(), h2.scenario, 'the URL follows the serving edits');
  assert.equal(h2.serving_sweep.points, 64);
  assert.deepEqual(h2.serving_sweep.axis, ['serving.concurrency']);
  assert.ok(h2.serving_sweep.ok_points >= 60, JSON.stringify(h2.serving_sweep));
  assert.ok(h2.serving_sweep.x_first <= (h2.scenario.serving.concurrency ?? 64));
  assertOnScreen(h2, [...SERVING_CARDS, ...STEP_CARDS, 'chart.serving', 'chart.serving_frontier'], 1280, 800, 'Serving tab');
  await scrollIntoView(page, 'derived.serving_gpus');
  await screenshot(page, 'serving.png');

  // the overview still holds every chart under the two rows of cards
  await click(page, 'tab.0', { scroll: false });
  const h3 = await waitHook(page, () => window.__moe.view.tab === 0);
  assertOnScreen(h3, [...SERVING_CARDS, ...STEP_CARDS, ...CHARTS], 1280, 800, 'Overview with serving');
  await screenshot(page, 'serving-overview.png');

  // the Sweep chart on a serving axis: its CSV is `moe-roofline sweep --axis serving.concurrency=...`'s text
  await click(page, 'sweep.x', { scroll: false });
  await waitHook(page, () => 'sweep.x=concurrency' in window.__moe.ui);
  await click(page, 'sweep.x=concurrency', { scroll: false });
  const h4 = await waitHook(page, () => window.__moe.view.sweep_axis === 'concurrency');
  assert.equal(h4.view.sweep_y, 'serving.output_tokens_per_s_per_gpu');
  assert.deepEqual(h4.sweep.axis, ['serving.concurrency']);
  assert.ok(h4.sweep.ok_points >= 100, JSON.stringify(h4.sweep));
  const [download] = await Promise.all([page.waitForEvent('download'), click(page, 'button.csv', { scroll: false })]);
  const csv = fs.readFileSync(await download.path(), 'utf8');
  const xs = csv.trimEnd().split('\n').slice(1).map((l) => l.split(',')[0]);
  assert.equal(xs.length, h4.sweep.points);
  const sw = cli(opt.cli, ['sweep', '-', '--axis', `serving.concurrency=${xs.join(',')}`, '-o', '-', '-q'], h4.scenario);
  assert.equal(sw.status, 0, sw.stderr);
  assert.equal(csv, sw.stdout, 'the page\'s serving sweep CSV differs from moe-roofline sweep');

  // disaggregated: the decode pool's DP and EP through their + buttons (compact JSON nests serving.decode.parallel.ep)
  await choose(page, 'serving.mode', 'disaggregated');
  const h5 = await waitHook(page, () => window.__moe.scenario.serving?.mode === 'disaggregated');
  assertEditAsCli(h4, h5, ['serving.mode=disaggregated'], 'disaggregated');
  await click(page, 'serving.decode.parallel.dp.plus');
  const h6 = await waitHook(page, () => window.__moe.scenario.serving?.decode?.parallel?.dp === 2);
  assertEditAsCli(h5, h6, ['serving.decode.parallel.dp=2'], 'decode DP +');
  await click(page, 'serving.decode.parallel.ep.plus');
  const h7 = await waitHook(page, () => window.__moe.scenario.serving?.decode?.parallel?.ep === 2);
  assertEditAsCli(h6, h7, ['serving.decode.parallel.ep=2'], 'decode EP +');
  await click(page, 'serving.prefill.workers.plus');
  const h8 = await waitHook(page, () => window.__moe.scenario.serving?.prefill?.workers === 2);
  assertEditAsCli(h7, h8, ['serving.prefill.workers=2'], 'prefill workers +');
  assert.deepEqual(h8.scenario.serving, { mode: 'disaggregated', isl: 4096, concurrency: 64, decode: { parallel: { dp: 2, ep: 2 } }, prefill: { workers: 2 } });
  assert.equal(h8.results['serving.gpus'], 4);
  assert.ok(h8.results['serving.kv_transfer_ms'] > 0, JSON.stringify(h8.results));
  assertSameAsCli(h8, 'disaggregated');
  assert.deepEqual(await urlScenario(), h8.scenario, 'the URL carries the pools');
  await click(page, 'tab.4', { scroll: false });
  const h9 = await waitHook(page, () => window.__moe.view.tab === 4 && window.__moe.serving_sweep.axis[0] === 'serving.concurrency');
  assertCardsAsCli(h9, 'disaggregated');
  assertOnScreen(h9, [...SERVING_CARDS, ...STEP_CARDS, 'chart.serving', 'chart.serving_frontier'], 1280, 800, 'disaggregated');
  await scrollIntoView(page, 'derived.serving_gpus');
  await screenshot(page, 'serving-disaggregated.png');

  // the link restores the serving fields, the numbers and the Serving tab
  const hash = await page.evaluate(() => window.location.hash);
  await reload(page, ctx.server.url + hash);
  const h10 = await waitHook(page, () => window.__moe.view.tab === 4);
  assert.equal(h10.notice, '');
  assert.deepEqual(h10.scenario, h8.scenario);
  assert.deepEqual(h10.results, h8.results);
  assertCardsAsCli(h10, 'restored link');
  // and `moe-roofline url` gives a link the page reads the same way
  const u = cli(opt.cli, ['url', '-', '--base', ctx.server.url], h8.scenario);
  assert.equal(u.status, 0, u.stderr);
  assert.equal(u.stdout.trim(), ctx.server.url + hash.replace(/&.*$/, ''));

  // issue 28: Load calibration (an engines file from `moe-roofline calibrate`): every number and the cards' p10 .. p90
  // band are `moe-roofline eval --engines FILE`'s; the chart shades the band; Shipped constants goes back
  const cal = await calibrating;
  assert.equal(cal.status, 0, cal.stderr);
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), click(page, 'button.load_calibration', { scroll: false })]);
  await chooser.setFiles(calPath);
  const h11 = await waitHook(page, () => window.__moe.calibration === 'calibration.json' && window.__moe.cards['card.serving.ttft']?.band_p10 !== '');
  assert.deepEqual(h11.results, flatten(cliEval(opt.cli, h11.scenario, ['--engines', calPath]), Object.keys(h11.results)), 'calibrated');
  assertCardsAsCli(h11, 'calibrated', ['--engines', calPath]);
  for (const n of ['card.serving.ttft', 'card.serving.tpot', 'card.serving.gpu']) assert.notEqual(h11.cards[n].band_p90, '', n);
  await screenshot(page, 'serving-calibrated.png');
  await click(page, 'button.shipped_engines', { scroll: false });
  const h12 = await waitHook(page, () => window.__moe.calibration === '');
  assert.deepEqual(h12.results, h10.results, 'Shipped constants restores the numbers');
  assert.deepEqual(problems, []);
  await context.close();
});

test('(t) a Tenstorrent mesh with offloaded experts: the page shows the topology, the hops and the streaming', async () => {
  // seed 004's layout on the Galaxy preset, plus experts beyond a cache of 4 per layer streamed from host memory
  const s = { model: 'deepseek-v3', hardware: 'wormhole-galaxy', parallel: { tp: 8, dp: 4, ep: 32 },
              workload: { phase: 'decode', batch: 32 }, precision: { experts: 'mxfp4', dispatch: 'bf16' },
              runtime: { expert_offload: { tier: 'host', cached_experts_per_layer: 4 } } };
  const { page, context, problems } = await open(ctx.server.url + '#' + ctx.core.urlEncode(s));
  const h = await settle(page);
  assert.equal(h.results.status, 'ok', JSON.stringify(h.errors));
  assert.ok(h.results['decode.offload_ms'] > 0, 'no streaming exposed');
  assert.ok(h.results['memory.offloaded_experts_bytes'] > 0);
  assert.ok(h.results['memory.offload_hit_rate'] < 1);
  assertSameAsCli(h, 'mesh with offload');
  assert.ok(h.ui['hardware.topology_summary'], 'the Hardware panel shows the topology');
  await screenshot(page, 'mesh-offload.png');
  // the topology is editable: a line instead of a ring changes the dispatch
  await click(page, 'hardware.specs');
  await waitHook(page, () => 'hardware.mesh_wrap' in window.__moe.ui);
  await click(page, 'hardware.mesh_wrap');
  await waitHook(page, () => 'hardware.mesh_wrap=line' in window.__moe.ui);
  await click(page, 'hardware.mesh_wrap=line', { scroll: false });
  const h2 = await waitHook(page, () => window.__moe.scenario.hardware?.mesh_wrap === 'line');
  assert.notEqual(h2.results['decode.step_ms'], h.results['decode.step_ms']);
  assertSameAsCli(h2, 'mesh as a line');
  await screenshot(page, 'mesh-hardware-panel.png');
  assert.deepEqual(problems, []);
  await context.close();
});

test('(u) speculative decoding by acceptance and multi-turn sessions over KV tiers: real input, page = moe-roofline eval', async () => {
  // Qwen3-30B-A3B on one H100 serving 5-turn sessions (a 2,000-token system prompt, 500 user and 300 answer tokens a
  // turn, 30 s between turns) with 64 GB of host memory per GPU for evicted KV, and n-gram drafting
  const s = { model: 'qwen3-30b-a3b', hardware: 'h100-sxm',
              serving: { mode: 'aggregated', osl: 300, concurrency: 64, requests_per_client: 10 },
              workload: { sessions: { turns: 5, system_prompt_len: 2000, user_len: 500, think_time_s: 30 } },
              runtime: { kv_offload: { host_GB: 64 }, speculative: { method: 'ngram', draft_tokens: 2, acceptance: [0.7, 0.5] } } };
  const { page, context, problems } = await open(ctx.server.url + '#' + ctx.core.urlEncode(s));
  const h0 = await settle(page);
  assert.equal(h0.results.status, 'ok', JSON.stringify(h0.errors));
  assert.ok(h0.results['serving.prefix_hit_rate_gpu'] > 0.2, JSON.stringify(h0.results));
  assert.ok(h0.results['serving.prefix_hit_rate_host'] > 0.2, JSON.stringify(h0.results));
  assert.ok(h0.results['serving.kv_bytes_moved_per_token'] > 0);
  assertSameAsCli(h0, 'sessions over a host tier, n-gram drafts');
  assertCardsAsCli(h0, 'sessions over a host tier');
  assert.ok(h0.ui['derived.kv_tiers'], 'the Serving section shows the hit rates per tier');
  // the draft method by its combo, then a published acceptance curve
  await choose(page, 'runtime.speculative.method', 'eagle');
  const h1 = await waitHook(page, () => window.__moe.scenario.runtime?.speculative?.method === 'eagle');
  assertEditAsCli(h0, h1, ['runtime.speculative.method=eagle'], 'speculative method');
  await choose(page, 'runtime.speculative.acceptance', 'eagle3-llama3.1-8b-mtbench');
  const h2 = await waitHook(page, () => window.__moe.scenario.runtime?.speculative?.acceptance === 'eagle3-llama3.1-8b-mtbench');
  assertEditAsCli(h1, h2, ['runtime.speculative.acceptance=eagle3-llama3.1-8b-mtbench'], 'acceptance curve');
  // back to rates per position, typed
  await choose(page, 'runtime.speculative.acceptance', 'per position');
  await waitHook(page, () => Array.isArray(window.__moe.scenario.runtime?.speculative?.acceptance));
  await typeInto(page, 'runtime.speculative.acceptance.rates', '0.9, 0.6');
  const h3 = await waitHook(page, () => JSON.stringify(window.__moe.scenario.runtime?.speculative?.acceptance) === '[0.9,0.6]');
  assertSameAsCli(h3, 'typed acceptance rates');
  // the think time between turns, typed: shorter waits keep more sessions in HBM
  await typeInto(page, 'workload.sessions.think_time_s', '5');
  const h4 = await waitHook(page, () => window.__moe.scenario.workload?.sessions?.think_time_s === 5);
  assertEditAsCli(h3, h4, ['workload.sessions.think_time_s=5'], 'think time');
  assertCardsAsCli(h4, 'think time 5 s');
  // seed 001's expert kernel and the fused MoE's chunk (issue 30), by their controls
  await choose(page, 'runtime.moe_kernel', 'triton');
  const h5 = await waitHook(page, () => window.__moe.scenario.runtime?.moe_kernel === 'triton');
  assertEditAsCli(h4, h5, ['runtime.moe_kernel=triton'], 'expert kernel');
  await typeInto(page, 'runtime.moe_chunk_tokens', '4096');
  const h6 = await waitHook(page, () => window.__moe.scenario.runtime?.moe_chunk_tokens === 4096);
  assertEditAsCli(h5, h6, ['runtime.moe_chunk_tokens=4096'], 'MoE chunk tokens');
  await scrollIntoView(page, 'derived.kv_tiers');
  await screenshot(page, 'sessions-kv-tiers.png');
  await scrollIntoView(page, 'runtime.speculative.acceptance');
  await screenshot(page, 'speculative.png');
  assert.deepEqual(problems, []);
  await context.close();
});
