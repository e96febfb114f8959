// The response cache's own work on a miss, in this process, without the gateway around it: the ticket (canonical key,
// hash), the store lookup, watching the answer and storing it, for distinct chat requests through the memory store.
// CPU microseconds per request (process.cpuUsage), in rounds; beside it, `npm run bench -- cache.ts` gives what a whole
// request costs the gateway (issue 47: the cache on with no hits under 3 % of it). BENCH_CACHE_ROOT measures another
// checkout's src/cache (an earlier build) the same way, rounds alternating with this one's.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { percentile, repoRoot, round } from '../harness.js';

export const name = 'response cache: CPU of the miss path alone (in process)';

const perRound = Number(process.env.BENCH_CACHE_COUNT ?? 20_000);
const rounds = Number(process.env.BENCH_CACHE_ROUNDS ?? 8);

const answer = JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion', created: 1700000000, model: 'bench-upstream', choices: [{ index: 0, message: { role: 'assistant', content: 'Benchmark answer with a few words in it.' }, logprobs: null, finish_reason: 'stop' }], usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 } });

interface Build {
  label: string;
  /** One miss: ticket, lookup, the answer watched and stored (the body parsed before, as the gateway's HTTP layer does). */
  miss(body: Record<string, unknown>): Promise<void>;
}

/**
 * The same call objects made and the stage asked for a ticket on a route without cache: (it has none to give): what
 * the loop costs without the cache, taken from each round's figure to leave the cache's own.
 */
async function none(root: string): Promise<Build> {
  const { ResponseCache } = await import(pathToFileURL(join(root, 'src', 'cache/stage.ts')).href);
  const { ResponseStore } = await import(pathToFileURL(join(root, 'src', 'cache/store.ts')).href);
  const config = { store: 'memory', namespace: 'bench', maxBytes: 64 * 2 ** 20, maxEntryBytes: 2 ** 20, maxTtlSeconds: 86_400, timeoutMs: 100, sharedAcrossWorkspaces: false };
  const cache = new ResponseCache(await ResponseStore.open(config, undefined, { warn() {} }), config);
  const routes = [{ model: { id: 'bench-chat' } }];
  const services = { now: () => Date.now() };
  const headers = { 'content-type': 'application/json' };
  return {
    label: 'none',
    async miss(body) {
      const call = { body, headers, dialect: 'openai-chat', auth: { workspaceId: 'ws_bench', keyId: 'key_bench' }, config: { routes: new Map() }, services, carrier: {}, header() {}, log: { warn() {} } } as Record<string, unknown>;
      if (cache.ticket(call, routes) !== undefined) throw new Error('a route without cache: had a ticket');
      await new Promise<void>((resolve) => queueMicrotask(resolve));
    },
  };
}

async function build(root: string, label: string): Promise<Build> {
  const load = (file: string) => import(pathToFileURL(join(root, 'src', file)).href);
  const { ResponseCache } = await load('cache/stage.ts');
  const { ResponseStore } = await load('cache/store.ts');
  const { recordOf } = await load('request-logs/record.ts');
  const config = { store: 'memory', namespace: 'bench', maxBytes: 64 * 2 ** 20, maxEntryBytes: 2 ** 20, maxTtlSeconds: 86_400, timeoutMs: 100, sharedAcrossWorkspaces: false };
  const store = await ResponseStore.open(config, undefined, { warn() {} });
  const cache = new ResponseCache(store, config);
  const routes = [{ model: { id: 'bench-chat', cache: { ttlSeconds: 3600 } } }];
  const services = { now: () => Date.now() };
  const headers = { 'content-type': 'application/json' };
  return {
    label,
    async miss(body) {
      const carrier = {};
      const call = { body, headers, dialect: 'openai-chat', auth: { workspaceId: 'ws_bench', keyId: 'key_bench' }, config: { routes: new Map() }, services, carrier, header() {}, log: { warn() {} } } as Record<string, unknown>;
      const ticket = cache.ticket(call, routes);
      const served = ticket.serve(call);
      if (served === true || (served !== false && (await served))) throw new Error('a miss was a hit');
      Object.assign(recordOf(carrier), { model: 'bench-chat', channel: 'mock', costMicros: 12, currency: 'USD', inputTokens: 20, outputTokens: 9 });
      (call.answerTap as { answered(text: string, status: number): void }).answered(answer, 200);
      await new Promise<void>((resolve) => queueMicrotask(resolve));
    },
  };
}

async function cpuPerMiss(b: Build, round: number): Promise<number> {
  const bodies = Array.from({ length: perRound }, (_, i) => JSON.parse(`{"model":"bench-chat","temperature":0,"max_tokens":16,"messages":[{"role":"user","content":"${b.label} question ${round * perRound + i}"}]}`) as Record<string, unknown>);
  const before = process.cpuUsage();
  for (const body of bodies) await b.miss(body);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / perRound;
}

/** The cache's own CPU microseconds per miss, this build's (or `root`'s), each round less the loop without a cache: [median, each round]. */
export async function missPathMicros(root = repoRoot, rounds = 8): Promise<[number, number[]]> {
  const [withCache, without] = [await build(root, 'this'), await none(root)];
  await cpuPerMiss(withCache, rounds + 1);
  await cpuPerMiss(without, rounds + 1);
  const own: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let cached: number;
    let plain: number;
    if (r % 2) {
      plain = await cpuPerMiss(without, r);
      cached = await cpuPerMiss(withCache, r);
    } else {
      cached = await cpuPerMiss(withCache, r);
      plain = await cpuPerMiss(without, r);
    }
    own.push(cached - plain);
  }
  return [percentile(own, 50), own];
}

export async function run(): Promise<Record<string, number | string>> {
  const builds = [await build(repoRoot, 'this')];
  if (process.env.BENCH_CACHE_ROOT) builds.push(await build(process.env.BENCH_CACHE_ROOT, 'other'));
  builds.push(await none(repoRoot));
  for (const b of builds) await cpuPerMiss(b, rounds + 1); // warm-up
  const us = new Map<string, number[]>(builds.map((b) => [b.label, []]));
  for (let r = 0; r < rounds; r++) {
    for (const b of r % 2 ? [...builds].reverse() : builds) us.get(b.label)!.push(await cpuPerMiss(b, r));
  }
  const figures: Record<string, number | string> = {};
  const without = us.get('none')!;
  for (const [label, values] of us) {
    if (label === 'none') continue;
    figures[`CPU us per miss, ${label} build (median)`] = round(percentile(values, 50), 2);
    figures[`CPU us per miss, ${label} build (each round)`] = values.map((v) => round(v, 2)).join(' ');
    figures[`the cache's own, ${label} build: less the loop on a route without cache: (median of rounds)`] = round(percentile(values.map((v, i) => v - without[i]), 50), 2);
  }
  figures['CPU us per call, route without cache: (the loop alone, median)'] = round(percentile(without, 50), 2);
  return figures;
}
