// The response cache (docs/caching.md) against a 20 ms upstream: a hit's time beside a miss's (sequential, one
// connection), and the gateway's CPU per request on a route with cache: whose requests never hit (each one distinct)
// beside the same route without cache:.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { cpuSeconds, percentile, round, sequentialTimes, startBenchGateway, startMock } from '../harness.js';

export const name = 'response cache: hit vs miss, and its cost when nothing hits';

const count = Number(process.env.BENCH_CACHE_COUNT ?? 400);
const body = (model: string, content: string) => JSON.stringify({ model, temperature: 0, max_tokens: 16, messages: [{ role: 'user', content }] });

/** The gateway's CPU seconds per request over `count` distinct requests to `model`, sent sequentially. */
async function cpuPerRequest(url: string, key: string, pid: number, model: string, tag: string): Promise<number> {
  const target = new URL(`${url}/v1/chat/completions`);
  const pool = new Pool(target.origin, { connections: 1 });
  const before = cpuSeconds(pid);
  try {
    for (let i = 0; i < count; i++) {
      const res = await pool.request({ method: 'POST', path: target.pathname, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: body(model, `${tag} question ${i}`) });
      if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${await res.body.text()}`);
      await res.body.text();
    }
  } finally {
    await pool.close();
  }
  return (cpuSeconds(pid) - before) / count;
}

export async function run(): Promise<Record<string, number | string>> {
  const mock = await startMock({ MOCK_DELAY_MS: '20' });
  const routes = mkdtempSync(join(tmpdir(), 'bench-routes-'));
  writeFileSync(join(routes, 'cache.yaml'), '- id: cached\n  cache: { ttlSeconds: 3600 }\n  targets: [{ model: bench-chat }]\n- id: uncached\n  targets: [{ model: bench-chat }]\n');
  const gateway = await startBenchGateway(mock.url, { runner: 'tsx', extraConfig: `routes:\n  dir: ${routes}\n` });
  const headers = { authorization: `Bearer ${gateway.key}` };
  const url = `${gateway.url}/v1/chat/completions`;
  try {
    // Warm-up: both routes, and the entry the hits read.
    await cpuPerRequest(gateway.url, gateway.key, gateway.pid, 'uncached', 'warm');
    await cpuPerRequest(gateway.url, gateway.key, gateway.pid, 'cached', 'warm');
    const hits = await sequentialTimes(url, headers, body('cached', 'the same question'), count);
    const misses = await sequentialTimes(url, { ...headers, 'cache-control': 'no-cache' }, body('cached', 'the same question'), count / 4);
    const rounds = { off: [] as number[], on: [] as number[] };
    for (let r = 0; r < 3; r++) {
      rounds.off.push(await cpuPerRequest(gateway.url, gateway.key, gateway.pid, 'uncached', `off-${r}`));
      rounds.on.push(await cpuPerRequest(gateway.url, gateway.key, gateway.pid, 'cached', `on-${r}`));
    }
    const off = percentile(rounds.off, 50);
    const on = percentile(rounds.on, 50);
    const hit = percentile(hits.slice(1), 50);
    const miss = percentile(misses, 50);
    return {
      'hit p50 ms': round(hit),
      'miss p50 ms (20 ms upstream)': round(miss),
      'miss / hit': round(miss / hit, 1),
      'CPU us per request, no cache': round(off * 1e6, 0),
      'CPU us per request, cache on, no hits': round(on * 1e6, 0),
      'cache on, no hits: CPU added %': round(((on - off) / off) * 100, 1),
    };
  } finally {
    await gateway.stop();
    await mock.stop();
    rmSync(routes, { recursive: true, force: true });
  }
}
