// npm run bench:threads: the gateway's CPU per request, its event loop's thread apart from all the others (V8's GC
// helpers, the spend thread, the checkpointer), this build against an earlier one (THREADS_BASELINE, a git ref; default
// 35160dd, the build before issue 23), both on one mock, loaded in alternation. Each round pairs the two
// builds; the figures are medians over THREADS_ROUNDS (default 8) rounds of THREADS_SECONDS (default 5) at
// THREADS_CONNECTIONS (default 32; 1 for the cost of a request sent alone), with the
// paired head/baseline ratios' median and range, so a disturbance of the machine weighs on both sides of a pair.
// THREADS_BASELINE_CONFIG (YAML appended to the baseline's config.yaml) makes the baseline this build configured
// otherwise, e.g. "requestLogs:\n  enabled: false\n" for what request logging costs.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import autocannon from 'autocannon';
import { chatBody, percentile, startBenchGateway, startMock, type BenchGateway } from './harness.js';
import { checkOut } from './scenarios/baseline.js';

const baselineConfig = process.env.THREADS_BASELINE_CONFIG?.replace(/\\n/g, '\n');
const baselineRef = baselineConfig ? `this build with ${JSON.stringify(baselineConfig)}` : (process.env.THREADS_BASELINE ?? '35160dd');
const rounds = Number(process.env.THREADS_ROUNDS ?? 8);
const seconds = Number(process.env.THREADS_SECONDS ?? 5);
const connections = Number(process.env.THREADS_CONNECTIONS ?? 32);
const clockTicksPerSecond = 100;

/** CPU seconds of the event loop's thread (the process's main thread) and of all the process's other threads. */
function threadCpu(pid: number): { main: number; others: number } {
  const cpu = { main: 0, others: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      cpu[tid === String(pid) ? 'main' : 'others'] += (Number(fields[11]) + Number(fields[12])) / clockTicksPerSecond;
    } catch {
      // Gone between the listing and the read.
    }
  }
  return cpu;
}

interface Round {
  rps: number;
  /** CPU µs per request. */
  main: number;
  others: number;
  all: number;
}

async function load(gateway: BenchGateway): Promise<Round> {
  const before = threadCpu(gateway.pid);
  const result = await autocannon({ url: `${gateway.url}/v1/chat/completions`, method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.key}` }, body: chatBody(), connections, duration: seconds });
  if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx and ${result.errors} errors`);
  const after = threadCpu(gateway.pid);
  const perRequest = (s: number) => (s * 1e6) / result.requests.total;
  const main = perRequest(after.main - before.main);
  const others = perRequest(after.others - before.others);
  return { rps: result.requests.average, main, others, all: main + others };
}

const median = (values: number[]) => percentile(values, 50);
const fixed = (n: number, digits = 0) => n.toFixed(digits);

const checkout = baselineConfig ? undefined : checkOut(baselineRef);
const mock = await startMock();
try {
  const both = [await startBenchGateway(mock.url), await startBenchGateway(mock.url, checkout ? { root: checkout } : { extraConfig: baselineConfig })];
  for (const g of both) await autocannon({ url: `${g.url}/v1/chat/completions`, method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${g.key}` }, body: chatBody(), connections: 32, duration: 3 });
  const measured: [Round[], Round[]] = [[], []];
  for (let i = 0; i < rounds; i++) for (const which of i % 2 ? [1, 0] : [0, 1]) measured[which].push(await load(both[which]));
  for (const g of both) await g.stop();
  console.log(`head against ${baselineRef}, ${rounds} paired rounds of ${seconds} s at c=${connections} (alternating which goes first)\n`);
  console.log('| figure | head (median) | baseline (median) | head/baseline, median of paired rounds (min-max) |\n|---|---|---|---|');
  const fields: [keyof Round, string][] = [['rps', 'req/s'], ['main', 'CPU µs/request, event loop thread'], ['others', 'CPU µs/request, other threads'], ['all', 'CPU µs/request, whole process']];
  for (const [field, label] of fields) {
    const [h, b] = measured.map((m) => m.map((r) => r[field]));
    const ratios = h.map((v, i) => v / b[i]);
    console.log(`| ${label} | ${fixed(median(h))} | ${fixed(median(b))} | ${fixed(median(ratios), 3)} (${fixed(Math.min(...ratios), 2)}-${fixed(Math.max(...ratios), 2)}) |`);
  }
} finally {
  await mock.stop();
  if (checkout) rmSync(checkout, { recursive: true, force: true });
}
