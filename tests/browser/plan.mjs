// plan.mjs — browser tests of the Plan tab against `moe-roofline plan` (split from run.mjs). Run like run.mjs:
//
//   node tests/browser/plan.mjs --site build-web/site --core build-web/node/moe-core.js \
//        --cli build-native/moe-roofline --out build-web/screenshots
//
//   (o)  the Plan tab runs a search in slices (the page stays responsive), its front equals `moe-roofline plan`'s for
//        the same request row by row, a click on a point or a row loads that deployment, the link reruns the plan.
//   (o2) two GPU types and two engines with the SLA at p90, chosen by real clicks (plan --hardware, --engine,
//        --sla-at): one front over the four searches, equal to the CLI's row by row (GPU, engine, numbers, the band's
//        p90), the table's GPU and engine columns, the CSV export byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cli, cliEval } from './lib.mjs';
import { assertOnScreen, assertSameAsCli, browserSuite, choose, click, ctx, hook, open, reload, screenshot, settle, typeInto,
         waitHook } from './page.mjs';

const opt = browserSuite();

// Opens the page at `scenario` on the Plan tab with its GPU budget and TPOT limit typed in.
async function openPlanTab(scenario, gpus, tpotMs) {
  const opened = await open(ctx.server.url + '#' + ctx.core.urlEncode(scenario));
  const { page } = opened;
  await click(page, 'tab.5', { scroll: false });
  await waitHook(page, () => window.__moe.view.tab === 5 && 'plan.run' in window.__moe.ui);
  await typeInto(page, 'plan.gpus', String(gpus));
  await waitHook(page, (g) => window.__moe.plan.settings.gpus === g, gpus);
  await typeInto(page, 'plan.tpot_ms', String(tpotMs));
  await waitHook(page, (t) => window.__moe.plan.settings.tpot_ms === t, tpotMs);
  return opened;
}

test('(o) plan: the Plan tab runs a search in slices, its front equals moe-roofline plan, a click loads a row', async () => {
  const scenario = { model: 'qwen3-30b-a3b', hardware: 'h200', workload: { prompt_len: 2048, output_len: 1024 } };
  const { page, context, problems } = await openPlanTab(scenario, 16, 30);
  await click(page, 'plan.run', { scroll: false });
  // the search runs across frames: the page keeps publishing its progress and stays responsive
  await page.waitForFunction(() => window.__moe.plan.state === 'running', null, { timeout: 30000 });
  const t0 = Date.now();
  const frames = await page.evaluate(() => new Promise((resolve) => {
    let n = 0;
    const t = performance.now();
    const tick = () => { n++; if (performance.now() - t < 1000) requestAnimationFrame(tick); else resolve(n); };
    requestAnimationFrame(tick);
  }));
  const h1 = await waitHook(page, () => window.__moe.plan.state === 'done');
  const p = h1.plan;
  console.log(`plan on the page: ${p.points} points in ${(p.wall_ms / 1000).toFixed(2)} s (${(p.compute_ms / 1000).toFixed(2)} s computing), ` +
              `${frames} frames in the first second; front ${p.front.length} rows (${p.front_aggregated} aggregated, ${p.front_disaggregated} disaggregated front points)`);
  // (a page that plans in one frame shows 0-1 frames here; 6-7 on an idle machine, 3 seen with the other browser
  // tests and a build sharing the two cores)
  assert.ok(frames >= 3, `the page froze while planning: ${frames} frames in a second`);
  assert.ok(Date.now() - t0 < 120000);
  assert.equal(p.progress, 1);
  assert.equal(p.evaluated, p.points);
  assert.ok(p.front.length >= 2, JSON.stringify(p.front));
  assert.ok(p.front.some((r) => r.mode === 'disaggregated') || p.front_disaggregated > 0, 'no disaggregated deployment found');
  assert.match(await page.evaluate(() => window.location.hash), /&plan=g16_tpot30_agg_dis_mtp_fmt_tbo/);

  // the same request through the CLI: the same front, row by row, to the last digit
  const spaceFile = path.join(opt.out, 'plan-space.json');
  fs.writeFileSync(spaceFile, JSON.stringify(p.space));
  const r = cli(opt.cli, ['plan', '-', '--gpus', '16', '--tpot-ms', '30', '--engine', p.engine, '--space', spaceFile,
                          '--format', 'json'], p.base);
  assert.equal(r.status, 0, r.stderr);
  const plan = JSON.parse(r.stdout);
  assert.equal(plan.counts.points, p.points);
  assert.equal(plan.front.length, p.front.length);
  for (let k = 0; k < p.front.length; k++) {
    for (const key of ['output_tokens_per_s_per_gpu', 'tokens_per_s_per_user', 'ttft_ms', 'tpot_ms', 'usd_per_mtok_output', 'joules_per_token', 'mode', 'batch', 'parallel'])
      assert.deepEqual(p.front[k][key], plan.front[k][key], `front row ${k + 1}: ${key}`);
  }

  // a click on a point of the front loads it into the calculator: a disaggregated one when there is one, and one
  // far enough from the others that the mouse is nearest to it (front points can sit a pixel apart)
  const ui = (await hook(page)).ui;
  const centre = (n) => { const r = ui[`plan.point.${n + 1}`]; return [r.x + r.w / 2, r.y + r.h / 2]; };
  const isolation = (n) => Math.min(...p.front.map((_, m) => m === n ? Infinity
    : Math.hypot(centre(n)[0] - centre(m)[0], centre(n)[1] - centre(m)[1])));
  const order = p.front.map((row, n) => n).sort((a, b) =>
    (p.front[b].mode === 'disaggregated') - (p.front[a].mode === 'disaggregated') || isolation(b) - isolation(a));
  const k = order.find((n) => isolation(n) >= 12) ?? order[0];
  await click(page, `plan.point.${k + 1}`, { scroll: false });
  const h2 = await waitHook(page, (n) => window.__moe.last_action === `plan:load:${n}` && window.__moe.results.status === 'ok', k + 1);
  assert.deepEqual(h2.scenario, ctx.core.compact(plan.front[k].scenario), 'the loaded scenario is the CLI row\'s');
  assertSameAsCli(h2, 'plan row loaded');
  assert.equal(h2.results['serving.output_tokens_per_s_per_gpu'], p.front[k].output_tokens_per_s_per_gpu);
  assert.equal(h2.results['serving.tpot_ms'], p.front[k].tpot_ms);
  assert.ok(h2.results['serving.tpot_ms'] <= 30);
  assert.equal(h2.plan.selected, k);
  assert.equal(h2.view.tab, 5, 'the Plan tab stays open');
  // its link (through moe-roofline url --decode) evaluates to the same numbers
  const dec = cli(opt.cli, ['url', '--decode', plan.front[k].link]);
  assert.equal(dec.status, 0, dec.stderr);
  assert.deepEqual(cliEval(opt.cli, JSON.parse(dec.stdout)).serving, cliEval(opt.cli, h2.scenario).serving);
  assertOnScreen(h2, ['panel.plan', 'chart.plan', 'table.plan'], 1280, 800, 'Plan tab');
  const shot = await screenshot(page, 'plan.png');

  // a table row loads too
  await click(page, 'plan.row.1', { scroll: false });
  const h3 = await waitHook(page, () => window.__moe.last_action === 'plan:load:1' && window.__moe.results.status === 'ok');
  assert.equal(h3.results['serving.output_tokens_per_s_per_gpu'], p.front[0].output_tokens_per_s_per_gpu);

  // the link restores the settings, opens the tab and runs the same plan
  const hash = await page.evaluate(() => window.location.hash);
  await reload(page, ctx.server.url + hash);
  const h4 = await page.waitForFunction(() => window.__moe.plan.state === 'done' && window.__moe.view.tab === 5, null, { timeout: 120000 })
    .then(() => settle(page));
  assert.deepEqual(h4.plan.front, p.front, 'the link gives the same plan');
  assert.deepEqual(problems, []);
  console.log(`screenshot: ${shot}`);
  await context.close();
});

test('(o2) plan over two GPUs and two engines with the SLA at p90: the page\'s front and CSV are moe-roofline plan\'s', async () => {
  const scenario = { model: 'qwen3-30b-a3b', hardware: 'h200', runtime: { engine: 'sglang' },
                     workload: { prompt_len: 2048, output_len: 1024 } };
  const { page, context, problems } = await openPlanTab(scenario, 8, 30);
  await click(page, 'plan.sla_at=p90', { scroll: false });
  await waitHook(page, () => window.__moe.plan.settings.sla_at === 'p90');
  // a second GPU type (the scenario's H200 stays ticked) and a second engine, by real clicks
  await choose(page, 'plan.hardware', 'b200');
  await waitHook(page, () => JSON.stringify(window.__moe.plan.settings.hardware) === '["b200","h200"]');
  await click(page, 'plan.engine.vllm', { scroll: false });
  await waitHook(page, () => JSON.stringify(window.__moe.plan.settings.engines) === '["sglang","vllm"]');
  await click(page, 'plan.run', { scroll: false });
  const h1 = await page.waitForFunction(() => window.__moe.plan.state === 'done', null, { timeout: 300000 }).then(() => settle(page));
  const p = h1.plan;
  assert.deepEqual(p.hardware, ['b200', 'h200']);
  assert.deepEqual(p.engines, ['sglang', 'vllm']);
  assert.match(await page.evaluate(() => window.location.hash), /&plan=g8_tpot30_agg_dis_mtp_fmt_tbo_p90_hwb200\+h200_ensglang\+vllm/);
  console.log(`plan over 2 GPUs x 2 engines on the page: ${p.points} points in ${(p.wall_ms / 1000).toFixed(2)} s; front ` +
              `${p.front.length} rows: ${p.front.map((r) => `${r.hardware}/${r.engine}`).join(' ')}`);
  assert.ok(p.front.length >= 2, JSON.stringify(p.front));

  // the same request through the CLI: the same rows, in the same order, to the last digit
  const spaceFile = path.join(opt.out, 'plan-space-o2.json');
  fs.writeFileSync(spaceFile, JSON.stringify(p.space));
  const args = ['plan', '-', '--gpus', '8', '--tpot-ms', '30', '--hardware', p.hardware.join(','), '--engine', p.engines.join(','),
                '--sla-at', 'p90', '--space', spaceFile];
  const r = cli(opt.cli, [...args, '--format', 'json'], p.base);
  assert.equal(r.status, 0, r.stderr);
  const plan = JSON.parse(r.stdout);
  assert.equal(plan.counts.points, p.points);
  for (const v of ['candidate', 'no_fit', 'ttft', 'tpot', 'per_user', 'error']) assert.equal(p.counts[v], plan.counts[v], v);
  assert.equal(plan.front.length, p.front.length);
  for (let k = 0; k < p.front.length; k++) {
    for (const key of ['hardware', 'engine', 'output_tokens_per_s_per_gpu', 'tokens_per_s_per_user', 'ttft_ms', 'tpot_ms',
                       'serving', 'usd_per_mtok_output', 'joules_per_token', 'mode', 'batch', 'parallel', 'mtp_draft_tokens'])
      assert.deepEqual(p.front[k][key], plan.front[k][key], `front row ${k + 1}: ${key}`);
    // at p90: the band's high end meets the SLA
    assert.ok(p.front[k].serving.tpot_ms_p90 <= 30, `row ${k + 1}: TPOT p90 ${p.front[k].serving.tpot_ms_p90}`);
  }
  // the table names each row's GPU and engine
  assert.ok(h1.ui['plan.cell.hardware.1'] && h1.ui['plan.cell.engine.1'], 'no GPU / engine column');
  // the CSV export: moe-roofline plan --format csv's bytes
  const base = await page.evaluate(() => window.location.href.replace(/#.*$/, ''));
  const [download] = await Promise.all([page.waitForEvent('download'), click(page, 'plan.csv', { scroll: false })]);
  const csv = fs.readFileSync(await download.path(), 'utf8');
  const rc = cli(opt.cli, [...args, '--format', 'csv', '--base', base], p.base);
  assert.equal(rc.status, 0, rc.stderr);
  assert.equal(csv, rc.stdout, 'the page\'s plan CSV differs from moe-roofline plan --format csv');
  assert.match(csv.split('\n')[0], /,serving\.ttft_ms_p90,serving\.tpot_ms_p90,/);
  const shot = await screenshot(page, 'plan-gpus-engines.png');
  // a row of the other GPU loads with that GPU
  const k = p.front.findIndex((row) => row.hardware === 'b200');
  if (k >= 0) {
    await click(page, `plan.row.${k + 1}`, { scroll: false });
    const h2 = await waitHook(page, (n) => window.__moe.last_action === `plan:load:${n}` && window.__moe.results.status === 'ok', k + 1);
    assert.equal(h2.scenario.hardware, 'b200');
    assert.equal(h2.results['serving.tpot_ms'], p.front[k].tpot_ms);
  }
  assert.deepEqual(problems, []);
  console.log(`screenshot: ${shot}`);
  await context.close();
});
