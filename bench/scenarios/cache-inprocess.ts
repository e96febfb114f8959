// The response cache's cost when nothing hits, in one process: the gateway built in this process (test/kit, src/ under
// tsx) and asked through fastify's inject (no sockets: the HTTP layer's own work is left out, so the cache's share
// of what remains is, if anything, overstated), the mock upstream in a process of its own. Blocks of 400 distinct
// requests, 8 at a time, to a route with cache: (all misses) and to the same target through a route without it,
// alternating which goes first, their CPU read with process.cpuUsage; many short paired rounds, so the machine's drift
// weighs on both sides of each pair alike. Reports the median of the rounds' ratios, their quartiles and the pooled ratio.
import { loadavg } from 'node:os';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { startGateway } from '../../test/kit/gateway.js';
import { percentile, round, startMock } from '../harness.js';

export const name = 'response cache: CPU a miss adds, in process (cache on vs off, paired blocks)';

const rounds = Math.max(6, Number(process.env.BENCH_CACHE_ROUNDS ?? 60));
const block = Number(process.env.BENCH_CACHE_BLOCK ?? 400);
const inFlight = 8;

export async function run(): Promise<Record<string, number | string>> {
  const mock = await startMock();
  const gw = await startGateway({
    channels: { bench: `id: bench\nprotocol: openai-chat\nbaseUrl: ${mock.url}/v1\nmodels:\n  - id: bench-chat\n    upstream: bench-upstream\n    kind: chat\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\n` },
    // Two route names of one length: both sides' bodies are the same size.
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
  const gcOn = { ms: 0, major: 0 };
  const gcOff = { ms: 0, major: 0 };
  /** CPU microseconds per request of one block to `model`. */
  const measure = async (model: string): Promise<number> => {
    const gcBefore = { ...gc };
    const into = model === 'cache-on' ? gcOn : gcOff;
    const before = process.cpuUsage();
    for (let i = 0; i < block; i += inFlight) {
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          const payload = JSON.stringify({ model, temperature: 0, max_tokens: 16, messages: [{ role: 'user', content: `question ${String(n++).padStart(8, '0')}` }] });
          const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload });
          if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${res.body}`);
        }),
      );
    }
    const used = process.cpuUsage(before);
    // The observer's entries arrive on a later turn: what they report is counted to the block that follows, alike for both.
    into.ms += gc.ms - gcBefore.ms;
    into.major += gc.major - gcBefore.major;
    return (used.user + used.system) / block;
  };
  const loadBefore = loadavg()[0];
  try {
    for (let w = 0; w < 3; w++) (await measure('cache-on'), await measure('cache-no'));
    Object.assign(gcOn, { ms: 0, major: 0 });
    Object.assign(gcOff, { ms: 0, major: 0 });
    const on: number[] = [];
    const off: number[] = [];
    for (let r = 0; r < rounds; r++) {
      if (r % 2) {
        off.push(await measure('cache-no'));
        on.push(await measure('cache-on'));
      } else {
        on.push(await measure('cache-on'));
        off.push(await measure('cache-no'));
      }
    }
    const added = on.map((v, i) => (v / off[i] - 1) * 100);
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    return {
      'CPU us per request, no cache (median)': round(percentile(off, 50), 1),
      'CPU us per request, cache on, every request a miss (median)': round(percentile(on, 50), 1),
      'CPU added %, median of paired rounds': round(percentile(added, 50), 1),
      'CPU added %, rounds pooled': round((sum(on) / sum(off) - 1) * 100, 1),
      'CPU added %, quartiles of rounds (25th / 75th)': `${round(percentile(added, 25), 1)} / ${round(percentile(added, 75), 1)}`,
      'GC pause us per request, cache on / off': `${round((gcOn.ms * 1000) / (rounds * block), 2)} / ${round((gcOff.ms * 1000) / (rounds * block), 2)}`,
      'major GCs, cache on / off': `${gcOn.major} / ${gcOff.major}`,
      'heap used MiB at the end': round(process.memoryUsage().heapUsed / 2 ** 20, 1),
      rounds: `${rounds} paired blocks of ${block} requests, ${inFlight} in flight, through inject`,
      'load average (1 min) before / after': `${round(loadBefore, 2)} / ${round(loadavg()[0], 2)}`,
    };
  } finally {
    observer.disconnect();
    await gw.close();
    await mock.stop();
  }
}
