// Shared benchmark plumbing: start the mock upstream and a real gateway process, drive load, measure latency.
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { createServer, type AddressInfo } from 'node:net';

export const repoRoot = join(import.meta.dirname, '..');
const tsx = join(repoRoot, 'node_modules', '.bin', 'tsx');

export interface Proc {
  child: ChildProcess;
  lines: string[];
  stop(): Promise<void>;
}

/** Spawns a TypeScript entry point of the checkout at `root` (this one by default) and waits for a log line matching `ready`. */
export function spawnUntil(script: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp, nodeArgs: string[] = [], root = repoRoot): Promise<Proc & { match: RegExpExecArray }> {
  return spawnCommand(root === repoRoot ? tsx : join(root, 'node_modules', '.bin', 'tsx'), [...nodeArgs, script, ...args], env, ready, root);
}

/** Spawns `command` in `root` and waits for a log line matching `ready`. */
export function spawnCommand(command: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp, root = repoRoot): Promise<Proc & { match: RegExpExecArray }> {
  const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env } });
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (d: Buffer) => {
      buffer += d.toString();
      const parts = buffer.split('\n');
      buffer = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        const match = ready.exec(line);
        if (match) resolve({ child, lines, match, stop: () => stop(child) });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${lines.slice(-5).join('\n')}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export interface BenchGateway {
  url: string;
  key: string;
  pid: number;
  /** How it runs: compiled JavaScript (dist/, as `npm start`) or TypeScript through tsx. */
  runner: GatewayRunner;
  stop(): Promise<void>;
}

export type GatewayRunner = 'compiled' | 'tsx';

const clockTicksPerSecond = 100;

/** User plus system CPU of a process and all its descendants (tsx's child, cluster workers), in seconds (Linux /proc). */
export function cpuSeconds(pid: number): number {
  let total = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / clockTicksPerSecond;
    } catch {
      // Gone between the listing and the read.
    }
  }
  return total;
}

/** CPU nanoseconds of one thread `tid` of process `pid` (schedstat; the main thread's tid is the pid); throws once it ended. */
export function threadCpuNs(pid: number, tid: number | string): number {
  return Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
}

/**
 * CPU time, in seconds to the nanosecond, of every thread of a process and its descendants (Linux
 * /proc/<pid>/task/<tid>/schedstat): /proc/<pid>/stat counts in 10 ms ticks, which over a few hundred requests of
 * 250 us each is a tenth of the figure. Threads that end between two readings take their time with them: compare
 * readings of a process whose threads live on (the gateway's).
 */
export function cpuSecondsFine(pid: number): number {
  let total = 0;
  for (const p of [pid, ...descendants(pid)]) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      try {
        total += threadCpuNs(p, tid) / 1e9;
      } catch {
        // Ended between the listing and the read.
      }
    }
  }
  return total;
}

function descendants(pid: number): number[] {
  let children: number[];
  try {
    children = execSync(`pgrep -P ${pid}`).toString().trim().split('\n').map(Number).filter(Boolean);
  } catch {
    return [];
  }
  return children.flatMap((c) => [c, ...descendants(c)]);
}

/** Resident set size of a process and of each of its descendants (cluster workers), MiB, the process first (Linux /proc). */
export function rssMiB(pid: number): number[] {
  return [pid, ...descendants(pid)].map((p) => {
    try {
      const line = readFileSync(`/proc/${p}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'));
      return line ? Number(line.split(/\s+/)[1]) / 1024 : 0;
    } catch {
      return 0;
    }
  });
}

export interface GatewayOptions {
  /** Extra channel YAML lines (appended to the bench channel's). */
  extraChannels?: string;
  /** Another checkout's gateway (an earlier build, for the baseline scenario) with its own shipped protocols. */
  root?: string;
  /** Default BENCH_GATEWAY_RUNNER, else compiled; a checkout without a build script runs under tsx. */
  runner?: GatewayRunner;
  /** server.workers (default 1; a checkout without the setting runs one process). */
  workers?: number;
  /** Config sections after server, storage and channels (YAML). */
  extraConfig?: string;
  /** Node flags for the gateway process (e.g. `--import ./bench/stage-marks.mjs`), after BENCH_GATEWAY_NODE_ARGS. */
  nodeArgs?: string[];
  /** Environment for the gateway process. */
  env?: NodeJS.ProcessEnv;
}

/** The node flags a checkout's `npm start` puts in NODE_OPTIONS (package.json's start script; none in older checkouts). */
export function startNodeOptions(root: string): string {
  const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts?: { start?: string } }).scripts?.start ?? '';
  return /NODE_OPTIONS="([^"$]*)/.exec(start)?.[1].trim() ?? '';
}

/** Whether the checkout at `root` builds dist/ (scripts/build.mjs) and knows server.workers. */
const builds = (root: string) => existsSync(join(root, 'scripts', 'build.mjs'));
const knowsWorkers = (root: string) => existsSync(join(root, 'schemas', 'config', 'server.json')) && readFileSync(join(root, 'schemas', 'config', 'server.json'), 'utf8').includes('"workers"');

/**
 * A real gateway process with one channel pointing at `upstreamUrl`, model `bench-chat`: `node dist/main.js` as
 * `npm start` runs it (built first when stale), or `tsx src/main.ts`.
 */
export async function startBenchGateway(upstreamUrl: string, options: GatewayOptions = {}): Promise<BenchGateway> {
  const root = options.root ?? repoRoot;
  const runner = builds(root) ? (options.runner ?? ((process.env.BENCH_GATEWAY_RUNNER as GatewayRunner | undefined) || 'compiled')) : 'tsx';
  const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
  mkdirSync(join(dir, 'channels'));
  cpSync(join(root, 'channels', 'protocols'), join(dir, 'channels', 'protocols'), { recursive: true });
  writeFileSync(
    join(dir, 'channels', 'bench.yaml'),
    `id: bench\nprotocol: openai-chat\nbaseUrl: ${upstreamUrl}/v1\nmodels:\n  - id: bench-chat\n    upstream: bench-upstream\n    kind: chat\n    price: { inputPerMillion: 1.0, outputPerMillion: 2.0 }\n${options.extraChannels ?? ''}`,
  );
  const workers = knowsWorkers(root) ? `  workers: ${options.workers ?? 1}\n` : '';
  writeFileSync(join(dir, 'config.yaml'), `server:\n  logLevel: warn\n${workers}storage:\n  dataDir: ${dir}/data\nchannels:\n  dir: ./channels\n${options.extraConfig ?? ''}`);
  const port = await freePort();
  // Logs at warn (as a busy deployment would): the first-start key line is a warning, so it marks readiness to bootstrap.
  // BENCH_GATEWAY_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the gateway process; see bench/README.md.
  const nodeArgs = [...(process.env.BENCH_GATEWAY_NODE_ARGS?.split(' ').filter(Boolean) ?? []), ...(options.nodeArgs ?? [])];
  // Two malloc arenas and the node flags `npm start` gives (package.json, Dockerfile), as that checkout's start runs it; a
  // cluster's workers get both from their primary.
  const nodeOptions = [startNodeOptions(root), process.env.NODE_OPTIONS ?? ''].join(' ').trim();
  const env = { MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX || '2', ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}), ...options.env, GATEWAY_CONFIG: join(dir, 'config.yaml'), PORT: String(port), HOST: '127.0.0.1' };
  const ready = /(sk-gw-[A-Za-z0-9_-]+)/;
  let proc;
  if (runner === 'compiled') {
    execSync(`${JSON.stringify(process.execPath)} scripts/build.mjs --if-stale`, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    proc = await spawnCommand(process.execPath, [...nodeArgs, 'dist/main.js'], env, ready, root);
  } else {
    proc = await spawnUntil('src/main.ts', [], env, ready, nodeArgs, root);
  }
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url);
  const key = proc.match[1];
  return {
    url,
    key,
    pid: proc.child.pid!,
    runner,
    async stop() {
      await proc.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitForHealth(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gateway at ${url} never became healthy`);
}

/** The mock upstream; MOCK_DELAY_MS in `env` delays each JSON answer (an upstream that takes time to answer). */
export async function startMock(env: NodeJS.ProcessEnv = {}) {
  const proc = await spawnUntil('bench/mock-upstream.ts', [], env, /MOCK_URL=(\S+)/);
  return { url: proc.match[1], stop: proc.stop };
}

export const chatBody = (extra: object = {}) => JSON.stringify({ model: 'bench-chat', messages: [{ role: 'user', content: 'Benchmark prompt, short.' }], max_tokens: 16, ...extra });

/**
 * The gateway's CPU microseconds per chat request (`pid` and its descendants, /proc) over `amount` requests of `body`
 * at 32 connections after `warmup` more; autocannon's `[<id>]` in the body becomes a fresh id per request (`distinct`),
 * or each request's body is `bodyOf(n)` for its number n (a marker of the bench's own making).
 */
export async function cpuMicrosPerRequest(url: string, key: string, body: string, pid: number, amount: number, { warmup = 2000, distinct = false, bodyOf }: { warmup?: number; distinct?: boolean; bodyOf?: (n: number) => string } = {}): Promise<number> {
  let n = 0;
  const requests: autocannon.Request[] | undefined = bodyOf ? [{ setupRequest: (req) => ({ ...req, body: bodyOf(n++) }) }] : undefined;
  const options = { url: `${url}/v1/chat/completions`, method: 'POST' as const, headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body, connections: 32, idReplacement: distinct, ...(requests ? { requests } : {}) };
  if (warmup > 0) await autocannon({ ...options, amount: warmup });
  const before = cpuSeconds(pid);
  const result = await autocannon({ ...options, amount });
  if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx and ${result.errors} errors`);
  return ((cpuSeconds(pid) - before) * 1e6) / amount;
}

/** Requests per second over `seconds` at `connections`, via autocannon. */
export async function throughput(url: string, headers: Record<string, string>, body: string, connections = 50, seconds = 5): Promise<number> {
  const result = await autocannon({ url, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, connections, duration: seconds });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`throughput run had ${result.non2xx} non-2xx and ${result.errors} errors`);
  return result.requests.average;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Sequential requests at concurrency 1 on one keep-alive connection; returns per-request times in ms to the full body (or to the first event). */
export async function sequentialTimes(url: string, headers: Record<string, string>, body: string, count: number, firstChunkOnly = false): Promise<number[]> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 1 });
  const times: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      const res = await pool.request({ method: 'POST', path: target.pathname, headers: { 'content-type': 'application/json', ...headers }, body });
      if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}: ${await res.body.text()}`);
      if (firstChunkOnly) {
        // The time of the first event, but the stream is read to its end: leaving it early would close the connection,
        // and every sample would then include a new TCP connection (and the relay's abort of its upstream call).
        let first = 0;
        for await (const chunk of res.body) {
          if (!first && String(chunk).includes('data:')) first = performance.now();
        }
        times.push(first - started);
      } else {
        await res.body.text();
        times.push(performance.now() - started);
      }
    }
  } finally {
    await pool.close();
  }
  return times;
}

export const round = (n: number, digits = 3) => Number(n.toFixed(digits));
