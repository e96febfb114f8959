// npm run bench:profile-compare: where this build's CPU per request differs from an earlier build's
// (PROFILE_BASELINE, a git ref; default 35160dd, the build before issue 23's pipeline change), or from the bare
// fastify + undici relay's (PROFILE_BASELINE=bare: what the gateway does that a bare relay does not). Both gateways run with
// --cpu-prof on one mock and are loaded in alternation (chat pass-through, c=32); only the samples taken inside the
// load windows count, so start-up and warm-up are left out. Prints µs per request by part and by function (self time),
// head against baseline, largest differences first. PROFILE_ROUNDS (default 4) rounds of PROFILE_SECONDS (default 5).
// PROFILE_BASELINE=route: one gateway, a route's requests (PROFILE_ROUTE: plain, a one-target route, or weighted, three
// targets) against the same model's sent by name, both from the one profile (what resolving a route costs).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { chatBody, repoRoot, spawnUntil, startBenchGateway, startMock, threadCpuNs } from './harness.js';
import { checkOut } from './scenarios/baseline.js';
import { partOf, type CpuProfile } from './profile-parts.js';

const baselineRef = process.env.PROFILE_BASELINE ?? '35160dd';
const rounds = Number(process.env.PROFILE_ROUNDS ?? 4);
const seconds = Number(process.env.PROFILE_SECONDS ?? 5);
const top = Number(process.env.PROFILE_TOP ?? 40);

interface Window {
  start: number;
  end: number;
}

/** Monotonic µs, the clock V8's profile timestamps use on Linux. */
const nowMicros = () => Number(process.hrtime.bigint() / 1000n);

/** A server under load: a gateway (with its key) or the bare relay. */
interface Target {
  url: string;
  key?: string;
  stop(): Promise<void>;
}

async function startBare(upstreamUrl: string, nodeArgs: string[]): Promise<Target> {
  const proc = await spawnUntil('bench/plain-relay.ts', [], { UPSTREAM_URL: upstreamUrl }, /RELAY_URL=(\S+)/, nodeArgs);
  return { url: proc.match[1], stop: proc.stop };
}

const headers = (target: Target) => ({ 'content-type': 'application/json', ...(target.key ? { authorization: `Bearer ${target.key}` } : {}) });

async function load(gateway: Target, windows: Window[], body = chatBody()): Promise<number> {
  const start = nowMicros();
  const result = await autocannon({ url: `${gateway.url}/v1/chat/completions`, method: 'POST', headers: headers(gateway), body, connections: 32, duration: seconds });
  windows.push({ start, end: nowMicros() });
  if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx and ${result.errors} errors`);
  return result.requests.total;
}

/** Self time inside the windows, by part and by function, in µs. */
function tally(profile: CpuProfile, windows: Window[]): { parts: Map<string, number>; functions: Map<string, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parts = new Map<string, number>();
  const functions = new Map<string, number>();
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i];
    if (!windows.some((w) => t >= w.start && t <= w.end)) return;
    const delta = profile.timeDeltas[i + 1] ?? 0;
    const { url, functionName, lineNumber } = byId.get(id)!.callFrame;
    const file = url.replace(/^file:\/\//, '').replace(/.*\/(node_modules|src|dist)\//, '$1/');
    const key = `${file} ${functionName || '(anonymous)'}`;
    const part = partOf(url, functionName);
    parts.set(part, (parts.get(part) ?? 0) + delta);
    const fn = `${key}:${lineNumber + 1}`;
    functions.set(fn, (functions.get(fn) ?? 0) + delta);
  });
  return { parts, functions };
}

function table(title: string, head: Map<string, number>, base: Map<string, number>, headRequests: number, baseRequests: number, limit: number): void {
  const names = new Set([...head.keys(), ...base.keys()]);
  const rows = [...names].map((name) => {
    const h = (head.get(name) ?? 0) / headRequests;
    const b = (base.get(name) ?? 0) / baseRequests;
    return { name, h, b, d: h - b };
  });
  rows.sort((x, y) => Math.abs(y.d) - Math.abs(x.d));
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, v) => a + v, 0);
  console.log(`\n### ${title}\n\n| | head µs/request | baseline µs/request | difference |\n|---|---|---|---|`);
  console.log(`| **all** | ${(sum(head) / headRequests).toFixed(1)} | ${(sum(base) / baseRequests).toFixed(1)} | ${(sum(head) / headRequests - sum(base) / baseRequests).toFixed(1)} |`);
  for (const r of rows.slice(0, limit)) console.log(`| ${r.name.replace(/\|/g, '\\|')} | ${r.h.toFixed(1)} | ${r.b.toFixed(1)} | ${r.d >= 0 ? '+' : ''}${r.d.toFixed(1)} |`);
}

/** A load window's figures beyond the profile: CPU of the main thread and of every thread (schedstat, ns), and GC and allocation totals. */
interface Measured {
  mainNs: number;
  allNs: number;
  gc: Record<string, number>;
  allocBytes: number;
  requests: number;
  /** CPU ns by thread name (/proc/<pid>/task/<tid>/comm: the main thread, V8's workers for GC and the compiler, libuv's pool, the spend thread). */
  byThread: Map<string, number>;
}

const allThreadsNs = (pid: number) => readdirSync(`/proc/${pid}/task`).reduce((sum, tid) => {
  try {
    return sum + threadCpuNs(pid, Number(tid));
  } catch {
    return sum;
  }
}, 0);

/** CPU ns of every thread of `pid`, summed by thread name (the main thread named "main"). */
function threadsByName(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = Number(tid) === pid ? 'main' : readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      byName.set(name, (byName.get(name) ?? 0) + threadCpuNs(pid, Number(tid)));
    } catch {
      // Ended between the listing and the read.
    }
  }
  return byName;
}

/** The last line gc-windows.mjs appended (after a SIGUSR2), once it is there. */
async function gcLine(dir: string, pid: number, lines: number): Promise<Record<string, number>> {
  const file = join(dir, `gc-${pid}.jsonl`);
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const text = existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : [];
    if (text.length >= lines) return JSON.parse(text[lines - 1]) as Record<string, number>;
  }
  throw new Error(`no GC line ${lines} from ${pid}`);
}

/**
 * One gateway with routes over bench-chat: each round loads the route, then the model by name (alternating which
 * first). PROFILE_ROUTE=cached: a route with cache: whose requests all miss (each body distinct, temperature 0) against
 * the same route without cache:, both with distinct bodies of one size; CPU of the main thread and of every thread,
 * GC runs by kind (bench/gc-windows.mjs) per window. PROFILE_ALLOC=1 samples allocations (bench/alloc-sampler.mjs)
 * instead of CPU.
 */
async function routeAgainstModel(): Promise<void> {
  const which = process.env.PROFILE_ROUTE ?? 'plain';
  const route = which === 'weighted' ? 'weighted-route' : which === 'cached' ? 'cache-on' : 'plain-route';
  const baselineModel = which === 'cached' ? 'cache-no' : 'bench-chat';
  const alloc = Boolean(process.env.PROFILE_ALLOC);
  const dir = mkdtempSync(join(tmpdir(), 'profile-route-'));
  const routes = join(dir, 'routes');
  mkdirSync(routes);
  writeFileSync(
    join(routes, 'bench.yaml'),
    '- id: plain-route\n  targets: [{ model: bench-chat }]\n- id: weighted-route\n  strategy: weighted\n  targets:\n    - { model: bench-chat, weight: 60 }\n    - { model: bench-chat-b, weight: 30 }\n    - { model: bench-chat-c, weight: 10 }\n' +
      '- id: cache-on\n  cache: { ttlSeconds: 3600 }\n  targets: [{ model: bench-chat }]\n- id: cache-no\n  targets: [{ model: bench-chat }]\n',
  );
  const model = (id: string) => `  - id: ${id}\n    upstream: bench-upstream\n    kind: chat\n    price: { inputPerMillion: 1.0, outputPerMillion: 2.0 }\n`;
  // PROFILE_CACHE_BYTES: the memory store's bound (and the workspace's share), small enough that the warm-up fills it, so
  // the rounds see the store's steady state (each answer stored evicts an older one), as `bench -- cache.ts` measures it.
  const cacheBytes = Number(process.env.PROFILE_CACHE_BYTES ?? 0);
  const cacheStore = cacheBytes > 0 ? `cache:\n  maxBytes: ${cacheBytes}\n  maxWorkspaceBytes: ${cacheBytes}\n` : '';
  const mock = await startMock();
  try {
    const sampler = alloc ? `--import ${join(repoRoot, 'bench', 'alloc-sampler.mjs')}` : `--cpu-prof --cpu-prof-interval=100 --cpu-prof-dir=${dir}`;
    process.env.BENCH_GATEWAY_NODE_ARGS = `${sampler} --import ${join(repoRoot, 'bench', 'gc-windows.mjs')}`;
    const gateway = await startBenchGateway(mock.url, { extraChannels: model('bench-chat-b') + model('bench-chat-c'), extraConfig: `${cacheStore}routes:\n  dir: ${routes}\n`, env: { BENCH_GC_DIR: dir, BENCH_ALLOC_DIR: dir, BENCH_ALLOC_TOP: '400' } });
    delete process.env.BENCH_GATEWAY_NODE_ARGS;
    let n = 0;
    // Distinct bodies of one length (route names of one length), so a cached route misses every time; temperature 0, so it is not a bypass.
    const distinct = (name: string) => [{ setupRequest: (req: autocannon.Request) => ({ ...req, body: JSON.stringify({ model: name, temperature: 0, max_tokens: 16, messages: [{ role: 'user', content: `question ${String(n++).padStart(9, '0')}` }] }) }) }];
    const models = [route, baselineModel];
    const options = (i: number) => ({ url: `${gateway.url}/v1/chat/completions`, method: 'POST' as const, headers: headers(gateway), body: chatBody({ model: models[i] }), connections: 32, ...(which === 'cached' ? { requests: distinct(models[i]) } : {}) });
    for (const i of [0, 1]) await autocannon({ ...options(i), duration: cacheBytes > 0 ? 6 : 3 });
    const windows: Window[][] = [[], []];
    const measured: Measured[][] = [[], []];
    const requests = [0, 0];
    let lines = 0;
    let allocWindows = 0;
    const allocators = [new Map<string, number>(), new Map<string, number>()];
    for (let r = 0; r < rounds; r++)
      for (const i of r % 2 ? [1, 0] : [0, 1]) {
        process.kill(gateway.pid, 'SIGUSR2');
        const gcBefore = await gcLine(dir, gateway.pid, ++lines);
        const [main, all, threadsBefore] = [threadCpuNs(gateway.pid, gateway.pid), allThreadsNs(gateway.pid), threadsByName(gateway.pid)];
        const start = nowMicros();
        const result = await autocannon({ ...options(i), duration: seconds });
        windows[i].push({ start, end: nowMicros() });
        const [mainAfter, allAfter, threadsAfter] = [threadCpuNs(gateway.pid, gateway.pid), allThreadsNs(gateway.pid), threadsByName(gateway.pid)];
        const byThread = new Map([...threadsAfter].map(([name, ns]) => [name, ns - (threadsBefore.get(name) ?? 0)]));
        process.kill(gateway.pid, 'SIGUSR2');
        const gcAfter = await gcLine(dir, gateway.pid, ++lines);
        if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx and ${result.errors} errors`);
        requests[i] += result.requests.total;
        let allocBytes = 0;
        if (alloc) {
          const file = join(dir, `alloc-${gateway.pid}-${++allocWindows}.json`);
          for (let t = 0; t < 100 && !existsSync(file); t++) await new Promise((res) => setTimeout(res, 100));
          const sampled = JSON.parse(readFileSync(file, 'utf8')) as { bytes: number; top: [string, number][] };
          allocBytes = sampled.bytes;
          for (const [fn, bytes] of sampled.top) allocators[i].set(fn, (allocators[i].get(fn) ?? 0) + bytes);
        }
        const gc = Object.fromEntries(Object.keys(gcAfter).map((k) => [k, gcAfter[k] - gcBefore[k]]));
        measured[i].push({ mainNs: mainAfter - main, allNs: allAfter - all, gc, allocBytes, requests: result.requests.total, byThread });
      }
    await gateway.stop();
    const label = which === 'cached' ? 'cache-no (the same route without cache:)' : 'bench-chat by name';
    console.log(`${route}: ${requests[0]} requests, ${label}: ${requests[1]} requests, ${rounds} alternating rounds of ${seconds} s at c=32 (head: ${route}; baseline: ${baselineModel}), load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    perRequestTable(measured, requests, alloc);
    if (alloc) return table('Bytes allocated by function', allocators[0], allocators[1], requests[0], requests[1], top);
    // The event loop's profile is the largest (a worker thread such as the spend thread writes its own).
    const file = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f)).sort((a, b) => statSync(b).size - statSync(a).size)[0];
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const [h, b] = windows.map((w) => tally(profile, w));
    table('By part', h.parts, b.parts, requests[0], requests[1], 30);
    table(`By function (self time), the ${top} largest differences`, h.functions, b.functions, requests[0], requests[1], top);
  } finally {
    await mock.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Per request, head against baseline: CPU of the main thread and of every thread, GC runs and pauses, bytes allocated; and per round. */
function perRequestTable(measured: Measured[][], requests: number[], alloc: boolean): void {
  const total = (side: Measured[], pick: (m: Measured) => number) => side.reduce((a, m) => a + pick(m), 0);
  const rows: [string, (m: Measured) => number, number][] = [
    ['CPU µs, main thread', (m) => m.mainNs / 1000, 1],
    ['CPU µs, every thread', (m) => m.allNs / 1000, 1],
    ['scavenges per 1,000', (m) => m.gc.minor, 1000],
    ['mark-compacts per 100,000', (m) => m.gc.major, 100_000],
    ['incremental marking steps per 100,000', (m) => m.gc.incremental, 100_000],
    ['GC pause µs (main thread, all kinds)', (m) => (m.gc.minorMs + m.gc.majorMs + m.gc.incrementalMs + m.gc.weakcbMs) * 1000, 1],
    ['scavenge pause µs', (m) => m.gc.minorMs * 1000, 1],
    ['mark-compact pause µs', (m) => m.gc.majorMs * 1000, 1],
    ['heap used growth, bytes', (m) => m.gc.heapUsed, 1],
    ...(alloc ? [['bytes allocated', (m: Measured) => m.allocBytes, 1] as [string, (m: Measured) => number, number]] : []),
  ];
  console.log(`\n### Per request (process-wide)\n\n| | head | baseline | difference |\n|---|---|---|---|`);
  for (const [name, pick, scale] of rows) {
    const [h, b] = [0, 1].map((i) => (total(measured[i], pick) * scale) / requests[i]);
    console.log(`| ${name} | ${h.toFixed(1)} | ${b.toFixed(1)} | ${h - b >= 0 ? '+' : ''}${(h - b).toFixed(1)} |`);
  }
  const names = new Set(measured.flat().flatMap((m) => [...m.byThread.keys()]));
  for (const name of names) {
    const [h, b] = [0, 1].map((i) => total(measured[i], (m) => (m.byThread.get(name) ?? 0) / 1000) / requests[i]);
    console.log(`| CPU µs, threads named ${name} | ${h.toFixed(1)} | ${b.toFixed(1)} | ${h - b >= 0 ? '+' : ''}${(h - b).toFixed(1)} |`);
  }
  const perRound = measured[0].map((m, r) => (((m.allNs / m.requests) / (measured[1][r].allNs / measured[1][r].requests) - 1) * 100).toFixed(1));
  console.log(`\nEvery thread's CPU per request, head over baseline, each round: ${perRound.join(' ')} %`);
}

async function buildAgainstBuild(): Promise<void> {
  const bare = baselineRef === 'bare';
  const checkout = bare ? undefined : checkOut(baselineRef);
  const dirs = [mkdtempSync(join(tmpdir(), 'profile-head-')), mkdtempSync(join(tmpdir(), 'profile-base-'))];
  const mock = await startMock();
  try {
    process.env.BENCH_GATEWAY_NODE_ARGS = `--cpu-prof --cpu-prof-interval=100 --cpu-prof-dir=${dirs[0]}`;
    const head = await startBenchGateway(mock.url);
    const profileArgs = `--cpu-prof --cpu-prof-interval=100 --cpu-prof-dir=${dirs[1]}`;
    process.env.BENCH_GATEWAY_NODE_ARGS = profileArgs;
    const base = checkout ? await startBenchGateway(mock.url, { root: checkout }) : await startBare(mock.url, profileArgs.split(' '));
    delete process.env.BENCH_GATEWAY_NODE_ARGS;
    const both: Target[] = [head, base];
    for (const g of both) await autocannon({ url: `${g.url}/v1/chat/completions`, method: 'POST', headers: headers(g), body: chatBody(), connections: 32, duration: 3 });
    const windows: Window[][] = [[], []];
    const requests = [0, 0];
    for (let i = 0; i < rounds; i++) {
      for (const which of i % 2 ? [1, 0] : [0, 1]) requests[which] += await load(both[which], windows[which]);
    }
    for (const g of both) await g.stop();
    const profiles = dirs.map((d) => {
      const file = readdirSync(d).map((f) => join(d, f)).sort((a, b) => statSync(b).size - statSync(a).size)[0];
      return JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    });
    const [h, b] = profiles.map((p, i) => tally(p, windows[i]));
    console.log(`head: ${requests[0]} requests, baseline (${baselineRef}): ${requests[1]} requests, ${rounds} alternating rounds of ${seconds} s at c=32`);
    console.log('(event loop thread only: a worker thread such as the spend thread writes no profile here)');
    table('By part', h.parts, b.parts, requests[0], requests[1], 30);
    table(`By function (self time), the ${top} largest differences`, h.functions, b.functions, requests[0], requests[1], top);
  } finally {
    await mock.stop();
    for (const d of [...dirs, ...(checkout ? [checkout] : [])]) rmSync(d, { recursive: true, force: true });
  }
}

await (baselineRef === 'route' ? routeAgainstModel() : buildAgainstBuild());
