// Benchmark: unauthenticated 25 MiB JSON bodies (one, then 8 at once): time to 401, the gateway's RSS growth, /healthz meanwhile.
// The clients run in a child process, so the RSS measured is the gateway's own.
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startGateway } from '../../test/kit/gateway.js';

export const name = 'unauthenticated body';

const MiB = 1024 * 1024;

/** COUNT clients each announce and stream a 25 MiB JSON body without a key; prints each one's time to its answer and status. */
const clientScript = `
import http from 'node:http';
const { URL_, COUNT } = process.env;
const SIZE = 25 * 1024 * 1024;
const chunk = Buffer.alloc(1024 * 1024, 0x61);
const one = () => new Promise((resolve) => {
  const t0 = performance.now();
  const req = http.request(URL_ + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': SIZE } });
  req.on('error', () => undefined);
  req.on('response', (res) => { const ms = performance.now() - t0; res.resume(); res.on('end', () => { req.destroy(); resolve({ ms, status: res.statusCode }); }); });
  let sent = 0;
  const pump = () => { while (sent < SIZE) { sent += chunk.length; if (!req.write(chunk)) return req.once('drain', pump); } req.end(); };
  pump();
});
const health = async () => { const t0 = performance.now(); await fetch(URL_ + '/healthz'); return performance.now() - t0; };
const results = await Promise.all(Array.from({ length: Number(COUNT) }, one));
process.stdout.write(JSON.stringify({ results, healthMs: await health() }));
`;

function runClients(url: string, count: number): Promise<{ results: { ms: number; status: number }[]; healthMs: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', clientScript], { env: { ...process.env, URL_: url, COUNT: String(count) }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`client exited ${code}`))));
  });
}

/** Runs fn while sampling this process's RSS; returns its result and how far RSS rose above where it started. */
async function measure<T>(fn: () => Promise<T>): Promise<{ result: T; rssGrowthMiB: number }> {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 2);
  try {
    const result = await fn();
    return { result, rssGrowthMiB: (Math.max(peak, process.memoryUsage.rss()) - baseline) / MiB };
  } finally {
    clearInterval(timer);
  }
}

export async function run(): Promise<Record<string, number | string>> {
  const gw = await startGateway({ listen: true, channels: {} });
  try {
    await runClients(gw.url, 1); // warm-up
    const single = await measure(() => runClients(gw.url, 1));
    const eight = await measure(() => runClients(gw.url, 8));
    const statuses = [...single.result.results, ...eight.result.results].map((r) => r.status);
    if (statuses.some((s) => s !== 401)) throw new Error(`expected 401s, got ${statuses.join(', ')}`);
    const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
    return {
      'one body: ms to 401 (client-side)': round(single.result.results[0].ms),
      'one body: gateway peak RSS growth MiB': round(single.rssGrowthMiB),
      'eight at once: slowest ms to 401': round(Math.max(...eight.result.results.map((r) => r.ms))),
      'eight at once: gateway peak RSS growth MiB': round(eight.rssGrowthMiB),
      'eight at once: /healthz ms right after': round(eight.result.healthMs),
    };
  } finally {
    await gw.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().then((figures) => console.log(figures));
}
