// npm run bench:c1-critical: where a request sent alone (c=1) spends the gateway's CPU on the client's path, against the
// bare relay's. Both run with --cpu-prof (CRITICAL_INTERVAL_US, default 25 µs samples) and bench/stage-marks.mjs on one
// mock; each profile sample is placed by its time in one request's stages: before the upstream request is sent (on the
// path), while the upstream answers (the relay idle), from the upstream's answer to the client's first write (on the
// path), or after it (off the path: it delays the next request only when the client is quicker). Prints µs per request
// in each window by function (self time), the largest first, and each window's wall time (the median over the
// requests, from the stage marks: where it passes the CPU, the relay waited; profiling slows both relays, so take the
// wall times from a run at a coarse CRITICAL_INTERVAL_US, e.g. 20000). CRITICAL_REQUESTS (default 3000) per relay; CRITICAL_STREAM=1
// sends streams (their "upstream done" window ends at the upstream's headers: the first event goes out before the end).
// CRITICAL_BUILD=<git ref> profiles that build's gateway instead of this one (run both, one after the other, to compare).
// CRITICAL_STAGES=1 prints each relay's wall time from each stage to the next; CRITICAL_SENT and CRITICAL_DONE move the
// second window's bounds to other stages (e.g. "body sent" and "upstream headers": what the relay does while the upstream
// works). Under `taskset -c 0` every process shares one core, so whatever a relay does after sending delays the upstream.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatBody, repoRoot, sequentialTimes, spawnUntil, startBenchGateway, startMock } from './harness.js';
import type { CpuProfile } from './profile-parts.js';
import { checkOut } from './scenarios/baseline.js';

const interval = Number(process.env.CRITICAL_INTERVAL_US ?? 25);
const requests = Number(process.env.CRITICAL_REQUESTS ?? 3000);
const top = Number(process.env.CRITICAL_TOP ?? 25);

interface Record_ {
  t0: string;
  stages: [string, number][];
}

const stream = Boolean(process.env.CRITICAL_STREAM);
type Window = 'before sent' | 'sent -> upstream done' | 'upstream done -> first write' | 'after first write';
const windows: Window[] = ['before sent', 'sent -> upstream done', 'upstream done -> first write', 'after first write'];

function newest(dir: string, prefix: string): string {
  return readdirSync(dir)
    .filter((f) => f.startsWith(prefix))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).size - statSync(a).size)[0];
}

/** µs per request by window and function, over the last `count` requests the records hold. */
function attribute(profile: CpuProfile, records: Record_[], count: number): Map<Window, Map<string, number>> {
  const measured = records.slice(-count);
  // Each request's window bounds in µs (the profile's clock): received, sent, upstream done, first write, next received.
  const bounds = measured.map((r, i) => {
    const t0 = Number(BigInt(r.t0) / 1000n);
    const at = (name: string) => t0 + (r.stages.find(([s]) => s === name)?.[1] ?? Number.NaN) / 1000;
    const next = i + 1 < measured.length ? Number(BigInt(measured[i + 1].t0) / 1000n) : at('answered') + 1000;
    // A stream's first event goes out before its upstream is done: its window starts at the upstream's headers.
    return [t0, at(process.env.CRITICAL_SENT ?? 'sent'), at(process.env.CRITICAL_DONE ?? (stream ? 'upstream headers' : 'upstream done')), at('first write'), next];
  });
  const names = new Map(profile.nodes.map((n) => [n.id, `${n.callFrame.url.replace(/^.*\/(dist|node_modules)\//, '$1/').replace(/^file:\/\//, '')} ${n.callFrame.functionName || '(anonymous)'}:${n.callFrame.lineNumber}`]));
  const out = new Map<Window, Map<string, number>>(windows.map((w) => [w, new Map()]));
  let t = profile.startTime;
  let k = 0;
  for (let s = 0; s < profile.samples.length; s++) {
    t += profile.timeDeltas[s];
    // Each sample counts as the nominal interval: the wall time between two samples also holds the time the process
    // waited for a core (the machine is shared), which is not the gateway's work.
    const weight = interval;
    while (k < bounds.length && t >= bounds[k][4]) k++;
    if (k >= bounds.length || t < bounds[k][0]) continue;
    const [, sent, done, first] = bounds[k];
    const window: Window = t < sent ? 'before sent' : t < done ? 'sent -> upstream done' : t < first ? 'upstream done -> first write' : 'after first write';
    const name = names.get(profile.samples[s])!;
    const per = out.get(window)!;
    per.set(name, (per.get(name) ?? 0) + weight / measured.length);
  }
  return out;
}

const preload = ['--import', join(repoRoot, 'bench', 'stage-marks.mjs')];
const dirs = { gateway: mkdtempSync(join(tmpdir(), 'critical-')), bare: mkdtempSync(join(tmpdir(), 'critical-')) };
const profArgs = (dir: string) => ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${interval}`];
const mock = await startMock();
const root = process.env.CRITICAL_BUILD ? checkOut(process.env.CRITICAL_BUILD) : undefined;
const gateway = await startBenchGateway(mock.url, { root, nodeArgs: [...preload, ...profArgs(dirs.gateway)], env: { BENCH_STAGES_DIR: dirs.gateway } });
const bare = await spawnUntil('bench/plain-relay.ts', [], { UPSTREAM_URL: mock.url, BENCH_STAGES_DIR: dirs.bare }, /RELAY_URL=(\S+)/, [...preload, ...profArgs(dirs.bare)]);
const body = stream ? chatBody({ stream: true }) : chatBody();
try {
  await sequentialTimes(`${gateway.url}/v1/chat/completions`, { authorization: `Bearer ${gateway.key}` }, body, 1000, stream);
  await sequentialTimes(`${bare.match[1]}/v1/chat/completions`, {}, body, 1000, stream);
  await sequentialTimes(`${gateway.url}/v1/chat/completions`, { authorization: `Bearer ${gateway.key}` }, body, requests, stream);
  await sequentialTimes(`${bare.match[1]}/v1/chat/completions`, {}, body, requests, stream);
} finally {
  await gateway.stop();
  await bare.stop();
  await mock.stop();
}
const stageRecords = Object.fromEntries((['gateway', 'bare'] as const).map((name) => [name, JSON.parse(readFileSync(newest(dirs[name], 'stages-'), 'utf8')) as Record_[]])) as Record<'gateway' | 'bare', Record_[]>;
const results = Object.fromEntries(
  (['gateway', 'bare'] as const).map((name) => {
    const profile = JSON.parse(readFileSync(newest(dirs[name], 'CPU'), 'utf8')) as CpuProfile;
    return [name, attribute(profile, stageRecords[name], requests)];
  }),
) as Record<'gateway' | 'bare', Map<Window, Map<string, number>>>;
for (const dir of [...Object.values(dirs), ...(root ? [root] : [])]) rmSync(dir, { recursive: true, force: true });

/** Each window's wall time per request, the median over the measured requests (µs): waiting shows where it passes the CPU above. */
function wallMedians(records: Record_[]): number[] {
  const measured = records.slice(-requests);
  const spans = measured.map((r, i) => {
    const at = (name: string) => (r.stages.find(([s]) => s === name)?.[1] ?? Number.NaN) / 1000;
    const next = i + 1 < measured.length ? Number((BigInt(measured[i + 1].t0) - BigInt(r.t0)) / 1000n) : Number.NaN;
    const marks = [0, at('sent'), at(stream ? 'upstream headers' : 'upstream done'), at('first write'), next];
    return marks.slice(1).map((m, k) => m - marks[k]);
  });
  return windows.map((_, k) => {
    const values = spans.map((s) => s[k]).filter(Number.isFinite).sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)] ?? Number.NaN;
  });
}
/** Each stage to the next, the median over the measured requests (µs), in the order the last request reached them. */
function stageSteps(records: Record_[]): string {
  const measured = records.slice(-requests);
  const order = measured[measured.length - 1].stages.map(([stage]) => stage);
  return order
    .slice(1)
    .map((stage, k) => {
      const at = (r: Record_, name: string) => r.stages.find(([s]) => s === name)?.[1] ?? Number.NaN;
      const steps = measured.map((r) => (at(r, stage) - at(r, order[k])) / 1000).filter(Number.isFinite).sort((a, b) => a - b);
      return `${order[k]} -> ${stage} ${steps[Math.floor(steps.length / 2)]?.toFixed(1)}`;
    })
    .join(' | ');
}
const walls = Object.fromEntries((['gateway', 'bare'] as const).map((name) => [name, wallMedians(stageRecords[name])])) as Record<'gateway' | 'bare', number[]>;

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
console.log(`${process.env.CRITICAL_BUILD ?? 'this build'}: ${requests} requests each at c=1, ${interval} µs samples${stream ? ', streams' : ''}; µs of CPU samples per request (idle excluded)`);
if (process.env.CRITICAL_STAGES) for (const name of ['gateway', 'bare'] as const) console.log(`${name}, wall µs from each stage to the next (median): ${stageSteps(stageRecords[name])}\n`);
console.log('| window | gateway CPU | bare CPU | difference | gateway wall (median) | bare wall (median) | difference |\n|---|---|---|---|---|---|---|');
windows.forEach((w, k) => {
  const g = results.gateway.get(w)!;
  const b = results.bare.get(w)!;
  const busy = (m: Map<string, number>) => sum(m) - (m.get(' (idle):0') ?? 0);
  const [gw, bw] = [walls.gateway[k], walls.bare[k]];
  console.log(`| ${w} | ${busy(g).toFixed(1)} | ${busy(b).toFixed(1)} | ${(busy(g) - busy(b)).toFixed(1)} | ${gw.toFixed(1)} | ${bw.toFixed(1)} | ${(gw - bw).toFixed(1)} |`);
});
for (const w of windows) {
  const g = results.gateway.get(w)!;
  const b = results.bare.get(w)!;
  const keys = new Set([...g.keys(), ...b.keys()]);
  const rows = [...keys].map((k) => [k, g.get(k) ?? 0, b.get(k) ?? 0] as const).sort((x, y) => Math.abs(y[1] - y[2]) - Math.abs(x[1] - x[2]));
  console.log(`\n### ${w}: the ${top} largest differences (self µs per request)\n| function | gateway | bare |\n|---|---|---|`);
  for (const [k, gv, bv] of rows.slice(0, top)) console.log(`| ${k} | ${gv.toFixed(2)} | ${bv.toFixed(2)} |`);
}
