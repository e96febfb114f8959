// Where a request sent alone spends its time: chat pass-through at concurrency 1, the gateway (one worker, and
// server.workers at the number of cores) beside the bare fastify + undici relay. Both run with bench/stage-marks.mjs
// loaded, which times each stage of every request from node's and undici's diagnostics channels and the gateway's own
// `relay-gateway:stage` marks; the figures are each step's median, and the client's p50 and p99 against a direct call.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatBody, percentile, repoRoot, round, sequentialTimes, spawnUntil, startBenchGateway, startMock, throughput } from '../harness.js';

export const name = 'latency at concurrency 1';

const preload = ['--import', join(repoRoot, 'bench', 'stage-marks.mjs')];
const count = Number(process.env.BENCH_LATENCY_COUNT ?? 1500);

interface Record_ {
  t0: string;
  url: string;
  stages: [string, number][];
}

/** The records the processes that wrote into `dir` kept, oldest first. */
function recordsIn(dir: string): Record_[] {
  const all = readdirSync(dir).flatMap((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record_[]);
  return all.sort((a, b) => (BigInt(a.t0) < BigInt(b.t0) ? -1 : 1));
}

/** Median ms of each step (the time from the stage before to this one), in the order the stages are reached. */
function steps(records: Record_[]): Map<string, number> {
  const samples = new Map<string, number[]>();
  for (const { stages } of records) {
    for (let i = 1; i < stages.length; i++) {
      const step = `${stages[i - 1][0]} -> ${stages[i][0]}`;
      if (!samples.has(step)) samples.set(step, []);
      samples.get(step)!.push((stages[i][1] - stages[i - 1][1]) / 1e6);
    }
  }
  // Steps most requests take (a stage reached by a few, e.g. during a commit, would only add noise).
  return new Map([...samples].filter(([, values]) => values.length >= records.length / 2).map(([step, values]) => [step, percentile(values, 50)]));
}

/** Median ms from received to answered, in the server (the rest of the client's time is the sockets and the loop's turn). */
const inServer = (records: Record_[]) =>
  percentile(
    records.map(({ stages }) => (stages.find(([s]) => s === 'answered')?.[1] ?? Number.NaN) / 1e6).filter((v) => !Number.isNaN(v)),
    50,
  );

export async function run(): Promise<Record<string, number | string>> {
  const mock = await startMock();
  const dirs = { one: mkdtempSync(join(tmpdir(), 'stages-')), all: mkdtempSync(join(tmpdir(), 'stages-')), bare: mkdtempSync(join(tmpdir(), 'stages-')) };
  const cores = availableParallelism();
  const one = await startBenchGateway(mock.url, { nodeArgs: preload, env: { BENCH_STAGES_DIR: dirs.one } });
  const all = await startBenchGateway(mock.url, { workers: cores, nodeArgs: preload, env: { BENCH_STAGES_DIR: dirs.all } });
  const bare = await spawnUntil('bench/plain-relay.ts', [], { UPSTREAM_URL: mock.url, BENCH_STAGES_DIR: dirs.bare }, /RELAY_URL=(\S+)/, preload);
  const targets = {
    direct: { url: `${mock.url}/v1/chat/completions`, headers: {} },
    bare: { url: `${bare.match[1]}/v1/chat/completions`, headers: {} },
    one: { url: `${one.url}/v1/chat/completions`, headers: { authorization: `Bearer ${one.key}` } },
    all: { url: `${all.url}/v1/chat/completions`, headers: { authorization: `Bearer ${all.key}` } },
  };
  const times: Record<keyof typeof targets, number[]> = { direct: [], bare: [], one: [], all: [] };
  try {
    for (const t of Object.values(targets)) await throughput(t.url, t.headers, chatBody(), 4, 2);
    // Two rounds, each target in turn, so a passing disturbance of the machine weighs on all of them.
    for (let round = 0; round < 2; round++) {
      for (const [name, t] of Object.entries(targets) as [keyof typeof targets, (typeof targets)['direct']][]) {
        times[name].push(...(await sequentialTimes(t.url, t.headers, chatBody(), count / 2)));
      }
    }
  } finally {
    await one.stop();
    await all.stop();
    await bare.stop();
    await mock.stop();
  }
  // The measured requests are the last ones each relay saw (the warm-up's came first).
  const records = {
    one: recordsIn(dirs.one).slice(-count),
    all: recordsIn(dirs.all).slice(-count),
    bare: recordsIn(dirs.bare).slice(-count),
  };
  for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
  const p = (name: keyof typeof times, q: number) => percentile(times[name], q);
  const figures: Record<string, number | string> = {
    'direct p50 / p99 ms': `${round(p('direct', 50))} / ${round(p('direct', 99))}`,
    'bare relay added p50 / p99 ms': `${round(p('bare', 50) - p('direct', 50))} / ${round(p('bare', 99) - p('direct', 99))}`,
    'gateway (1 worker) added p50 / p99 ms': `${round(p('one', 50) - p('direct', 50))} / ${round(p('one', 99) - p('direct', 99))}`,
    [`gateway (${cores} workers) added p50 / p99 ms`]: `${round(p('all', 50) - p('direct', 50))} / ${round(p('all', 99) - p('direct', 99))}`,
    'gateway (1 worker) p50 beyond the bare relay ms (target <= 0.15)': round(p('one', 50) - p('bare', 50)),
    'gateway (1 worker) p99 beyond the bare relay ms (target <= 1)': round(p('one', 99) - p('bare', 99)),
    [`gateway (${cores} workers) p50 beyond the bare relay ms`]: round(p('all', 50) - p('bare', 50)),
    [`gateway (${cores} workers) p99 beyond the bare relay ms`]: round(p('all', 99) - p('bare', 99)),
    'in the server, received -> answered, p50 ms: bare / gateway 1 worker / gateway all': `${round(inServer(records.bare))} / ${round(inServer(records.one))} / ${round(inServer(records.all))}`,
  };
  for (const [label, recs] of [['bare', records.bare], ['gateway 1 worker', records.one], [`gateway ${cores} workers`, records.all]] as const) {
    for (const [step, ms] of steps(recs)) figures[`step p50 ms, ${label}: ${step}`] = round(ms, 4);
  }
  return figures;
}
