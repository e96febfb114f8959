// npm run bench:profile-compare: where this build's CPU per request differs from an earlier build's
// (PROFILE_BASELINE, a git ref; default 35160dd, the build before issue 23's pipeline change), or from the bare
// fastify + undici relay's (PROFILE_BASELINE=bare: what the gateway does that a bare relay does not). Both gateways run with
// --cpu-prof on one mock and are loaded in alternation (chat pass-through, c=32); only the samples taken inside the
// load windows count, so start-up and warm-up are left out. Prints µs per request by part and by function (self time),
// head against baseline, largest differences first. PROFILE_ROUNDS (default 4) rounds of PROFILE_SECONDS (default 5).
// PROFILE_BASELINE=route: one gateway, a route's requests (PROFILE_ROUTE: plain, a one-target route, or weighted, three
// targets) against the same model's sent by name, both from the one profile (what resolving a route costs).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { chatBody, spawnUntil, startBenchGateway, startMock } from './harness.js';
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

/** One gateway with two routes over bench-chat: each round loads the route, then the model by name (alternating which first). */
async function routeAgainstModel(): Promise<void> {
  const route = process.env.PROFILE_ROUTE === 'weighted' ? 'weighted-route' : 'plain-route';
  const dir = mkdtempSync(join(tmpdir(), 'profile-route-'));
  const routes = join(dir, 'routes');
  mkdirSync(routes);
  writeFileSync(
    join(routes, 'bench.yaml'),
    '- id: plain-route\n  targets: [{ model: bench-chat }]\n- id: weighted-route\n  strategy: weighted\n  targets:\n    - { model: bench-chat, weight: 60 }\n    - { model: bench-chat-b, weight: 30 }\n    - { model: bench-chat-c, weight: 10 }\n',
  );
  const model = (id: string) => `  - id: ${id}\n    upstream: bench-upstream\n    kind: chat\n    price: { inputPerMillion: 1.0, outputPerMillion: 2.0 }\n`;
  const mock = await startMock();
  try {
    process.env.BENCH_GATEWAY_NODE_ARGS = `--cpu-prof --cpu-prof-interval=100 --cpu-prof-dir=${dir}`;
    const gateway = await startBenchGateway(mock.url, { extraChannels: model('bench-chat-b') + model('bench-chat-c'), extraConfig: `routes:\n  dir: ${routes}\n` });
    delete process.env.BENCH_GATEWAY_NODE_ARGS;
    const bodies = [chatBody({ model: route }), chatBody()];
    for (const body of bodies) await autocannon({ url: `${gateway.url}/v1/chat/completions`, method: 'POST', headers: headers(gateway), body, connections: 32, duration: 3 });
    const windows: Window[][] = [[], []];
    const requests = [0, 0];
    for (let i = 0; i < rounds; i++) for (const which of i % 2 ? [1, 0] : [0, 1]) requests[which] += await load(gateway, windows[which], bodies[which]);
    await gateway.stop();
    // The event loop's profile is the largest (a worker thread such as the spend thread writes its own).
    const file = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(dir, f)).sort((a, b) => statSync(b).size - statSync(a).size)[0];
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const [h, b] = windows.map((w) => tally(profile, w));
    console.log(`${route}: ${requests[0]} requests, bench-chat by name: ${requests[1]} requests, ${rounds} alternating rounds of ${seconds} s at c=32 (head: the route; baseline: the model)`);
    table('By part', h.parts, b.parts, requests[0], requests[1], 30);
    table(`By function (self time), the ${top} largest differences`, h.functions, b.functions, requests[0], requests[1], top);
  } finally {
    await mock.stop();
    rmSync(dir, { recursive: true, force: true });
  }
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
