// The in-memory response cache's bound (issue 47: "100,000 distinct requests through a 64 MiB in-memory cache hold RSS
// growth under 96 MiB"): one worker, a cached route, 100,000 distinct chat requests at c=16; the RSS before and after,
// and what the cache says it holds and evicted (its /metrics gauges).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { round, rssMiB, startBenchGateway, startMock } from '../harness.js';

export const name = 'response cache: memory held by 100,000 distinct requests';

const total = Number(process.env.BENCH_CACHE_REQUESTS ?? 100_000);
const concurrency = 16;
const metricsToken = 'bench-metrics-token-0123456789';
const body = (i: number) => JSON.stringify({ model: 'cached', temperature: 0, max_tokens: 16, messages: [{ role: 'user', content: `distinct question number ${i}, asked once` }] });

/** Sends requests `from`..`to` (exclusive), `concurrency` at a time. */
async function send(url: string, key: string, from: number, to: number): Promise<void> {
  const target = new URL(`${url}/v1/chat/completions`);
  const pool = new Pool(target.origin, { connections: concurrency });
  let next = from;
  const lane = async () => {
    while (next < to) {
      const res = await pool.request({ method: 'POST', path: target.pathname, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: body(next++) });
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

export async function run(): Promise<Record<string, number | string>> {
  const mock = await startMock();
  const routes = mkdtempSync(join(tmpdir(), 'bench-routes-'));
  writeFileSync(join(routes, 'cache.yaml'), '- id: cached\n  cache: { ttlSeconds: 3600 }\n  targets: [{ model: bench-chat }]\n');
  const gateway = await startBenchGateway(mock.url, { extraConfig: `routes:\n  dir: ${routes}\ncache:\n  store: memory\n  maxBytes: 67108864\nmetrics:\n  token: ${metricsToken}\n` });
  try {
    await send(gateway.url, gateway.key, -2000, 0);
    const before = rssMiB(gateway.pid)[0];
    const started = performance.now();
    await send(gateway.url, gateway.key, 0, total);
    const seconds = (performance.now() - started) / 1000;
    const after = rssMiB(gateway.pid)[0];
    return {
      'requests, each distinct (a miss, then stored)': total,
      'req/s through the cached route, c=16': round(total / seconds, 0),
      'RSS MiB before / after': `${round(before, 1)} / ${round(after, 1)}`,
      'RSS growth MiB (target < 96 with maxBytes 64 MiB)': round(after - before, 1),
      'bytes the cache says it holds, MiB': round((await metric(gateway.url, 'gateway_response_cache_bytes')) / 1048576, 1),
      'entries evicted': await metric(gateway.url, 'gateway_response_cache_evictions_total'),
    };
  } finally {
    await gateway.stop();
    await mock.stop();
    rmSync(routes, { recursive: true, force: true });
  }
}
