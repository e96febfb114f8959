// The response cache's cost when nothing hits, in one process: the gateway built in this process (test/kit, src/ under
// tsx) and asked through fastify's inject (no sockets: the HTTP layer's own work is left out, so the cache's share
// of what remains is, if anything, overstated), the mock upstream in a process of its own. Distinct requests, 8 at a
// time, to a route with cache: (all misses) and to the same target through a route without it, the sides taking turns
// batch by batch, each batch's CPU read with process.cpuUsage (and the main thread's from schedstat) and summed per side
// over a round of 400 a side: the machine's noise at the scale of milliseconds (on a shared VM, +-20 % between blocks
// of 400 run one after the other) weighs on both sides of each round alike. Reports the median of the rounds' ratios, their quartiles and the pooled ratio,
// the same for the main thread alone, and the collector's pauses.
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { startGateway } from '../../test/kit/gateway.js';
import { percentile, round, startMock } from '../harness.js';

export const name = 'response cache: CPU a miss adds, in process (cache on vs off, paired blocks)';

const rounds = Math.max(6, Number(process.env.BENCH_CACHE_ROUNDS ?? 100));
const block = Number(process.env.BENCH_CACHE_BLOCK ?? 400);
const inFlight = 8;
/** BENCH_CACHE_AA=1: both sides to the route without cache: (what the method gives when there is nothing to find). */
const onRoute = process.env.BENCH_CACHE_AA ? 'cache-no' : 'cache-on';

export async function run(): Promise<Record<string, number | string>> {
  const mock = await startMock();
  const gw = await startGateway({
    channels: { bench: `id: bench\nprotocol: openai-chat\nbaseUrl: ${mock.url}/v1\nmodels:\n  - id: bench-chat\n    upstream: bench-upstream\n    kind: chat\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\n` },
    // Two route names of one length: both sides' bodies are the same size.
    // BENCH_CACHE_MAX_BYTES: a smaller memory store (evicting as fast as it stores: the same work, no heap growing).
    ...(process.env.BENCH_CACHE_MAX_BYTES ? { extraConfig: `cache:\n  maxBytes: ${Number(process.env.BENCH_CACHE_MAX_BYTES)}\n` } : {}),
    files: { 'routes/cache.yaml': '- id: cache-on\n  cache: { ttlSeconds: 3600 }\n  targets: [{ model: bench-chat }]\n- id: cache-no\n  targets: [{ model: bench-chat }]\n' },
  });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${gw.key}` };
  let n = 0;
  // GC pauses (the main thread's share of collection) per block: what keeping the answers costs the collector.
  const gc = { ms: 0, major: 0 };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.ms += entry.duration;
      if (((entry as { detail?: { kind?: number } }).detail)?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) gc.major++;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  /** The main thread's CPU nanoseconds (schedstat): the collector's helper threads and the compiler's left out. */
  const mainThreadNs = () => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
  /** One side's CPU in a round: process (us), main thread (us), GC pauses seen (ms), major GCs. */
  const side = () => ({ cpu: 0, main: 0, gcMs: 0, major: 0 });
  type Side = ReturnType<typeof side>;
  /** One batch of `inFlight` distinct requests to `model`, its CPU added to `into`. */
  const batch = async (model: string, into: Side): Promise<void> => {
    const gcBefore = { ...gc };
    const mainBefore = mainThreadNs();
    const before = process.cpuUsage();
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        const payload = JSON.stringify({ model, temperature: 0, max_tokens: 16, messages: [{ role: 'user', content: `question ${String(n++).padStart(8, '0')}` }] });
        const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload });
        if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${res.body}`);
      }),
    );
    const used = process.cpuUsage(before);
    into.cpu += used.user + used.system;
    into.main += (mainThreadNs() - mainBefore) / 1000;
    // The observer's entries arrive on a later turn: some are counted to the batch after, alike for both sides.
    into.gcMs += gc.ms - gcBefore.ms;
    into.major += gc.major - gcBefore.major;
  };
  /**
   * One round: `block` requests each side, in batches that alternate between the sides (which goes first alternating
   * too), so whatever the machine does at the scale of milliseconds (the other hyperthread's load, preemption) falls on
   * both sides alike; the round's figure is the ratio of the sides' sums.
   */
  const round_ = async (): Promise<[Side, Side]> => {
    const [on, off] = [side(), side()];
    for (let i = 0; i < block / inFlight; i++) {
      if (i % 2) (await batch('cache-no', off), await batch(onRoute, on));
      else (await batch(onRoute, on), await batch('cache-no', off));
    }
    return [on, off];
  };
  const loadBefore = loadavg()[0];
  try {
    for (let w = 0; w < 3; w++) await round_();
    const rows: [Side, Side][] = [];
    for (let r = 0; r < rounds; r++) rows.push(await round_());
    const on = rows.map(([o]) => o.cpu / block);
    const off = rows.map(([, o]) => o.cpu / block);
    const mainAdded = rows.map(([o, f]) => (o.main / f.main - 1) * 100);
    const total = (pick: (s: Side) => number, which: 0 | 1) => rows.reduce((sum, row) => sum + pick(row[which]), 0);
    const gcOn = { ms: total((s) => s.gcMs, 0), major: total((s) => s.major, 0) };
    const gcOff = { ms: total((s) => s.gcMs, 1), major: total((s) => s.major, 1) };
    const added = on.map((v, i) => (v / off[i] - 1) * 100);
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    return {
      'CPU us per request, no cache (median)': round(percentile(off, 50), 1),
      'CPU us per request, cache on, every request a miss (median)': round(percentile(on, 50), 1),
      'CPU added %, median of rounds': round(percentile(added, 50), 1),
      'CPU added %, rounds pooled': round((sum(on) / sum(off) - 1) * 100, 1),
      'CPU added %, quartiles of rounds (25th / 75th)': `${round(percentile(added, 25), 1)} / ${round(percentile(added, 75), 1)}`,
      'main thread only: CPU added %, median of rounds': round(percentile(mainAdded, 50), 1),
      'main thread only: quartiles of rounds (25th / 75th)': `${round(percentile(mainAdded, 25), 1)} / ${round(percentile(mainAdded, 75), 1)}`,
      'GC pause us per request, cache on / off': `${round((gcOn.ms * 1000) / (rounds * block), 2)} / ${round((gcOff.ms * 1000) / (rounds * block), 2)}`,
      'major GCs, cache on / off': `${gcOn.major} / ${gcOff.major}`,
      'heap used MiB at the end': round(process.memoryUsage().heapUsed / 2 ** 20, 1),
      rounds: `${rounds} rounds of ${block} requests a side, in batches of ${inFlight} in flight alternating between the sides, through inject`,
      'load average (1 min) before / after': `${round(loadBefore, 2)} / ${round(loadavg()[0], 2)}`,
    };
  } finally {
    observer.disconnect();
    await gw.close();
    await mock.stop();
  }
}
