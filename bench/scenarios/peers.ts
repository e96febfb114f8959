// The figures peers publish (Busbar's "On the Bench", July 2026: added p99 at c=1 over a direct call, and sustained
// req/s at a 20 ms mock holding p99 under 1 s), measured here in one run beside the bare fastify + undici relay and
// Portkey's gateway (bench/portkey.ts): added p50, p99 and first token at c=1 over 5,000 requests after a warm-up; the
// most req/s held at a 20 ms upstream with one worker, with every core, Portkey's in its one process and the bare relay's
// (a relay with no auth, billing or logs: how far the ratio to Portkey reaches here without them); RSS idle and at that
// load. Issue 52's targets are printed beside the figures they judge.
import { availableParallelism } from 'node:os';
import { chatBody, percentile, round, rssMiB, sequentialTimes, spawnUntil, startBenchGateway, startMock, throughput } from '../harness.js';
import { capacity } from '../open-loop.js';
import { portkeyStreams, portkeyVersion, startPortkey } from '../portkey.js';

export const name = 'peers: the published figures, beside Portkey';

const count = Number(process.env.BENCH_PEERS_COUNT ?? 5000);
const firstTokenCount = Number(process.env.BENCH_PEERS_FIRST_TOKEN_COUNT ?? 1000);

interface Target {
  url: string;
  headers: Record<string, string>;
}

/**
 * A process tree's RSS (MiB) once eight readings a second apart lie within 1 MiB (the heap's settling collections are
 * 5.5 s apart, src/base/settle-heap.ts: two readings alike can fall between two of them), after 2 s at least and 60 s
 * at most.
 */
async function settledRss(pid: number): Promise<number> {
  await new Promise((r) => setTimeout(r, 2000));
  const readings: number[] = [];
  for (let i = 0; i < 58; i++) {
    readings.push(sum(rssMiB(pid)));
    const last = readings.slice(-8);
    if (last.length === 8 && Math.max(...last) - Math.min(...last) < 1) return last[7];
    await new Promise((r) => setTimeout(r, 1000));
  }
  return readings[readings.length - 1];
}

const pair = (a: number, b: number) => `${round(a)} / ${round(b)}`;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/** c=1 against each target in turn (two rounds, so a passing disturbance weighs on all): full answers, then first events. */
async function sequential(targets: Record<string, Target & { streams?: boolean }>): Promise<{ full: Record<string, number[]>; first: Record<string, number[]> }> {
  const full: Record<string, number[]> = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
  const first: Record<string, number[]> = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
  for (const t of Object.values(targets)) {
    await throughput(`${t.url}/v1/chat/completions`, t.headers, chatBody(), 4, 2);
    await sequentialTimes(`${t.url}/v1/chat/completions`, t.headers, chatBody(), 500);
  }
  for (let round = 0; round < 2; round++) {
    for (const [name, t] of Object.entries(targets)) {
      full[name].push(...(await sequentialTimes(`${t.url}/v1/chat/completions`, t.headers, chatBody(), count / 2)));
      if (t.streams !== false) first[name].push(...(await sequentialTimes(`${t.url}/v1/chat/completions`, t.headers, chatBody({ stream: true }), firstTokenCount / 2, true)));
    }
  }
  return { full, first };
}

async function latencyFigures(): Promise<Record<string, number | string>> {
  const mock = await startMock();
  const gateway = await startBenchGateway(mock.url);
  const bare = await spawnUntil('bench/plain-relay.ts', [], { UPSTREAM_URL: mock.url }, /RELAY_URL=(\S+)/);
  const portkey = await startPortkey(mock.url);
  try {
    // Idle: once the gateway has settled its heap after the start (src/base/settle-heap.ts, a few seconds), read when
    // its RSS has stopped falling.
    const started = { gateway: await settledRss(gateway.pid), portkey: sum(rssMiB(portkey.pid)) };
    const targets = {
      direct: { url: mock.url, headers: {} },
      bare: { url: bare.match[1], headers: {} },
      gateway: { url: gateway.url, headers: { authorization: `Bearer ${gateway.key}` } },
      portkey: { url: portkey.url, headers: portkey.headers, streams: false },
    };
    const { full, first } = await sequential(targets);
    await new Promise((r) => setTimeout(r, 2000));
    const idle = { gateway: sum(rssMiB(gateway.pid)), portkey: sum(rssMiB(portkey.pid)) };
    // Quiet for 30 s after serving, a gateway settles its heap again (resettleWhenIdle in src/base/settle-heap.ts).
    await new Promise((r) => setTimeout(r, 38_000));
    const resettled = { gateway: await settledRss(gateway.pid), portkey: sum(rssMiB(portkey.pid)) };
    const p = (name: keyof typeof targets, q: number) => percentile(full[name], q);
    const added = (name: keyof typeof targets) => pair(p(name, 50) - p('direct', 50), p(name, 99) - p('direct', 99));
    const firstP50 = (name: keyof typeof targets) => percentile(first[name], 50);
    return {
      [`c=1, ${count} requests each: direct call p50 / p99 ms`]: pair(p('direct', 50), p('direct', 99)),
      'added over a direct call, p50 / p99 ms: bare relay': added('bare'),
      'added over a direct call, p50 / p99 ms: gateway (1 worker)': added('gateway'),
      [`added over a direct call, p50 / p99 ms: Portkey ${portkeyVersion}`]: added('portkey'),
      'gateway p50 beyond the bare relay ms (target <= 0.15)': round(p('gateway', 50) - p('bare', 50)),
      'gateway p99 beyond the bare relay ms (target <= 0.5)': round(p('gateway', 99) - p('bare', 99)),
      [`first SSE event p50 ms, ${firstTokenCount} streams each: direct / bare / gateway`]: `${round(firstP50('direct'))} / ${round(firstP50('bare'))} / ${round(firstP50('gateway'))}`,
      'first SSE event, Portkey': portkeyStreams,
      'gateway first event beyond the bare relay ms (target <= 0.25)': round(firstP50('gateway') - firstP50('bare')),
      'RSS MiB idle, started, before any request: gateway (1 worker) / Portkey (target < 100 per worker)': pair(started.gateway, started.portkey),
      'RSS MiB idle after the run: gateway (1 worker) / Portkey': pair(idle.gateway, idle.portkey),
      'RSS MiB idle 40 s after the run (the gateway settled again): gateway (1 worker) / Portkey (target < 100 per worker)': pair(resettled.gateway, resettled.portkey),
    };
  } finally {
    await gateway.stop();
    await bare.stop();
    await portkey.stop();
    await mock.stop();
  }
}

async function capacityFigures(): Promise<Record<string, number | string>> {
  const mock = await startMock({ MOCK_DELAY_MS: '20' });
  const cores = availableParallelism();
  const one = await startBenchGateway(mock.url);
  const all = await startBenchGateway(mock.url, { workers: cores });
  const portkey = await startPortkey(mock.url);
  // As many connections to the upstream as a channel's pool has by default (pool.connections), so its pool is not what it holds.
  const bare = await spawnUntil('bench/plain-relay.ts', [], { UPSTREAM_URL: mock.url, RELAY_CONNECTIONS: '1024' }, /RELAY_URL=(\S+)/);
  try {
    await settledRss(all.pid);
    const idleAll = rssMiB(all.pid);
    const g1 = await capacity(`${one.url}/v1/chat/completions`, { authorization: `Bearer ${one.key}` }, () => sum(rssMiB(one.pid)));
    // Cluster workers only (the primary serves nothing): the most resident one at the held rate.
    const gAll = await capacity(`${all.url}/v1/chat/completions`, { authorization: `Bearer ${all.key}` }, () => Math.max(...rssMiB(all.pid).slice(1)));
    const pk = await capacity(`${portkey.url}/v1/chat/completions`, portkey.headers, () => sum(rssMiB(portkey.pid)));
    const plain = await capacity(`${bare.match[1]}/v1/chat/completions`, {});
    const toPortkey = (held: number) => (pk.held ? round(held / pk.held, 2) : 'n/a (Portkey held no step)');
    return {
      [`most req/s held at a 20 ms upstream (p99 < 1 s, errors < 0.1 %, 95 % of the rate answered): gateway 1 worker / gateway ${cores} workers / Portkey (1 process)`]: `${g1.held} / ${gAll.held} / ${pk.held}`,
      'gateway 1 worker / Portkey, req/s held (target >= 8)': toPortkey(g1.held),
      'most req/s held at a 20 ms upstream: the bare relay (1 process)': plain.held,
      'bare relay / Portkey, req/s held (a relay with no auth, billing or logs)': toPortkey(plain.held),
      'gateway 1 worker / bare relay, req/s held': plain.held ? round(g1.held / plain.held, 2) : 'n/a (the bare relay held no step)',
      [`RSS MiB at the held rate: gateway 1 worker / a gateway worker of ${cores} / Portkey`]: `${round(g1.sampledAtHeld ?? 0)} / ${round(gAll.sampledAtHeld ?? 0)} / ${round(pk.sampledAtHeld ?? 0)}`,
      [`RSS MiB idle, gateway of ${cores} workers: primary, then each worker`]: idleAll.map((v) => round(v, 1)).join(' / '),
      'gateway 1 worker steps': g1.trail,
      [`gateway ${cores} workers steps`]: gAll.trail,
      'Portkey steps': pk.trail,
      'bare relay steps': plain.trail,
    };
  } finally {
    await one.stop();
    await all.stop();
    await portkey.stop();
    await bare.stop();
    await mock.stop();
  }
}

export async function run(): Promise<Record<string, number | string>> {
  return { ...(await latencyFigures()), ...(await capacityFigures()) };
}
