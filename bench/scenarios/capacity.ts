// The most requests per second held while the upstream takes 20 ms to answer (p99 under 1 s, errors under 0.1 %;
// bench/open-loop.ts): the gateway with one worker and with server.workers at the number of cores, and the bare
// fastify + undici relay. The peers scenario gives the same figure beside Portkey's.
import { availableParallelism } from 'node:os';
import { round, spawnUntil, startBenchGateway, startMock } from '../harness.js';
import { capacity } from '../open-loop.js';

export const name = 'capacity with a 20 ms upstream';

const upstreamMs = 20;

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
      'bare relay: most req/s held (p99 < 1 s, errors < 0.1 %, 95 % of the rate answered)': b.held,
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
