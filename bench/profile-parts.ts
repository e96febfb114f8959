// The parts of a request a CPU profile sample is counted under (bench/profile.ts, bench/profile-compare.ts).

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** First match wins: [part, test on "url functionName"]. */
const parts: [string, RegExp][] = [
  ['idle', /^ \(idle\)$/],
  ['garbage collection', /^ \(garbage collector\)$/],
  ['socket writes and reads (syscalls)', /^ (writev|read|writeUtf8String|writeBuffer|close)$/],
  ['spend store and SQLite (reserve, settle, ledger)', /better-sqlite3|sqlite-spend-|threaded-spend-|spend-op-queue|(?:src|dist)\/billing\/(meter|spend)|change-version|(?:src|dist)\/store\//],
  ['response cache (src/cache)', /(?:src|dist)\/cache\//],
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

/** The part a sample of `functionName` in the script at `url` belongs to ("other" when none matches). */
export function partOf(url: string, functionName: string): string {
  const key = `${url.replace(/^file:\/\//, '')} ${functionName || '(anonymous)'}`;
  return parts.find(([, test]) => test.test(key))?.[0] ?? 'other';
}

/** Each part's share of all the profile's samples. */
export function breakdown(profile: CpuProfile): { part: string; share: number }[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((id, i) => {
    const { url, functionName } = byId.get(id)!.callFrame;
    const part = partOf(url, functionName);
    totals.set(part, (totals.get(part) ?? 0) + profile.timeDeltas[i]);
    all += profile.timeDeltas[i];
  });
  return [...totals].map(([part, t]) => ({ part, share: t / all })).sort((a, b) => b.share - a.share);
}
