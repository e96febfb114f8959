// The figure published gateway comparisons give: the most requests per second held while the upstream takes 20 ms to
// answer, with p99 under 1 s and errors under 0.1 %. An open-loop load (requests sent on a fixed schedule, each timed
// from when it was due, so a relay that falls behind is charged its queue) steps the rate up until a step fails; for the
// gateway with one worker and with server.workers at the number of cores, and for the bare fastify + undici relay.
import { availableParallelism } from 'node:os';
import { Pool } from 'undici';
import { chatBody, percentile, round, spawnUntil, startBenchGateway, startMock } from '../harness.js';

export const name = 'capacity with a 20 ms upstream';

const upstreamMs = 20;
const stepSeconds = Number(process.env.BENCH_CAPACITY_SECONDS ?? 5);
const rates = [100, 200, 400, 700, 1000, 1400, 2000, 2800, 4000, 5600, 8000, 11000, 16000];

interface Step {
  rate: number;
  p99: number;
  errorShare: number;
  /** Answers a second over the step, from its start to its last answer. */
  achieved: number;
}

/** Sends `rate` requests a second for `stepSeconds` on a schedule, each timed from when it was due. */
async function step(url: string, headers: Record<string, string>, rate: number): Promise<Step> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 512, keepAliveTimeout: 30_000 });
  const body = chatBody();
  const total = rate * stepSeconds;
  const times: number[] = [];
  let errors = 0;
  const pending: Promise<void>[] = [];
  const started = performance.now();
  try {
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      pending.push(
        pool
          .request({ method: 'POST', path: target.pathname, headers: { 'content-type': 'application/json', ...headers }, body, headersTimeout: 10_000, bodyTimeout: 10_000 })
          .then(async (res) => {
            await res.body.text();
            if (res.statusCode !== 200) errors++;
            else times.push(performance.now() - due);
          })
          .catch(() => void errors++),
      );
    }
    await Promise.all(pending);
  } finally {
    await pool.close();
  }
  const achieved = (times.length * 1000) / (performance.now() - started);
  return { rate, p99: times.length ? percentile(times, 99) : Number.POSITIVE_INFINITY, errorShare: errors / total, achieved };
}

/** The highest rate whose step held (p99 < 1 s, errors < 0.1 %), and the steps' p99 on the way. */
async function capacity(url: string, headers: Record<string, string>): Promise<{ held: number; trail: string }> {
  let held = 0;
  const trail: string[] = [];
  for (const rate of rates) {
    const result = await step(url, headers, rate);
    trail.push(`${rate} (${round(result.achieved, 0)} answered/s): p99 ${round(result.p99, 1)} ms${result.errorShare ? `, ${round(result.errorShare * 100, 2)} % errors` : ''}`);
    if (result.p99 >= 1000 || result.errorShare >= 0.001) break;
    held = rate;
  }
  return { held, trail: trail.join('; ') };
}

export async function run(): Promise<Record<string, number | string>> {
  const mock = await startMock({ MOCK_DELAY_MS: String(upstreamMs) });
  const cores = availableParallelism();
  const one = await startBenchGateway(mock.url);
  const all = await startBenchGateway(mock.url, { workers: cores });
  // The bare relay's upstream pool is not the limit here (at 20 ms an answer, 128 connections carry 6,400 req/s).
  const bare = await spawnUntil('bench/plain-relay.ts', [], { UPSTREAM_URL: mock.url, RELAY_CONNECTIONS: '4096' }, /RELAY_URL=(\S+)/);
  try {
    const b = await capacity(`${bare.match[1]}/v1/chat/completions`, {});
    const g1 = await capacity(`${one.url}/v1/chat/completions`, { authorization: `Bearer ${one.key}` });
    const gAll = await capacity(`${all.url}/v1/chat/completions`, { authorization: `Bearer ${all.key}` });
    return {
      'bare relay: most req/s held (p99 < 1 s, errors < 0.1 %)': b.held,
      'gateway, 1 worker: most req/s held': g1.held,
      [`gateway, ${cores} workers: most req/s held`]: gAll.held,
      'gateway 1 worker / bare relay': b.held ? round(g1.held / b.held) : 'n/a',
      'bare relay steps': b.trail,
      'gateway 1 worker steps': g1.trail,
      [`gateway ${cores} workers steps`]: gAll.trail,
    };
  } finally {
    await one.stop();
    await all.stop();
    await bare.stop();
    await mock.stop();
  }
}
