// The in-memory response cache's bound (issue 47: "100,000 distinct requests through a 64 MiB in-memory cache hold RSS
// growth under 96 MiB"): one worker, a cached route, 100,000 distinct chat requests at c=16; the RSS before and after,
// and what the cache says it holds and evicted (its /metrics gauges). Every miss's answer is stored (`admission:
// always`): the default keeps, once the store is full, only answers asked twice, which would leave these distinct
// requests unstored past the bound and the bound untested.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { round, rssMiB, startBenchGateway, startMock } from '../harness.js';

export const name = 'response cache: memory held by 100,000 distinct requests';

const total = Number(process.env.BENCH_CACHE_REQUESTS ?? 100_000);
const concurrency = 16;
const metricsToken = 'bench-metrics-token-0123456789';
const body = (model: string, i: number) => JSON.stringify({ model, temperature: 0, max_tokens: 16, messages: [{ role: 'user', content: `distinct question number ${i}, asked once` }] });

/** Sends requests `from`..`to` (exclusive), `concurrency` at a time. */
async function send(url: string, key: string, model: string, from: number, to: number): Promise<void> {
  const target = new URL(`${url}/v1/chat/completions`);
  const pool = new Pool(target.origin, { connections: concurrency });
  let next = from;
  const lane = async () => {
    while (next < to) {
      const res = await pool.request({ method: 'POST', path: target.pathname, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: body(model, next++) });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${text}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, lane));
  } finally {
    await pool.close();
  }
}

/** A metric's value from the gateway's /metrics text (first sample of that name). */
async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
  const line = text.split('\n').find((l) => l.startsWith(name));
  return line ? Number(line.split(' ').at(-1)) : Number.NaN;
}

/**
 * RSS before and after `total` distinct requests to `model` on a fresh one-worker gateway, and the cache's gauges. One
 * workspace sends them all: its share (maxWorkspaceBytes) is the whole store, so the store fills the 64 MiB issue 47 names.
 */
async function measure(mockUrl: string, routes: string, model: string) {
  const gateway = await startBenchGateway(mockUrl, { extraConfig: `routes:\n  dir: ${routes}\ncache:\n  store: memory\n  maxBytes: 67108864\n  maxWorkspaceBytes: 67108864\n  admission: always\nmetrics:\n  token: ${metricsToken}\n` });
  try {
    await send(gateway.url, gateway.key, model, -2000, 0);
    const before = rssMiB(gateway.pid)[0];
    const started = performance.now();
    await send(gateway.url, gateway.key, model, 0, total);
    const seconds = (performance.now() - started) / 1000;
    const after = rssMiB(gateway.pid)[0];
    const held = (await metric(gateway.url, 'gateway_response_cache_bytes')) / 1048576;
    return { before, after, seconds, held, evicted: await metric(gateway.url, 'gateway_response_cache_evictions_total') };
  } finally {
    await gateway.stop();
  }
}

export async function run(): Promise<Record<string, number | string>> {
  const mock = await startMock();
  const routes = mkdtempSync(join(tmpdir(), 'bench-routes-'));
  writeFileSync(join(routes, 'cache.yaml'), '- id: cached\n  cache: { ttlSeconds: 3600 }\n  targets: [{ model: bench-chat }]\n- id: uncached\n  targets: [{ model: bench-chat }]\n');
  try {
    // The same load without a cache first: what the process grows by anyway (its heap under load, the request log).
    const off = await measure(mock.url, routes, 'uncached');
    const on = await measure(mock.url, routes, 'cached');
    return {
      'requests, each distinct (a miss, then stored)': total,
      'req/s, c=16: route without cache / with': `${round(total / off.seconds, 0)} / ${round(total / on.seconds, 0)}`,
      'RSS MiB before / after, without cache': `${round(off.before, 1)} / ${round(off.after, 1)}`,
      'RSS MiB before / after, with a 64 MiB cache': `${round(on.before, 1)} / ${round(on.after, 1)}`,
      'RSS growth MiB with the cache (target < 96)': round(on.after - on.before, 1),
      'RSS growth MiB the cache adds (with minus without)': round(on.after - on.before - (off.after - off.before), 1),
      'bytes the cache says it holds, MiB': round(on.held, 1),
      'entries evicted': on.evicted,
    };
  } finally {
    await mock.stop();
    rmSync(routes, { recursive: true, force: true });
  }
}
