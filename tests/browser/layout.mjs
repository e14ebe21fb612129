// layout.mjs — browser tests of issue 26: answers a user can act on, and a page whose labels neither overlap nor
// get cut. Run like run.mjs:
//
//   node tests/browser/layout.mjs --site build-web/site --core build-web/node/moe-core.js \
//        --cli build-native/moe-roofline --out build-web/screenshots
//
//   (u) one set of request lengths: turning serving on carries the Workload's prompt and output into ISL / OSL, the
//       step cards show the serving workload's steps (to the last digit of `moe-roofline eval` on the scenario the
//       hook publishes as steps.scenario), one fit verdict (the deployment's); disaggregated pools start from the
//       Parallelism layout, "fit the pools to N GPUs" gives N GPUs that fit; a model that does not fit says the
//       smallest GPU count that holds it and "use N GPUs" loads a layout that fits, as the CLI says.
//   (v) the Plan tab: the selected row's launch command (and its Copy button), the CSV export is the bytes of
//       `moe-roofline plan --format csv` for the same search, a hovered row shows a tooltip and its point, the table
//       scrolls sideways instead of cutting columns; Compare A/B lists the serving outputs.
//   (w) at 1280x720 and 800x600, on the Overview (serving off and on), the Serving and the Plan tabs: no text box the
//       page drew overlaps another, none is cut by its clip, tabs and the phase switch do not overlap; screenshots.
//   (x) requests of mixed lengths (seed 000 §8.1): prompt lengths and decode contexts typed in the Workload section
//       give `moe-roofline eval`'s numbers for the same lists; a prompt past the largest bucket and a piece that is
//       not a number are errors shown under the section; screenshot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { cli, cliEval } from './lib.mjs';
import { assertSameAsCli, browserSuite, choose, click, ctx, frames, hook, open, screenshot, scrollIntoView, settle, typeInto, waitHook } from './page.mjs';

const opt = browserSuite();

// A card's digits against the CLI's value of its column (rounded to the decimals it prints).
function assertCardAs(h, name, results, label) {
  const c = h.cards[name];
  assert.ok(c, `${label}: card ${name} not published`);
  const v = results[c.column];
  assert.equal(typeof v, 'number', `${label}: ${c.column} = ${v}`);
  const decimals = (c.value.split('.')[1] ?? '').length;
  assert.equal(Number(c.value.replace(/,/g, '')), Number((v / c.scale).toFixed(decimals)),
               `${label}: ${name} shows ${c.value} ${c.unit}, the CLI ${c.column} = ${v}`);
}

const flat = (scenario) => ctx.core.evalFlat(scenario);

// No two text boxes overlap (1 px of slack), none is cut by its clip; tabs and the chart phase switch apart.
function assertTextsClear(h, label) {
  const boxes = h.texts.filter((b) => b.w > 0 && b.h > 0);
  assert.ok(boxes.length >= 20, `${label}: only ${boxes.length} text boxes published`);
  const cut = boxes.filter((b) => b.group === 'cut').map((b) => b.text);
  assert.deepEqual(cut, [], `${label}: text cut by its clip`);
  const ui = Object.entries(h.ui).filter(([n]) => /^tab\.\d$|^view\.phase=/.test(n)).map(([n, r]) => ({ ...r, text: n }));
  const all = [...boxes, ...ui];
  const hits = [];
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 1; j < all.length; j++) {
      const [a, b] = [all[i], all[j]];
      if (a.x < b.x + b.w - 1 && b.x < a.x + a.w - 1 && a.y < b.y + b.h - 1 && b.y < a.y + a.h - 1)
        hits.push(`"${a.text}" [${a.x.toFixed(0)},${a.y.toFixed(0)} ${a.w.toFixed(0)}x${a.h.toFixed(0)}] / ` +
                  `"${b.text}" [${b.x.toFixed(0)},${b.y.toFixed(0)} ${b.w.toFixed(0)}x${b.h.toFixed(0)}]`);
    }
  }
  assert.deepEqual(hits, [], `${label}: overlapping text`);
}

test('(u) one set of lengths, one verdict, pools from the layout, the smallest GPU count that holds a model', async () => {
  const s0 = { model: 'qwen3-235b-a22b', hardware: 'h200', parallel: { tp: 8 }, workload: { prompt_len: 2048, output_len: 512 } };
  const { page, context, problems } = await open(ctx.server.url + '#' + ctx.core.urlEncode(s0));
  const h0 = await settle(page);
  assert.equal(h0.results.status, 'ok', JSON.stringify(h0.errors));

  // serving on: the Workload's lengths become ISL / OSL; the step cards are the serving workload's steps
  await choose(page, 'serving.mode', 'aggregated');
  const h1 = await waitHook(page, () => window.__moe.scenario.serving?.mode === 'aggregated' && window.__moe.steps);
  assert.equal(h1.scenario.serving.isl, 2048);
  assert.equal(h1.scenario.serving.osl, 512);
  assertSameAsCli(h1, 'serving on');
  const steps = h1.steps.scenario;
  const wl = { prompt_len: 4096, output_len: 1024, batch: 64, ...steps.workload };  // compact JSON omits defaults
  assert.equal(wl.prompt_len, 2048);
  assert.equal(wl.output_len, 512);
  assert.equal(wl.batch, Math.round(h1.results['serving.running_batch']));
  assert.deepEqual(h1.steps.results, flat(steps), 'the steps shown are the core\'s for the published step scenario');
  const cli1 = cliEval(ctx.cli, steps);
  const cliFlat = { 'prefill.ttft_ms': cli1.prefill.ttft_ms, 'decode.tpot_ms': cli1.decode.tpot_ms,
                    'decode.tokens_per_s_per_gpu': cli1.decode.tokens_per_s_per_gpu,
                    'decode.tokens_per_s_per_user': cli1.decode.tokens_per_s_per_user, 'memory.total_bytes': cli1.memory.total_bytes };
  for (const n of ['card.0', 'card.1', 'card.2', 'card.3', 'card.4']) assertCardAs(h1, n, cliFlat, 'step cards, serving on');
  // one verdict: the deployment's GPUs card says it; no step card does
  for (const n of ['card.0', 'card.1', 'card.2', 'card.3', 'card.4', 'card.5'])
    assert.ok(!/fits|too big/.test(h1.cards[n]?.sub ?? ''), `${n}: a second fit verdict "${h1.cards[n]?.sub}"`);
  assert.match(h1.cards['card.serving.gpus'].sub, /fits|does not fit/);
  assert.equal(h1.fits, h1.results['serving.fits']);
  await screenshot(page, 'u-serving-steps.png');

  // disaggregated: both pools from the layout (TP 8), split from its GPUs or one worker each
  await choose(page, 'serving.mode', 'disaggregated');
  const h2 = await waitHook(page, () => window.__moe.scenario.serving?.mode === 'disaggregated');
  const sv = h2.scenario.serving;
  const gpusOf = (p) => (p?.tp ?? 1) * (p?.dp ?? 1) * (p?.pp ?? 1);
  const pw = gpusOf(sv.prefill?.parallel), dw = gpusOf(sv.decode?.parallel);
  assert.ok(h2.results['serving.gpus'] === 8 || (pw === 8 && dw === 8), `pools ${JSON.stringify(sv)}`);
  assert.equal(h2.results['serving.gpus'], (sv.prefill?.workers ?? 1) * pw + (sv.decode?.workers ?? 1) * dw);
  assertSameAsCli(h2, 'disaggregated from the layout');
  console.log(`pools from TP 8: ${JSON.stringify(sv)} -> ${h2.results['serving.gpus']} GPUs, fits ${h2.results['serving.fits']}`);
  // fit the pools to 32 GPUs
  await typeInto(page, 'serving.fit_pools.gpus', '32');
  await click(page, 'serving.fit_pools');
  const h3 = await waitHook(page, () => window.__moe.last_action === 'fit_pools:32' && window.__moe.results['serving.gpus'] === 32);
  assert.equal(h3.results['serving.fits'], true);
  assert.ok(h3.results['serving.ttft_ms'] <= 10000, `TTFT ${h3.results['serving.ttft_ms']}`);
  assertSameAsCli(h3, 'pools fitted to 32 GPUs');
  assert.equal(h3.fit_pools_error, '');
  await screenshot(page, 'u-pools-fitted.png');

  // a model that does not fit: the smallest GPU count that holds it, one click to use it
  const s4 = { model: 'deepseek-v3', hardware: 'h200' };
  await page.evaluate((f) => { window.location.hash = f; }, ctx.core.urlEncode(s4));
  const h4 = await waitHook(page, () => window.__moe.scenario.model === 'deepseek-v3' && window.__moe.fit);
  assert.equal(h4.fits, false);
  assert.equal(h4.fit.ok, true);
  assert.ok(h4.fit.gpus >= 7, JSON.stringify(h4.fit));  // the CLI's lower bound: the weights alone need 7 H200s
  assert.ok(h4.ui['button.use_gpus'], 'no "use N GPUs" button');
  await screenshot(page, 'u-does-not-fit.png');
  await click(page, 'button.use_gpus', { scroll: false });
  const h5 = await waitHook(page, (n) => window.__moe.last_action === `use_gpus:${n}`, h4.fit.gpus);
  assert.equal(h5.fits, true);
  assert.equal(h5.results['memory.fits'], true);
  assertSameAsCli(h5, 'use N GPUs');
  const world = (h5.scenario.parallel?.tp ?? 1) * (h5.scenario.parallel?.dp ?? 1) * (h5.scenario.parallel?.pp ?? 1);
  assert.equal(world, h4.fit.gpus);
  // and one fewer halving does not fit (the count is the smallest of the ones tried: 1, 2, 4, ...)
  const half = cliEval(ctx.cli, { ...h5.scenario, parallel: { tp: h4.fit.gpus / 2, ep: h4.fit.gpus / 2 } });
  assert.equal(half.memory.fits, false);
  assert.deepEqual(problems, []);
  await context.close();
});

test('(v) the Plan tab: launch command and Copy, CSV as the CLI prints it, hover, sideways scroll; Compare with serving', async () => {
  const scenario = { model: 'qwen3-30b-a3b', hardware: 'h200', workload: { prompt_len: 2048, output_len: 1024 } };
  const { page, context, problems } = await open(ctx.server.url + '#' + ctx.core.urlEncode(scenario),
                                                 { permissions: ['clipboard-read', 'clipboard-write'] });
  await click(page, 'tab.5', { scroll: false });
  await waitHook(page, () => window.__moe.view.tab === 5 && 'plan.run' in window.__moe.ui);
  await typeInto(page, 'plan.gpus', '16');
  await waitHook(page, () => window.__moe.plan.settings.gpus === 16);
  await typeInto(page, 'plan.tpot_ms', '30');
  await waitHook(page, () => window.__moe.plan.settings.tpot_ms === 30);
  await click(page, 'plan.run', { scroll: false });
  const h1 = await page.waitForFunction(() => window.__moe.plan.state === 'done', null, { timeout: 120000 }).then(() => settle(page));
  const p = h1.plan;
  assert.ok(p.front.length >= 2);
  for (const row of p.front) assert.ok(row.ttft_ms <= 10000, `row ${row.rank}: TTFT ${row.ttft_ms} over the default limit`);

  // CSV: the bytes of moe-roofline plan --format csv for the same search (links to this page)
  const spaceFile = `${opt.out}/plan-space-v.json`;
  fs.writeFileSync(spaceFile, JSON.stringify(p.space));
  const base = await page.evaluate(() => window.location.href.replace(/#.*$/, ''));
  const [download] = await Promise.all([page.waitForEvent('download'), click(page, 'plan.csv', { scroll: false })]);
  const csv = fs.readFileSync(await download.path(), 'utf8');
  const r = cli(ctx.cli, ['plan', '-', '--gpus', '16', '--tpot-ms', '30', '--engine', p.engine, '--space', spaceFile,
                          '--format', 'csv', '--base', base], p.base);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(csv, r.stdout, 'the page\'s plan CSV differs from moe-roofline plan --format csv');
  const lines = csv.trimEnd().split('\n');
  assert.equal(lines.length, p.front.length + 1);

  // the launch command of the selected row (row 1 before any click), Copy puts it on the clipboard
  assert.ok(h1.ui['plan.command'], 'no launch command box');
  assert.match(p.front[0].commands, /sglang|vllm|trtllm/);
  await click(page, 'plan.copy', { scroll: false });
  await waitHook(page, () => window.__moe.last_action === 'plan:copy:1');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), p.front[0].commands);
  await click(page, 'plan.row.2', { scroll: false });
  const h2 = await waitHook(page, () => window.__moe.plan.selected === 1 && window.__moe.results.status === 'ok');
  await click(page, 'plan.copy', { scroll: false });
  await waitHook(page, () => window.__moe.last_action === 'plan:copy:2');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), h2.plan.front[1].commands);

  // hover: the row under the mouse is marked (its point on the chart, a tooltip)
  const row = h2.ui['plan.row.3'] ?? h2.ui['plan.row.1'];
  await page.mouse.move(row.x + row.w / 2, row.y + row.h / 2);
  const h3 = await waitHook(page, () => window.__moe.plan.hovered >= 0);
  assert.ok(h3.plan.hovered >= 0);
  await page.screenshot({ path: `${opt.out}/v-plan-hover.png` });

  // Compare A/B with serving on: the serving outputs are among the rows
  await click(page, 'button.pin', { scroll: false });
  const h6 = await settle(page);
  assert.ok(h6.compare, 'A not pinned');
  await click(page, 'tab.5', { scroll: false });  // (pinning opens the Compare tab)
  await waitHook(page, () => window.__moe.view.tab === 5 && 'plan.row.1' in window.__moe.ui);
  await click(page, 'plan.row.1', { scroll: false });
  await waitHook(page, () => window.__moe.plan.selected === 0);
  await click(page, 'tab.1', { scroll: false });
  const h7 = await waitHook(page, () => window.__moe.view.tab === 1 && 'compare.row.serving.tpot_ms' in window.__moe.ui);
  for (const c of ['serving.ttft_ms', 'serving.tpot_ms', 'serving.output_tokens_per_s_per_gpu'])
    assert.ok(h7.ui[`compare.row.${c}`], `Compare A/B has no ${c} row`);
  assert.ok(h7.compare.results['serving.tpot_ms'] > 0);
  await screenshot(page, 'v-compare-serving.png');
  await click(page, 'tab.5', { scroll: false });
  await waitHook(page, () => window.__moe.view.tab === 5);

  // the table scrolls sideways: at 800x600 its last column is reachable, not cut
  await page.setViewportSize({ width: 800, height: 600 });
  let h4 = await settle(page);
  // the results panel scrolls down to the table first (600 px do not hold the chart, the table and the command)
  const ch = h4.ui['chart.plan'];
  await page.mouse.move(ch.x + ch.w / 2, ch.y + 20);
  for (let i = 0; i < 4; i++) { await page.mouse.wheel(0, 300); await frames(page, 1); }
  h4 = await settle(page);
  const t = h4.ui['table.plan'];
  assert.ok(t && t.x + t.w <= 800.5 && t.y + t.h <= 600.5, JSON.stringify(t));
  assert.ok(h4.plan.table_scroll_max_x > 0, `the table does not scroll sideways at 800x600: ${JSON.stringify(t)}`);
  await page.mouse.move(t.x + t.w / 2, t.y + t.h / 2);
  await page.keyboard.down('Shift');  // ImGui: Shift + wheel scrolls sideways
  for (let i = 0; i < 12; i++) { await page.mouse.wheel(0, 300); await frames(page, 1); }
  await page.keyboard.up('Shift');
  const h5 = await waitHook(page, () => window.__moe.plan.table_scroll_x >= window.__moe.plan.table_scroll_max_x - 1);
  const cell = h5.ui['plan.cell.prefill.1'];
  assert.ok(cell && cell.x >= t.x - 0.5 && cell.x + cell.w <= t.x + t.w + 0.5,
            `the prefill-pool column is not reachable: ${JSON.stringify(cell)} in ${JSON.stringify(t)}`);
  await screenshot(page, 'v-plan-800x600.png');

  assert.deepEqual(problems, []);
  await context.close();
});

test('(w) no text overlaps another or is cut, at 1280x720 and 800x600', async () => {
  const serving = { model: 'deepseek-v3', hardware: 'h200', parallel: { tp: 8, dp: 8, ep: 64 },
                    serving: { mode: 'aggregated', isl: 2048, osl: 1024, concurrency: 512 } };
  const views = [
    ['overview', {}, 'tab.0'],
    ['overview-serving', serving, 'tab.0'],
    ['serving', serving, 'tab.4'],
    ['disaggregated', { ...serving, serving: { mode: 'disaggregated', isl: 2048, osl: 1024,
                                               prefill: { parallel: { tp: 8 }, workers: 2 },
                                               decode: { parallel: { tp: 8, dp: 8, ep: 64 }, workers: 1, batch: 64 } } }, 'tab.4'],
  ];
  for (const [width, height] of [[1280, 720], [800, 600]]) {
    const { page, context, problems } = await open(ctx.server.url, { width, height });
    for (const [name, s, tab] of views) {
      const f = ctx.core.urlEncode(s);
      await page.evaluate((x) => { window.location.hash = x; }, f);
      await waitHook(page, (x) => window.__moe.fragment.startsWith(x), f);
      await click(page, tab, { scroll: false });
      const h = await waitHook(page, (t) => window.__moe.view.tab === t, Number(tab.slice(4)));
      await page.mouse.move(2, 2);
      const h2 = await settle(page);
      await screenshot(page, `w-${name}-${width}x${height}.png`);
      assertTextsClear(h2, `${name} at ${width}x${height}`);
      assert.equal(h.results.status, 'ok');
    }
    // the Plan tab with a front
    await page.evaluate((f) => { window.location.hash = f; }, ctx.core.urlEncode({ model: 'qwen3-30b-a3b', hardware: 'h200' }) + '&plan=g8_tpot30_agg_dis');
    const hp = await page.waitForFunction(() => window.__moe.plan.state === 'done' && window.__moe.view.tab === 5, null, { timeout: 120000 })
      .then(() => settle(page));
    assert.ok(hp.plan.front.length >= 1);
    await screenshot(page, `w-plan-${width}x${height}.png`);
    assertTextsClear(hp, `plan at ${width}x${height}`);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

test('(x) mixed request lengths: typed prompt lengths and contexts as the CLI, bad entries inline', async () => {
  const s0 = { model: 'qwen3-30b-a3b', hardware: 'h200' };
  const { page, context, problems } = await open(ctx.server.url + '#' + ctx.core.urlEncode(s0));
  await typeInto(page, 'workload.prompt_lens', '1024, 7168');
  const h1 = await waitHook(page, () => JSON.stringify(window.__moe.scenario.workload?.prompt_lens) === '[1024,7168]');
  assertSameAsCli(h1, 'typed prompt lengths');
  // causal attention is quadratic in the prompt: the spread costs more than two prompts of the mean, 4,096
  const mean = cliEval(ctx.cli, { ...s0, workload: { prompt_len: 4096, prefill_tokens: 8192 } });
  assert.ok(h1.results['prefill.step_ms'] > mean.prefill.step_ms, `${h1.results['prefill.step_ms']} vs ${mean.prefill.step_ms}`);
  await typeInto(page, 'workload.context_lens', '1024, 7168');
  const h2 = await waitHook(page, () => JSON.stringify(window.__moe.scenario.workload?.context_lens) === '[1024,7168]');
  assertSameAsCli(h2, 'typed decode contexts');
  // the buckets' field shows with prompt lengths; a prompt past the largest bucket is the estimate's error
  await typeInto(page, 'workload.prefill_bucket_lens', '2048, 4096');
  const h3 = await waitHook(page, () => window.__moe.results.status === 'error');
  assert.ok(h3.errors.includes('workload.prompt_lens[1]: 7168 tokens is longer than the largest bucket, 4096 (workload.prefill_bucket_lens)'),
            JSON.stringify(h3.errors));
  await scrollIntoView(page, 'workload.prefill_bucket_lens');
  await screenshot(page, 'x-mixed-lengths-error.png');
  await typeInto(page, 'workload.prefill_bucket_lens', '2048, 8192');
  const h4 = await waitHook(page, () => window.__moe.results.status === 'ok' && window.__moe.scenario.workload?.prefill_bucket_lens?.length === 2);
  assertSameAsCli(h4, 'typed buckets');
  // a piece that is not a number: the widget's error under the section, the scenario unchanged
  await typeInto(page, 'workload.context_lens', '1024, x');
  const h5 = await waitHook(page, () => window.__moe.edit_errors.length > 0);
  assert.equal(h5.edit_errors[0], "workload.context_lens[1]: 'x' is not a token count");
  assert.deepEqual(h5.scenario, h4.scenario);
  assert.equal(h5.results['decode.tokens_per_s_per_gpu'], h4.results['decode.tokens_per_s_per_gpu']);
  await scrollIntoView(page, 'workload.lengths_note');
  const p = h5.ui['panel.scenario'];
  await page.mouse.move(p.x + p.w / 2, p.y + p.h / 2);
  await page.mouse.wheel(0, 200);  // the error lines under the note
  await screenshot(page, 'x-mixed-lengths.png');
  assert.deepEqual(problems, []);
  await context.close();
});
