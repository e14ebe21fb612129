// lib.mjs — helpers shared by the node and browser tests: the wasm core module, the CLI, a static server,
// Chromium with the flags verified in TOOLCHAIN.md.
import { createRequire } from 'node:module';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';

const require = createRequire(import.meta.url);

// DESIGN §4.3: the output columns every front end must publish under these names.
export const DESIGN_COLUMNS = [
  'prefill.step_ms', 'prefill.ttft_ms', 'prefill.tokens_per_s_per_gpu',
  'decode.step_ms', 'decode.tpot_ms', 'decode.tokens_per_s_per_gpu', 'decode.tokens_per_s_per_user',
  'memory.weights_bytes', 'memory.kv_cache_bytes', 'memory.activation_bytes', 'memory.workspace_bytes',
  'memory.comm_buffer_bytes', 'memory.reserved_bytes', 'memory.total_bytes', 'memory.capacity_bytes',
  'memory.fits', 'memory.kv_bytes_per_token', 'memory.max_batch', 'model.total_params', 'model.active_params',
  'status', 'error',
];

// The core module (build-web/node/moe-core.js) with JSON in and out.
export async function loadCore(jsPath) {
  const abs = path.resolve(jsPath);
  const createCore = require(abs);
  const m = await createCore({ wasmBinary: fs.readFileSync(abs.replace(/\.js$/, '.wasm')) });
  const call = (name, arg) => m.ccall(name, 'string', arg === undefined ? [] : ['string'],
                                      arg === undefined ? [] : [arg]);
  const text = (s) => (typeof s === 'string' ? s : JSON.stringify(s));
  return {
    eval: (s) => JSON.parse(call('moe_eval', text(s))),
    evalFlat: (s) => JSON.parse(call('moe_eval_flat', text(s))),
    urlEncode: (s) => call('moe_url_encode', text(s)),
    urlDecode: (frag) => JSON.parse(call('moe_url_decode', frag)),
    compact: (s) => JSON.parse(call('moe_scenario_compact', text(s))),
    presets: () => JSON.parse(call('moe_presets')),
  };
}

// {"decode": {"tpot_ms": 1}} -> {"decode.tpot_ms": 1}, for the given dotted keys.
export function flatten(nested, keys) {
  const out = {};
  for (const k of keys) {
    let v = nested;
    for (const part of k.split('.')) v = v == null ? undefined : v[part];
    out[k] = v;
  }
  return out;
}

// `moe-roofline eval - --format json` with the scenario on standard input.
export function cliEval(cli, scenario, extra = []) {
  const r = spawnSync(cli, ['eval', '-', '--format', 'json', ...extra], { input: JSON.stringify(scenario), encoding: 'utf8' });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cli} eval exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// `moe-roofline ARGS...` with optional standard input: {status, stdout, stderr} (no throw on exit 2).
export function cli(cliPath, args, input) {
  const r = spawnSync(cliPath, args, { input: input === undefined ? undefined : (typeof input === 'string' ? input : JSON.stringify(input)),
                                       encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

// The same as cli(), without blocking: the page keeps being driven while a long command (calibrate) runs.
export function cliAsync(cliPath, args, input) {
  return new Promise((resolve, reject) => {
    const proc = spawn(cliPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    proc.stdout.setEncoding('utf8').on('data', (d) => { stdout += d; });
    proc.stderr.setEncoding('utf8').on('data', (d) => { stderr += d; });
    proc.on('error', reject);
    proc.on('close', (status) => resolve({ status, stdout, stderr }));
    proc.stdin.end(input === undefined ? undefined : (typeof input === 'string' ? input : JSON.stringify(input)));
  });
}

// `moe-roofline eval - --format json [--set ...]` -> the JSON object (also for an invalid scenario: exit 2 still
// prints it).
export function cliEvalSet(cliPath, scenario, sets = []) {
  const args = ['eval', '-', '--format', 'json'];
  for (const s of sets) args.push('--set', s);
  const r = cli(cliPath, args, scenario);
  if (r.status !== 0 && r.status !== 2) throw new Error(`eval exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

// python3 -m http.server on 127.0.0.1 (it serves .wasm as application/wasm), on a port the kernel picks (port 0:
// browser tests running at once never race for one); resolves with its URL once it answers.
export async function serve(dir) {
  const proc = spawn('python3', ['-u', '-m', 'http.server', '--bind', '127.0.0.1', '0'],
                     { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const port = await new Promise((resolve) => {
    const timer = setTimeout(() => resolve(0), 10000);
    proc.stdout.on('data', (d) => {
      stdout += d;
      const m = /port (\d+)/.exec(stdout);  // "Serving HTTP on 127.0.0.1 port 41234 (http://...)"
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    proc.on('exit', () => { clearTimeout(timer); resolve(0); });
  });
  proc.stdout.resume();
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; port && i < 100; i++) {
    const status = await new Promise((resolve) => {
      http.get(url + 'index.html', (res) => { res.resume(); resolve(res.statusCode); }).on('error', () => resolve(0));
    });
    if (status === 200) return { url, stop: () => proc.kill() };
    if (proc.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  proc.kill();
  throw new Error(`http.server did not start: ${stdout} ${stderr}`);
}

// TOOLCHAIN.md's flags (Playwright adds --headless and its own --user-data-dir).
export function chromiumArgs() {
  return ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
          '--disable-component-update', '--disable-sync', '--enable-unsafe-swiftshader', '--use-gl=angle',
          '--use-angle=swiftshader'];
}

// How many distinct colours a PNG (a Chromium screenshot: 8-bit RGB or RGBA, not interlaced) has, counting every 7th
// pixel in raster order: a rendered page has many, a blank or half-drawn one few. Decoded here (zlib and the five
// PNG row filters) rather than by a second browser page, which costs a renderer start per screenshot.
export function pngColours(png) {
  if (png.readUInt32BE(0) !== 0x89504e47) throw new Error('not a PNG');
  let off = 8, width = 0, height = 0, channels = 0;
  const idat = [];
  while (off < png.length) {
    const len = png.readUInt32BE(off), type = png.toString('latin1', off + 4, off + 8), data = png.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const [depth, colourType, , , interlace] = data.subarray(8, 13);
      channels = colourType === 6 ? 4 : colourType === 2 ? 3 : 0;
      if (depth !== 8 || !channels || interlace !== 0) throw new Error(`PNG: depth ${depth}, colour type ${colourType}, interlace ${interlace} not handled`);
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    off += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels, px = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)], src = y * (stride + 1) + 1, dst = y * stride;
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? px[dst + i - channels] : 0, b = y ? px[dst - stride + i] : 0;
      const c = i >= channels && y ? px[dst - stride + i - channels] : 0;
      let pred = 0;
      if (filter === 1) pred = a;
      else if (filter === 2) pred = b;
      else if (filter === 3) pred = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      px[dst + i] = (raw[src + i] + pred) & 0xff;
    }
  }
  const seen = new Set();
  for (let p = 0; p < width * height; p += 7) {
    const i = p * channels;
    seen.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
  }
  return seen.size;
}
