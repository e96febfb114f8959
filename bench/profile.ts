// npm run bench:profile: the gateway under load (non-streaming chat pass-through, c=32) with --cpu-prof, its CPU time
// split into the parts of a request (fastify, auth, Ajv, spend store, undici, JSON, pino, prom-client, mappings, ...).
// Prints a markdown table for bench/README.md; PROFILE_SECONDS sets the length of the run (default 15).
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatBody, startBenchGateway, startMock, throughput } from './harness.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** First match wins: [part, test on "url functionName"]. */
const parts: [string, RegExp][] = [
  ['idle', /^ \(idle\)$/],
  ['garbage collection', /^ \(garbage collector\)$/],
  ['socket writes and reads (syscalls)', /^ (writev|read|writeUtf8String|writeBuffer|close)$/],
  ['spend store and SQLite (reserve, settle, ledger)', /better-sqlite3|sqlite-spend-|threaded-spend-|(?:src|dist)\/billing\/(meter|spend)|change-version|(?:src|dist)\/store\//],
  ['auth (key hash, cache, scopes, rate limits)', /(?:src|dist)\/auth\/|(?:src|dist)\/billing\/rate-|node:internal\/crypto| (Hash|digest|createHash)$/],
  ['Ajv (request validation)', /node_modules\/ajv|^ validate\d*$|schema-error/],
  ['pino (loggers)', /node_modules\/(pino|sonic-boom|thread-stream)|lazy-logger/],
  ['prom-client (metrics)', /node_modules\/prom-client|(?:src|dist)\/metrics\.[tj]s/],
  ['JSON parse and body reading', /secure-json-parse|(?:src|dist)\/http\/json-body|content-type-parser| (parse|stringify)$/],
  ['fastify (routing, hooks, reply)', /node_modules\/(fastify|find-my-way|avvio|@fastify|light-my-request|fast-json-stringify|toad-cache)|(?:src|dist)\/app\.[tj]s|(?:src|dist)\/http\//],
  ['undici (upstream client)', /node_modules\/undici|wasm/],
  ['mappings and translators', /(?:src|dist)\/engine\//],
  ['pipeline stages', /(?:src|dist)\/pipeline\//],
  ['node http server', /node:_http_|node:net|node:internal\/(http|streams|stream_base)|node:stream/],
  ['promises, timers, events (node internals)', /node:|^ (runMicrotasks|processTicksAndRejections)$|^ \(program\)$/],
];

function breakdown(profile: CpuProfile): { part: string; share: number }[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((id, i) => {
    const { url, functionName } = byId.get(id)!.callFrame;
    const key = `${url.replace(/^file:\/\//, '')} ${functionName || '(anonymous)'}`;
    const part = parts.find(([, test]) => test.test(key))?.[0] ?? 'other';
    totals.set(part, (totals.get(part) ?? 0) + profile.timeDeltas[i]);
    all += profile.timeDeltas[i];
  });
  return [...totals].map(([part, t]) => ({ part, share: t / all })).sort((a, b) => b.share - a.share);
}

const seconds = Number(process.env.PROFILE_SECONDS ?? 15);
const dir = mkdtempSync(join(tmpdir(), 'gateway-profile-'));
const mock = await startMock();
process.env.BENCH_GATEWAY_NODE_ARGS = `--cpu-prof --cpu-prof-dir=${dir}`;
const gateway = await startBenchGateway(mock.url);
delete process.env.BENCH_GATEWAY_NODE_ARGS;
const url = `${gateway.url}/v1/chat/completions`;
const auth = { authorization: `Bearer ${gateway.key}` };
await throughput(url, auth, chatBody(), 32, 3); // warm-up
const rps = await throughput(url, auth, chatBody(), 32, seconds);
await gateway.stop();
await mock.stop();
// tsx writes a profile for its own launcher too: the gateway's is the largest.
const file = readdirSync(dir).map((f) => join(dir, f)).sort((a, b) => statSync(b).size - statSync(a).size)[0];
const rows = breakdown(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile);
rmSync(dir, { recursive: true, force: true });
console.log(`gateway at c=32: ${Math.round(rps)} req/s over ${seconds} s (the profile includes the start-up and warm-up)\n`);
console.log('| part of the gateway process | share of its samples |\n|---|---|');
for (const { part, share } of rows) console.log(`| ${part} | ${(share * 100).toFixed(1)} % |`);
