// The response cache (docs/caching.md): a hit's time beside a miss's against a 20 ms upstream (sequential, one
// connection), then what the cache costs when nothing hits: the gateway's CPU per request on a route with cache: whose
// requests all miss (each body distinct) beside the same route without it, against an upstream that answers at once
// (the gateway's own work is then most of what a round costs, no idle wake-ups thin the figure). Paired rounds: two
// gateways loaded at the same moment, one caching and one not, which one swapped each round (missCost says how); two
// rounds in a row (each process caching in one) make a pair whose figure is free of the two processes' own difference,
// and the figure is the median of the pairs of several runs, each run on two fresh gateways (runs differ from each
// other more than a run's pairs do), with each run's median, the spread and the pooled ratio beside it; the store is
// full before the first round counts (its steady state): with the default cache.admission (second-miss) a full store
// then stores none of these requests, each asked once; BENCH_CACHE_ADMISSION=always measures a store that keeps every
// answer, evicting an older one each time. CPU is the gateway's every thread, read in ns
// (/proc/<pid>/task/*/schedstat), so GC helpers and the thread pool count, and its main thread (the event loop) beside
// it; the client and the mock are not counted.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { cpuSecondsFine, percentile, threadCpuNs, repoRoot, round, sequentialTimes, startBenchGateway, startMock } from '../harness.js';
import { missPathMicros } from './cache-miss-path.js';

export const name = 'response cache: hit vs miss, and its cost when nothing hits';

/** Requests per gateway per round: long enough that a major GC falling in one round or another weighs a few % at most. */
const count = Number(process.env.BENCH_CACHE_COUNT ?? 4000);
/** Per run, an even number: rounds go in pairs (each gateway caching in one of the two). */
const rounds = 2 * Math.ceil(Math.max(2, Number(process.env.BENCH_CACHE_ROUNDS ?? 6)) / 2);
/** Runs, each on two fresh gateways (BENCH_CACHE_RUNS). */
const runs = Math.max(1, Number(process.env.BENCH_CACHE_RUNS ?? 3));
/**
 * The memory store's bound in the cost rounds (the workspace's share the same): small enough that the fill below
 * reaches it, so every round runs at the store's steady state (each answer stored evicts an older one, the old
 * generation holds a full store). BENCH_CACHE_MAX_BYTES sets another.
 */
const maxBytes = Number(process.env.BENCH_CACHE_MAX_BYTES ?? 8 * 2 ** 20);
/** What the store counts for one of these answers (about 840 bytes: the answer, its head, its key, the slot): the fill overshoots by a quarter. */
const fill = Math.ceil((1.25 * maxBytes) / 800);
const connections = 8;
/** cache.admission in the cost rounds: the default (not written, so an earlier build's config takes it too) unless BENCH_CACHE_ADMISSION names one. */
const admission = process.env.BENCH_CACHE_ADMISSION;
/** Two route names of one length: the bodies of both cases are the same size, byte for byte but the route and counter. */
const CACHED = 'cache-on';
const UNCACHED = 'cache-no';
const body = (model: string, content: string) => JSON.stringify({ model, temperature: 0, max_tokens: 16, messages: [{ role: 'user', content }] });

/** The gateway's CPU nanoseconds per request (every thread, and its main thread) over `n` distinct requests to `model`, `connections` at a time. */
async function cpuPerRequest(url: string, key: string, pid: number, model: string, tag: string, n = count): Promise<Cpu> {
  const target = new URL(`${url}/v1/chat/completions`);
  const pool = new Pool(target.origin, { connections });
  let next = 0;
  const send = async () => {
    for (let i = next++; i < n; i = next++) {
      const res = await pool.request({ method: 'POST', path: target.pathname, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: body(model, `${tag} question ${String(i).padStart(6, '0')}`) });
      if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${await res.body.text()}`);
      await res.body.text();
    }
  };
  // Connections opened before the clock starts: both cases pay the same (none).
  await Promise.all(Array.from({ length: connections }, async () => (await pool.request({ method: 'GET', path: '/healthz' })).body.text()));
  const [before, mainBefore] = [cpuSecondsFine(pid), threadCpuNs(pid, pid)];
  try {
    await Promise.all(Array.from({ length: connections }, send));
  } finally {
    await pool.close();
  }
  return { all: ((cpuSecondsFine(pid) - before) * 1e9) / n, main: (threadCpuNs(pid, pid) - mainBefore) / n };
}

/** Hit vs miss p50 against an upstream that takes 20 ms. */
async function hitAndMiss(routes: string): Promise<Record<string, number>> {
  const mock = await startMock({ MOCK_DELAY_MS: '20' });
  const gateway = await startBenchGateway(mock.url, { extraConfig: `routes:\n  dir: ${routes}\n` });
  try {
    const headers = { authorization: `Bearer ${gateway.key}` };
    const url = `${gateway.url}/v1/chat/completions`;
    await sequentialTimes(url, headers, body(UNCACHED, 'warm'), 100);
    const hits = await sequentialTimes(url, headers, body(CACHED, 'the same question'), 400);
    const misses = await sequentialTimes(url, { ...headers, 'cache-control': 'no-cache' }, body(CACHED, 'the same question'), 100);
    const hit = percentile(hits.slice(1), 50);
    const miss = percentile(misses, 50);
    return { 'hit p50 ms': round(hit), 'miss p50 ms (20 ms upstream)': round(miss), 'miss / hit': round(miss / hit, 1) };
  } finally {
    await gateway.stop();
    await mock.stop();
  }
}

/** A routes folder of its own under `dir`, holding `yaml`. */
function routesDir(dir: string, name: string, yaml: string): string {
  const path = join(dir, name);
  mkdirSync(path);
  writeFileSync(join(path, 'cache.yaml'), yaml);
  return path;
}

/** Routes of one gateway: `cached` with cache:, the other name the same target without it. */
const routesOf = (cached: string, plain: string) => `- id: ${cached}\n  cache: { ttlSeconds: 3600 }\n  targets: [{ model: bench-chat }]\n- id: ${plain}\n  targets: [{ model: bench-chat }]\n`;

/** CPU ns per request of one gateway over a load, of every thread and of its main thread (the event loop). */
interface Cpu {
  all: number;
  main: number;
}

/**
 * One run: CPU per request, cache on (all misses) and off, in paired rounds against an upstream that answers at once. Two
 * fresh gateways run side by side, loaded at the same moment, so whatever else the machine does weighs on both alike: in
 * one, route CACHED caches and UNCACHED does not; in the other the reverse. Each round sends one of the two names to
 * both (the other name the next round), so the gateway caching changes every round and neither process's luck is the cache's.
 */
async function pairedRounds(dir: string, run: number, mockUrl: string): Promise<{ on: Cpu[]; off: Cpu[] }> {
  // BENCH_CACHE_ROOT: another checkout's gateway (an earlier build) measured the same way.
  const root = process.env.BENCH_CACHE_ROOT ? { root: process.env.BENCH_CACHE_ROOT } : {};
  const store = `cache:\n  maxBytes: ${maxBytes}\n  maxWorkspaceBytes: ${maxBytes}\n${admission ? `  admission: ${admission}\n` : ''}`;
  const gateways = await Promise.all([
    startBenchGateway(mockUrl, { extraConfig: `${store}routes:\n  dir: ${routesDir(dir, `x${run}`, routesOf(CACHED, UNCACHED))}\n`, ...root }),
    startBenchGateway(mockUrl, { extraConfig: `${store}routes:\n  dir: ${routesDir(dir, `y${run}`, routesOf(UNCACHED, CACHED))}\n`, ...root }),
  ]);
  try {
    /** Both gateways at once, `model` to each; their CPU per request, in order [x, y]. */
    const both = (model: string, tag: string) => Promise.all(gateways.map((g) => cpuPerRequest(g.url, g.key, g.pid, model, tag)));
    // The store filled past its bound in both first (x caches CACHED, y UNCACHED): measured while it was still growing,
    // the rounds saw no evictions and an old generation growing round by round, which is not what a running cache pays.
    const [gx, gy] = gateways;
    await Promise.all([cpuPerRequest(gx.url, gx.key, gx.pid, CACHED, 'f0', fill), cpuPerRequest(gy.url, gy.key, gy.pid, UNCACHED, 'f0', fill)]);
    // Warm-up: both routes compiled and their paths hot in both before anything counts.
    for (const model of [CACHED, UNCACHED]) await both(model, 'w0');
    const off: Cpu[] = [];
    const on: Cpu[] = [];
    for (let r = 0; r < rounds; r++) {
      const model = r % 2 === 0 ? CACHED : UNCACHED;
      const [x, y] = await both(model, `r${run}-${String(r).padStart(2, '0')}`);
      // Gateway x caches CACHED; gateway y caches UNCACHED.
      on.push(model === CACHED ? x : y);
      off.push(model === CACHED ? y : x);
    }
    return { on, off };
  } finally {
    await Promise.all(gateways.map((g) => g.stop()));
  }
}

/**
 * What the cache costs when nothing hits, over `runs` runs of paired rounds, each run on two fresh gateways: within a
 * run the pairs agree to a point or two, but runs differ from each other by more (each process's compiled code and
 * heap are its own), so the figure is the median over every run's pairs, each run's own median beside it.
 */
async function missCost(dir: string): Promise<Record<string, number | string>> {
  const mock = await startMock();
  const loadBefore = loadavg()[0];
  try {
    const on: Cpu[] = [];
    const off: Cpu[] = [];
    const runMedians: number[] = [];
    const runMainMedians: number[] = [];
    // A pair of rounds (x caching, then y caching): the geometric mean of its two ratios, (x_on/y_off * y_on/x_off)^1/2,
    // in which whatever makes one process dearer than the other cancels. A round alone carries that difference with
    // the sign of whichever process cached: main's build read 16 -6 14 -14 5 -8 21 -7 23 5 %, round by round.
    const pairsOf = (ons: Cpu[], offs: Cpu[], part: keyof Cpu) =>
      Array.from({ length: ons.length / 2 }, (_, p) => (Math.sqrt((ons[2 * p][part] / offs[2 * p][part]) * (ons[2 * p + 1][part] / offs[2 * p + 1][part])) - 1) * 100);
    for (let run = 0; run < runs; run++) {
      const one = await pairedRounds(dir, run, mock.url);
      on.push(...one.on);
      off.push(...one.off);
      runMedians.push(percentile(pairsOf(one.on, one.off, 'all'), 50));
      runMainMedians.push(percentile(pairsOf(one.on, one.off, 'main'), 50));
    }
    const pairs = pairsOf(on, off, 'all');
    const mainPairs = pairsOf(on, off, 'main');
    const added = on.map((v, i) => (v.all / off[i].all - 1) * 100);
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
    const alls = (values: Cpu[]) => values.map((v) => v.all);
    // The cache's own work on a miss measured in this process (cache-miss-path), against the gateway's CPU per request:
    // what the miss path adds directly, without the machine's noise (GC of the answers kept is not in it).
    const [ownMicros] = await missPathMicros(process.env.BENCH_CACHE_ROOT ?? repoRoot, 8);
    const list = (values: number[]) => values.map((a) => round(a, 1)).join(' ');
    return {
      "the cache's own CPU us per miss, in process (cache-miss-path)": round(ownMicros, 2),
      "the cache's own work / the gateway's CPU per request without cache, %": round((ownMicros * 1000 * 100) / percentile(alls(off), 50), 2),
      'CPU us per request, no cache (median of rounds)': round(percentile(alls(off), 50) / 1000, 1),
      'CPU us per request, cache on, no hits (median)': round(percentile(alls(on), 50) / 1000, 1),
      'cache on, no hits: CPU added %, median of pairs of rounds (every run)': round(percentile(pairs, 50), 1),
      'CPU added %, each run (median of its pairs)': list(runMedians),
      'CPU added %, pairs of rounds min / max': `${round(Math.min(...pairs), 1)} / ${round(Math.max(...pairs), 1)}`,
      'CPU added % each pair': list(pairs),
      'main thread (the event loop) alone: CPU added %, median of pairs / each run': `${round(percentile(mainPairs, 50), 1)} / ${list(runMainMedians)}`,
      'CPU added %, rounds pooled (all on / all off)': round((sum(alls(on)) / sum(alls(off)) - 1) * 100, 1),
      'CPU added %, quartiles of rounds alone (25th / 75th)': `${round(percentile(added, 25), 1)} / ${round(percentile(added, 75), 1)}`,
      rounds: `${runs} runs of ${rounds} paired rounds (two fresh gateways loaded at once, the caching one swapped each round, rounds taken in pairs), ${count} requests each, c=${connections} each, upstream answering at once, after ${fill} sent to each (a ${maxBytes}-byte store, full; admission: ${admission ?? 'the default'})`,
      'load average (1 min) before / after': `${round(loadBefore, 2)} / ${round(loadavg()[0], 2)}`,
    };
  } finally {
    await mock.stop();
  }
}

export async function run(): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-routes-'));
  try {
    return { ...(await hitAndMiss(routesDir(dir, 'latency', routesOf(CACHED, UNCACHED)))), ...(await missCost(dir)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
