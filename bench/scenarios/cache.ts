// The response cache (docs/caching.md) against a 20 ms upstream: a hit's time beside a miss's (sequential, one
// connection), and the gateway's CPU per request on a route with cache: whose requests never hit (each one distinct)
// beside the same route without cache:, in rounds that alternate which goes first (the machine's drift weighs on
// both), each round's ratio its own figure; CPU read per thread in nanoseconds (cpuSecondsFine).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { cpuSecondsFine, percentile, round, sequentialTimes, startBenchGateway, startMock } from '../harness.js';

export const name = 'response cache: hit vs miss, and its cost when nothing hits';

const count = Number(process.env.BENCH_CACHE_COUNT ?? 2000);
const rounds = Number(process.env.BENCH_CACHE_ROUNDS ?? 8);
/** Requests in flight while CPU is measured: enough that a round takes seconds, not minutes, against a 20 ms upstream. */
const connections = 8;
const body = (model: string, content: string) => JSON.stringify({ model, temperature: 0, max_tokens: 16, messages: [{ role: 'user', content }] });

/** The gateway's CPU seconds per request over `n` distinct requests to `model`, `connections` at a time. */
async function cpuPerRequest(url: string, key: string, pid: number, model: string, tag: string, n = count): Promise<number> {
  const target = new URL(`${url}/v1/chat/completions`);
  const pool = new Pool(target.origin, { connections });
  let next = 0;
  const send = async () => {
    for (let i = next++; i < n; i = next++) {
      const res = await pool.request({ method: 'POST', path: target.pathname, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: body(model, `${tag} question ${i}`) });
      if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${await res.body.text()}`);
      await res.body.text();
    }
  };
  const before = cpuSecondsFine(pid);
  try {
    await Promise.all(Array.from({ length: connections }, send));
  } finally {
    await pool.close();
  }
  return (cpuSecondsFine(pid) - before) / n;
}

export async function run(): Promise<Record<string, number | string>> {
  const mock = await startMock({ MOCK_DELAY_MS: '20' });
  const routes = mkdtempSync(join(tmpdir(), 'bench-routes-'));
  writeFileSync(join(routes, 'cache.yaml'), '- id: cached\n  cache: { ttlSeconds: 3600 }\n  targets: [{ model: bench-chat }]\n- id: uncached\n  targets: [{ model: bench-chat }]\n');
  const gateway = await startBenchGateway(mock.url, { runner: 'tsx', extraConfig: `routes:\n  dir: ${routes}\n` });
  const headers = { authorization: `Bearer ${gateway.key}` };
  const url = `${gateway.url}/v1/chat/completions`;
  const loadBefore = loadavg()[0];
  try {
    // Warm-up: both routes, and the entry the hits read.
    await cpuPerRequest(gateway.url, gateway.key, gateway.pid, 'uncached', 'warm', count);
    await cpuPerRequest(gateway.url, gateway.key, gateway.pid, 'cached', 'warm', count);
    const hits = await sequentialTimes(url, headers, body('cached', 'the same question'), 400);
    const misses = await sequentialTimes(url, { ...headers, 'cache-control': 'no-cache' }, body('cached', 'the same question'), 100);
    const off: number[] = [];
    const on: number[] = [];
    const ratios: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const measure = (model: string) => cpuPerRequest(gateway.url, gateway.key, gateway.pid, model, `${model}-${r}`);
      let a: number;
      let b: number;
      if (r % 2 === 0) {
        a = await measure('uncached');
        b = await measure('cached');
      } else {
        b = await measure('cached');
        a = await measure('uncached');
      }
      off.push(a);
      on.push(b);
      ratios.push(b / a);
    }
    const hit = percentile(hits.slice(1), 50);
    const miss = percentile(misses, 50);
    const added = ratios.map((r) => round((r - 1) * 100, 1));
    return {
      'hit p50 ms': round(hit),
      'miss p50 ms (20 ms upstream)': round(miss),
      'miss / hit': round(miss / hit, 1),
      'CPU us per request, no cache (median of rounds)': round(percentile(off, 50) * 1e6, 1),
      'CPU us per request, cache on, no hits (median)': round(percentile(on, 50) * 1e6, 1),
      'cache on, no hits: CPU added %, median of rounds': round((percentile(ratios, 50) - 1) * 100, 1),
      'CPU added % per round (min / max)': `${Math.min(...added)} / ${Math.max(...added)}`,
      'CPU added % each round': added.join(' '),
      'load average (1 min) before / after': `${round(loadBefore, 2)} / ${round(loadavg()[0], 2)}`,
    };
  } finally {
    await gateway.stop();
    await mock.stop();
    rmSync(routes, { recursive: true, force: true });
  }
}
