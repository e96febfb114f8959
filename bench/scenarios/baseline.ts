// Chat pass-through against an earlier build of this gateway, on the same mock in the same run: does this build
// regress? BENCH_BASELINE names the earlier build (a git ref; default: the last build before the pipeline, issue 9).
// Both gateways run at once and are measured in alternation, so a passing disturbance of the machine weighs on both.
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { chatBody, cpuSeconds, percentile, repoRoot, round, sequentialTimes, startBenchGateway, startMock, type BenchGateway } from '../harness.js';

export const name = 'chat pass-through against an earlier build';

const baselineRef = process.env.BENCH_BASELINE ?? '84b3bf3';
const rounds = Number(process.env.BENCH_BASELINE_ROUNDS ?? 6);

/** The earlier build's files, from git, beside this checkout's node_modules (its dependencies are a subset). */
export function checkOut(ref: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-baseline-'));
  execSync(`git archive --format=tar ${ref} | tar -x -C ${dir}`, { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'] });
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** req/s and the gateway process's CPU µs per request over one 5 s run at c=32. */
async function load(gateway: BenchGateway): Promise<{ rps: number; cpuMicros: number }> {
  const options = { url: `${gateway.url}/v1/chat/completions`, method: 'POST' as const, headers: { 'content-type': 'application/json', authorization: `Bearer ${gateway.key}` }, body: chatBody(), connections: 32 };
  const before = cpuSeconds(gateway.pid);
  const result = await autocannon({ ...options, duration: 5 });
  if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx and ${result.errors} errors`);
  return { rps: result.requests.average, cpuMicros: ((cpuSeconds(gateway.pid) - before) * 1e6) / result.requests.total };
}

const median = (values: number[]) => percentile(values, 50);

export async function run(): Promise<Record<string, number | string>> {
  const dir = checkOut(baselineRef);
  const mock = await startMock();
  const gateways: BenchGateway[] = [];
  try {
    const head = await startBenchGateway(mock.url);
    gateways.push(head);
    const baseline = await startBenchGateway(mock.url, { root: dir });
    gateways.push(baseline);
    const both = [head, baseline] as const;
    const auth = (g: BenchGateway) => ({ authorization: `Bearer ${g.key}` });
    const url = (g: BenchGateway) => `${g.url}/v1/chat/completions`;
    for (const g of both) await autocannon({ url: url(g), method: 'POST', headers: { 'content-type': 'application/json', ...auth(g) }, body: chatBody(), connections: 32, duration: 3 });

    const rps: [number[], number[]] = [[], []];
    const cpu: [number[], number[]] = [[], []];
    const paired: number[] = [];
    for (let i = 0; i < rounds; i++) {
      // Alternate which goes first, so neither always follows the other's load.
      const order = i % 2 ? [1, 0] : [0, 1];
      for (const which of order) {
        const figures = await load(both[which]);
        rps[which].push(figures.rps);
        cpu[which].push(figures.cpuMicros);
      }
      paired.push(rps[0][i] / rps[1][i]);
    }

    const p50: [number[], number[]] = [[], []];
    const p99: [number[], number[]] = [[], []];
    const ttft: [number[], number[]] = [[], []];
    // CPU per request sent alone (c=1): what a request costs that shares no per-turn work with others.
    const cpuAlone: [number[], number[]] = [[], []];
    for (let i = 0; i < 4; i++) {
      // Alternate which goes first here too: the second of a pair runs on a warmer machine.
      const order = i % 2 ? [1, 0] : [0, 1];
      for (const which of order) {
        const before = cpuSeconds(both[which].pid);
        const times = await sequentialTimes(url(both[which]), auth(both[which]), chatBody(), 1000);
        cpuAlone[which].push(((cpuSeconds(both[which].pid) - before) * 1e6) / times.length);
        p50[which].push(percentile(times, 50));
        p99[which].push(percentile(times, 99));
      }
      for (const which of order) ttft[which].push(percentile(await sequentialTimes(url(both[which]), auth(both[which]), chatBody({ stream: true }), 300, true), 50));
    }

    return {
      baseline: baselineRef,
      rounds,
      head_rps: round(median(rps[0]), 0),
      baseline_rps: round(median(rps[1]), 0),
      'head/baseline req/s, median of paired rounds (>= 1: no regression)': round(median(paired)),
      'head/baseline req/s, paired rounds min-max': `${round(Math.min(...paired), 2)}-${round(Math.max(...paired), 2)}`,
      head_cpu_us_per_request: round(median(cpu[0]), 0),
      baseline_cpu_us_per_request: round(median(cpu[1]), 0),
      'head/baseline CPU per request (<= 1: no regression)': round(median(cpu[0]) / median(cpu[1])),
      head_cpu_us_per_request_c1: round(median(cpuAlone[0]), 0),
      baseline_cpu_us_per_request_c1: round(median(cpuAlone[1]), 0),
      head_p50_ms_c1: round(median(p50[0])),
      baseline_p50_ms_c1: round(median(p50[1])),
      head_p99_ms_c1: round(median(p99[0])),
      baseline_p99_ms_c1: round(median(p99[1])),
      head_ttft_p50_ms: round(median(ttft[0])),
      baseline_ttft_p50_ms: round(median(ttft[1])),
    };
  } finally {
    for (const g of gateways) await g.stop();
    await mock.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
