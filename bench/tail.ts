// npm run bench:tail: what makes the slowest requests at concurrency 1 slow. The gateway runs under --cpu-prof (50 µs
// samples) while one client sends non-streaming chat requests one after another; the profile is cut into tasks (runs
// of samples between idle ones, about one request each at c=1) and the CPU time of each task is told apart from the
// wall time the client saw. Tasks that held a garbage collection or a settlement commit are counted with their CPU
// time, and the longest tasks are named by the frames they spent most in, so a long tail can be put down to the gateway's own work or to the machine (a busy neighbour
// stretches wall time, not CPU time). TAIL_REQUESTS (default 4000); BENCH_GATEWAY_NODE_ARGS adds node flags.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatBody, percentile, sequentialTimes, startBenchGateway, startMock } from './harness.js';

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

const intervalMicros = 50;
const requests = Number(process.env.TAIL_REQUESTS ?? 4000);
const dir = mkdtempSync(join(tmpdir(), 'gateway-tail-'));
const mock = await startMock();
const extra = process.env.BENCH_GATEWAY_NODE_ARGS ?? '';
process.env.BENCH_GATEWAY_NODE_ARGS = `--cpu-prof --cpu-prof-dir=${dir} --cpu-prof-interval=${intervalMicros} ${extra}`;
const gateway = await startBenchGateway(mock.url);
process.env.BENCH_GATEWAY_NODE_ARGS = extra;
const url = `${gateway.url}/v1/chat/completions`;
const auth = { authorization: `Bearer ${gateway.key}` };
const direct = await sequentialTimes(`${mock.url}/v1/chat/completions`, {}, chatBody(), 1000);
await sequentialTimes(url, auth, chatBody(), 1000); // warm-up: its tasks are cut off below
const times = await sequentialTimes(url, auth, chatBody(), requests);
await gateway.stop();
await mock.stop();

const file = readdirSync(dir).map((f) => join(dir, f)).sort((a, b) => statSync(b).size - statSync(a).size)[0];
const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
rmSync(dir, { recursive: true, force: true });
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parentOf = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);

/** Whether a sample's stack holds a frame whose name matches. */
function within(id: number, test: RegExp): boolean {
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) if (test.test(byId.get(at)!.callFrame.functionName)) return true;
  return false;
}

// Tasks: runs of busy samples between idle ones.
const tasks: { samples: number[] }[] = [];
let current: { samples: number[] } | undefined;
for (const id of profile.samples) {
  if (byId.get(id)!.callFrame.functionName === '(idle)') {
    if (current) tasks.push(current);
    current = undefined;
  } else (current ??= { samples: [] }).samples.push(id);
}
// Start-up and the warm-up come first: keep the tasks of the measured requests (about three in five of all).
const measured = tasks.slice(Math.floor(tasks.length * 0.4));
const cpu = (t: { samples: number[] }) => t.samples.length * intervalMicros;
const kinds: [string, RegExp][] = [
  ['garbage collection', /^\(garbage collector\)$/],
  // On the event loop: the commit itself before the spend thread (issue 26 item 2), only the hand-over to it since.
  ['settlement commit or hand-over', /^(commitQueued|sqliteTransaction|runBatch)$/],
];
const cpuTimes = measured.map(cpu).sort((a, b) => a - b);
const gatewayAdded = (p: number) => (percentile(times, p) - percentile(direct, p)).toFixed(3);
console.log(`${requests} requests at c=1: added wall time p50 ${gatewayAdded(50)} ms, p99 ${gatewayAdded(99)} ms (the machine's load included)`);
console.log(`gateway CPU per task (µs): p50 ${percentile(cpuTimes, 50)}, p90 ${percentile(cpuTimes, 90)}, p99 ${percentile(cpuTimes, 99)}, p99.9 ${percentile(cpuTimes, 99.9)}, max ${cpuTimes[cpuTimes.length - 1]}`);
console.log('\n| tasks holding | share of tasks | median CPU µs | max CPU µs |\n|---|---|---|---|');
for (const [kind, test] of kinds) {
  const holding = measured.filter((t) => t.samples.some((id) => within(id, test))).map(cpu).sort((a, b) => a - b);
  const share = ((holding.length / measured.length) * 100).toFixed(2);
  console.log(`| ${kind} | ${share} % | ${holding.length ? percentile(holding, 50) : '-'} | ${holding.length ? holding[holding.length - 1] : '-'} |`);
}

const label = (id: number) => {
  const { functionName, url } = byId.get(id)!.callFrame;
  return `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}`;
};
console.log('\nlongest tasks:');
for (const task of [...measured].sort((a, b) => cpu(b) - cpu(a)).slice(0, 5)) {
  const counts = new Map<string, number>();
  for (const id of task.samples) counts.set(label(id), (counts.get(label(id)) ?? 0) + 1);
  const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([frame, n]) => `${frame} (${n * intervalMicros} µs)`);
  console.log(`  ${cpu(task)} µs: ${top.join(', ')}`);
}
