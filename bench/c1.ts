// npm run bench:c1: requests sent alone (c=1), this build against earlier builds (C1_BASELINES, git refs, comma
// separated) and the bare fastify + undici relay, all on one mock, in paired rounds: each round sends C1_REQUESTS
// (default 300) full answers and C1_STREAMS (default 100) streams to every target in turn, the order rotating, so a
// disturbance of the shared machine weighs on all of them. Per target: the median over rounds of each round's p50 and
// p99 beyond the bare relay's in that round (with their range), first SSE event beyond the bare relay's, and the
// gateway's CPU µs per request (every thread, schedstat) over its full-answer passes. C1_PROCESS_ARGS adds node flags to
// every gateway (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { chatBody, cpuSecondsFine, percentile, sequentialTimes, spawnUntil, startBenchGateway, startMock, throughput, type BenchGateway } from './harness.js';
import { checkOut } from './scenarios/baseline.js';

const refs = (process.env.C1_BASELINES ?? '').split(',').filter(Boolean);
const rounds = Number(process.env.C1_ROUNDS ?? 10);
const requests = Number(process.env.C1_REQUESTS ?? 300);
const streams = Number(process.env.C1_STREAMS ?? 100);
const nodeArgs = (process.env.C1_PROCESS_ARGS ?? '').split(' ').filter(Boolean);

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  pid?: number;
}

interface Round {
  p50: number;
  p99: number;
  first: number;
  cpuMicros: number;
}

const median = (values: number[]) => percentile(values, 50);
const ms = (n: number) => n.toFixed(3);

const checkouts = refs.map((ref) => ({ ref, dir: checkOut(ref) }));
const mock = await startMock();
const bare = await spawnUntil('bench/plain-relay.ts', [], { UPSTREAM_URL: mock.url }, /RELAY_URL=(\S+)/);
const gateways: BenchGateway[] = [];
const loadAtStart = loadavg()[0];
try {
  const targets: Target[] = [{ name: 'bare', url: bare.match[1], headers: {} }];
  const head = await startBenchGateway(mock.url, { nodeArgs });
  gateways.push(head);
  targets.push({ name: 'head', url: head.url, headers: { authorization: `Bearer ${head.key}` }, pid: head.pid });
  for (const { ref, dir } of checkouts) {
    const g = await startBenchGateway(mock.url, { root: dir, nodeArgs });
    gateways.push(g);
    targets.push({ name: ref, url: g.url, headers: { authorization: `Bearer ${g.key}` }, pid: g.pid });
  }
  const path = (t: Target) => `${t.url}/v1/chat/completions`;
  for (const t of targets) {
    await throughput(path(t), t.headers, chatBody(), 4, 2);
    await sequentialTimes(path(t), t.headers, chatBody(), 300);
    if (streams) await sequentialTimes(path(t), t.headers, chatBody({ stream: true }), 100, true);
  }
  const measured = new Map<string, Round[]>(targets.map((t) => [t.name, []]));
  for (let i = 0; i < rounds; i++) {
    // Rotate the order, so no target always follows the same one.
    const order = targets.map((_, k) => targets[(k + i) % targets.length]);
    for (const t of order) {
      const cpuBefore = t.pid ? cpuSecondsFine(t.pid) : 0;
      const times = await sequentialTimes(path(t), t.headers, chatBody(), requests);
      const cpuMicros = t.pid ? ((cpuSecondsFine(t.pid) - cpuBefore) * 1e6) / requests : 0;
      const first = streams ? median(await sequentialTimes(path(t), t.headers, chatBody({ stream: true }), streams, true)) : Number.NaN;
      measured.get(t.name)!.push({ p50: median(times), p99: percentile(times, 99), first, cpuMicros });
    }
  }
  const base = measured.get('bare')!;
  console.log(`c=1, ${rounds} rounds of ${requests} requests and ${streams} streams per target, load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end\n`);
  console.log(`bare relay, medians of rounds: p50 ${ms(median(base.map((r) => r.p50)))} ms, p99 ${ms(median(base.map((r) => r.p99)))} ms, first event ${ms(median(base.map((r) => r.first)))} ms\n`);
  console.log('| build | p50 beyond bare, ms (min-max) | p99 beyond bare | first event beyond bare | CPU µs/request, whole process (min-max) |\n|---|---|---|---|---|');
  for (const t of targets.slice(1)) {
    const rs = measured.get(t.name)!;
    const beyond = (field: keyof Round) => {
      const d = rs.map((r, i) => r[field] - base[i][field]);
      return `${ms(median(d))} (${ms(Math.min(...d))} to ${ms(Math.max(...d))})`;
    };
    const cpu = rs.map((r) => r.cpuMicros);
    console.log(`| ${t.name} | ${beyond('p50')} | ${beyond('p99')} | ${beyond('first')} | ${median(cpu).toFixed(0)} (${Math.min(...cpu).toFixed(0)}-${Math.max(...cpu).toFixed(0)}) |`);
  }
  // This build against each earlier one, round by round (the two ran in the same round, so the machine's load weighs on
  // both): the median of the per-round differences, and in how many rounds this build was the faster or cheaper.
  const ours = measured.get('head')!;
  if (targets.length > 2) console.log('\n| head against | p50, ms (rounds head lower) | first event, ms (rounds head lower) | CPU µs/request (rounds head lower) |\n|---|---|---|---|');
  for (const t of targets.slice(2)) {
    const rs = measured.get(t.name)!;
    const against = (field: keyof Round, digits: number) => {
      const d = rs.map((r, i) => ours[i][field] - r[field]);
      return `${median(d).toFixed(digits)} (${d.filter((x) => x < 0).length}/${d.length})`;
    };
    console.log(`| ${t.name} | ${against('p50', 3)} | ${against('first', 3)} | ${against('cpuMicros', 0)} |`);
  }
} finally {
  for (const g of gateways) await g.stop();
  await bare.stop();
  await mock.stop();
  for (const { dir } of checkouts) rmSync(dir, { recursive: true, force: true });
}
