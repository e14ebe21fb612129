// devshot.mjs — a quick look at the page while developing (not a test): serves the site, opens it at a size and a
// scenario, waits for the first publication, saves a screenshot and prints console problems and the hook's perf.
//
//   node tests/browser/devshot.mjs --site build-web/site --out /tmp/page.png [--frag '#s=...'] [--width 1280]
//        [--height 800] [--dpr 1] [--hover x,y] [--wait 'JS condition on window.__moe'] [--click UI_NAME]...
//   e.g. the README's plan picture: --frag '#s=...&plan=g64_tpot30_agg_dis_mtp_fmt_tbo' --wait "window.__moe.plan.state === 'done'" --click plan.row.1
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { chromiumArgs, serve } from './lib.mjs';

const { values: opt } = parseArgs({
  options: { site: { type: 'string' }, out: { type: 'string' }, frag: { type: 'string', default: '' },
             width: { type: 'string', default: '1280' }, height: { type: 'string', default: '800' },
             dpr: { type: 'string', default: '1' }, hover: { type: 'string' }, click: { type: 'string', multiple: true },
             wait: { type: 'string' } },
});
const server = await serve(opt.site);
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: chromiumArgs(), headless: true });
try {
  const context = await browser.newContext({ viewport: { width: +opt.width, height: +opt.height }, deviceScaleFactor: +opt.dpr });
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') console.log(`console.${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => console.log(`page error: ${e.message}`));
  await page.goto(server.url + opt.frag);
  await page.waitForFunction(() => window.__moe && window.__moe.seq >= 1, null, { timeout: 60000 });
  if (opt.wait) await page.waitForFunction(opt.wait, null, { timeout: 600000 });
  await page.waitForTimeout(400);
  for (const c of opt.click ?? []) {
    const r = await page.evaluate((n) => window.__moe.ui[n], c);
    if (!r) { console.log(`no ui rect ${c}`); continue; }
    await page.mouse.click(r.x + r.w / 2, r.y + r.h / 2);
    await page.waitForTimeout(300);
  }
  if (opt.hover) {
    const [x, y] = opt.hover.split(',').map(Number);
    await page.mouse.move(x, y);
    await page.waitForTimeout(300);
  }
  await page.screenshot({ path: opt.out });
  const h = await page.evaluate(() => window.__moe);
  console.log(JSON.stringify({ perf: h.perf, notice: h.notice, errors: h.errors, status: h.results.status, view: h.view }));
} finally {
  await browser.close();
  server.stop();
}
