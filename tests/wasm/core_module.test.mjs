// core_module.test.mjs — the core compiled to wasm, loaded by node (no browser): presets are embedded, every
// output column comes out finite, user errors come back as values naming the field, and the URL codec survives
// hostile input. Run by ctest (build-web): node --no-experimental-fetch core_module.test.mjs build-web/node/moe-core.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore, flatten, DESIGN_COLUMNS } from '../browser/lib.mjs';

const corePath = process.argv[2];
if (!corePath) throw new Error('usage: core_module.test.mjs path/to/moe-core.js');
const core = await loadCore(corePath);

test('the presets named by DESIGN §4.1a are embedded', () => {
  const p = core.presets();
  for (const id of ['deepseek-v3', 'deepseek-v2-lite', 'kimi-k2', 'qwen3-30b-a3b', 'qwen3-235b-a22b', 'qwen3-8b',
                    'mixtral-8x7b', 'gpt-oss-120b', 'llama-3.1-70b', 'llama-4-scout']) {
    assert.ok(p.models.includes(id), `model preset ${id} missing (have ${p.models.join(', ')})`);
  }
  for (const id of ['h100-sxm', 'h200', 'h800', 'h20', 'b200', 'a100-sxm-80g', 'mi300x']) {
    assert.ok(p.hardware.includes(id), `hardware preset ${id} missing (have ${p.hardware.join(', ')})`);
  }
});

test('a valid scenario gives every output column, finite, and nested = flat', () => {
  const scenario = { model: 'deepseek-v3', hardware: 'h800', parallel: { tp: 1, dp: 8, ep: 8 } };
  const nested = core.eval(scenario);
  const flat = core.evalFlat(scenario);
  assert.equal(flat.status, 'ok', JSON.stringify(nested.errors));
  for (const c of DESIGN_COLUMNS) assert.ok(c in flat, `column ${c} missing`);
  for (const [k, v] of Object.entries(flat)) {
    if (typeof v === 'number') assert.ok(Number.isFinite(v), `${k} = ${v}`);
  }
  assert.ok(flat['decode.tpot_ms'] > 0 && flat['prefill.ttft_ms'] > 0);
  assert.ok(flat['memory.total_bytes'] > 0 && flat['model.total_params'] > 6e11);
  assert.deepEqual(flatten(nested, Object.keys(flat)), flat);
  assert.ok(Array.isArray(nested.layers), 'nested JSON has the per-operator layers');
});

test('a bigger batch changes the decode numbers', () => {
  const a = core.evalFlat({ model: 'qwen3-30b-a3b', hardware: 'h20', workload: { batch: 8 } });
  const b = core.evalFlat({ model: 'qwen3-30b-a3b', hardware: 'h20', workload: { batch: 256 } });
  assert.equal(a.status, 'ok');
  assert.equal(b.status, 'ok');
  assert.notEqual(a['decode.tpot_ms'], b['decode.tpot_ms']);
  assert.ok(b['decode.tokens_per_s_per_gpu'] > a['decode.tokens_per_s_per_gpu']);
});

test('user errors come back as values that name the field', () => {
  const r = core.eval({ model: 'deepseek-v3', parallel: { tp: 1, dp: 48, ep: 48 } });
  assert.equal(r.status, 'error');
  assert.ok(r.errors.some((e) => JSON.stringify(e).includes('parallel.ep')), JSON.stringify(r.errors));
  const u = core.eval({ workload: { batchh: 3 } });
  assert.equal(u.status, 'error');
  assert.ok(JSON.stringify(u.errors).includes('workload.batchh'), JSON.stringify(u.errors));
  const bad = core.eval('{"model": ');
  assert.equal(bad.status, 'error');
});

test('fragments round-trip, and hostile ones give errors and the defaults', () => {
  const scenario = { model: 'kimi-k2', hardware: 'h200', workload: { batch: 32 }, runtime: { two_batch_overlap: true } };
  const frag = core.urlEncode(scenario);
  assert.match(frag, /^s=[A-Za-z0-9_-]+$/);
  const back = core.urlDecode('#' + frag);
  assert.equal(back.ok, true, JSON.stringify(back.errors));
  assert.deepEqual(back.scenario, core.compact(scenario));
  assert.deepEqual(core.urlDecode('').scenario, core.compact({}));
  const hostile = ['#s=<script>alert(1)</script>', '#s=' + 'A'.repeat(200000), '#s=!!!!', '#x=1',
                   '#s=' + Buffer.from('{"model":"<img src=x onerror=alert(1)>"}').toString('base64url'),
                   '#s=' + Buffer.from('[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[').toString('base64url'),
                   '#s=' + Buffer.from([0xff, 0xfe, 0x00, 0x80]).toString('base64url')];
  for (const h of hostile) {
    const r = core.urlDecode(h);
    assert.equal(r.ok, false, `accepted ${h.slice(0, 60)}`);
    assert.ok(r.errors.length > 0);
    assert.deepEqual(r.scenario, core.compact({}), `not the defaults for ${h.slice(0, 60)}`);
  }
});
