// Bytes allocated per request (issue 52's allocation budget): the gateway (one worker) and the bare fastify + undici
// relay run with bench/alloc-sampler.mjs, V8's sampling heap profiler counting collected objects too; each is loaded
// with non-streaming chat requests at c=32 (BENCH_ALLOC_REQUESTS, default 5,000, after a warm-up) inside a sampling
// window, in alternating rounds (BENCH_ALLOC_ROUNDS, default 2). BENCH_ALLOC_BASELINE=<git ref> adds an earlier build of
// the gateway, measured the same way. The gateway's figure is judged against BENCH_ALLOC_BUDGET bytes a request
// (default 44 KiB, just above what the gateway allocated when the budget was set: 42.6-43.3 KiB, against 47-48 KiB before issue 52 and 22 KiB for the bare relay); the functions that allocate most are printed as well.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { chatBody, percentile, repoRoot, round, spawnUntil, startBenchGateway, startMock } from '../harness.js';
import { checkOut } from './baseline.js';

export const name = 'allocations: bytes allocated per request, gateway and bare relay';

const requests = Number(process.env.BENCH_ALLOC_REQUESTS ?? 5000);
const rounds = Number(process.env.BENCH_ALLOC_ROUNDS ?? 2);
const budget = Number(process.env.BENCH_ALLOC_BUDGET ?? 44 * 1024);
const baselineRef = process.env.BENCH_ALLOC_BASELINE;

interface Sampled {
  url: string;
  headers: Record<string, string>;
  pid: number;
  stop(): Promise<void>;
}

/** One sampling window around `requests` requests: bytes a request, and the largest allocators (bytes a request). */
async function window(target: Sampled, dir: string): Promise<{ perRequest: number; top: [string, number][] }> {
  const options = { url: `${target.url}/v1/chat/completions`, method: 'POST' as const, headers: { 'content-type': 'application/json', ...target.headers }, body: chatBody(), connections: 32 };
  const before = new Set(readdirSync(dir));
  process.kill(target.pid, 'SIGUSR2');
  await new Promise((r) => setTimeout(r, 200));
  const result = await autocannon({ ...options, amount: requests });
  if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx and ${result.errors} errors`);
  process.kill(target.pid, 'SIGUSR2');
  for (let i = 0; i < 100; i++) {
    const file = readdirSync(dir).find((f) => f.startsWith(`alloc-${target.pid}-`) && !before.has(f));
    if (file) {
      // Written whole by one writeFileSync; read once it parses.
      try {
        const { bytes, top } = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { bytes: number; top: [string, number][] };
        return { perRequest: bytes / requests, top: top.map(([fn, b]) => [fn, b / requests]) };
      } catch {
        // Not complete yet.
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no allocation profile from ${target.pid}`);
}

export async function run(): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-alloc-'));
  const sampler = join(repoRoot, 'bench', 'alloc-sampler.mjs');
  const env = { BENCH_ALLOC_DIR: dir };
  const nodeArgs = ['--import', sampler];
  const mock = await startMock();
  const checkout = baselineRef ? checkOut(baselineRef) : undefined;
  const targets: Record<string, Sampled> = {};
  try {
    const gateway = await startBenchGateway(mock.url, { nodeArgs, env });
    targets.gateway = { url: gateway.url, headers: { authorization: `Bearer ${gateway.key}` }, pid: gateway.pid, stop: gateway.stop };
    const bare = await spawnUntil('bench/plain-relay.ts', [], { UPSTREAM_URL: mock.url, ...env }, /RELAY_URL=(\S+)/, nodeArgs);
    // tsx runs the relay in a child process: the one that serves is the youngest descendant.
    targets.bare = { url: bare.match[1], headers: {}, pid: servingPid(bare.child.pid!), stop: bare.stop };
    if (checkout) {
      const base = await startBenchGateway(mock.url, { root: checkout, nodeArgs, env });
      targets.baseline = { url: base.url, headers: { authorization: `Bearer ${base.key}` }, pid: base.pid, stop: base.stop };
    }
    for (const t of Object.values(targets)) await autocannon({ url: `${t.url}/v1/chat/completions`, method: 'POST', headers: { 'content-type': 'application/json', ...t.headers }, body: chatBody(), connections: 32, amount: 3000 });
    const measured: Record<string, { perRequest: number; top: [string, number][] }[]> = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
    const names = Object.keys(targets);
    for (let i = 0; i < rounds; i++) for (const which of i % 2 ? [...names].reverse() : names) measured[which].push(await window(targets[which], dir));
    const median = (name: string) => percentile(measured[name].map((m) => m.perRequest), 50);
    const spread = (name: string) => measured[name].map((m) => Math.round(m.perRequest)).join(' / ');
    const top = measured.gateway[measured.gateway.length - 1].top.slice(0, Number(process.env.BENCH_ALLOC_TOP ?? 12)).map(([fn, b]) => `${fn} ${Math.round(b)}`).join('; ');
    return {
      [`bytes allocated a request, gateway (1 worker), c=32, ${requests} requests a round (rounds)`]: spread('gateway'),
      'bytes allocated a request, bare relay (rounds)': spread('bare'),
      ...(baselineRef ? { [`bytes allocated a request, gateway at ${baselineRef} (rounds)`]: spread('baseline'), [`gateway / ${baselineRef}`]: round(median('gateway') / median('baseline'), 3) } : {}),
      'gateway / bare relay, bytes a request': round(median('gateway') / median('bare'), 2),
      [`gateway within its budget of ${budget} bytes a request`]: median('gateway') <= budget ? 'yes' : 'no',
      'gateway: the functions that allocate most, bytes a request (last round)': top,
    };
  } finally {
    for (const t of Object.values(targets)) await t.stop();
    await mock.stop();
    rmSync(dir, { recursive: true, force: true });
    if (checkout) rmSync(checkout, { recursive: true, force: true });
  }
}

/** The deepest descendant of `pid` (tsx's launcher starts the script in a child), or `pid` itself. */
function servingPid(pid: number): number {
  for (;;) {
    let children: string[] = [];
    try {
      children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    } catch {
      return pid;
    }
    if (!children.length) return pid;
    pid = Number(children[children.length - 1]);
  }
}
