// A real gateway process for the suites that need one (npm start, workers): its log lines, a wait for a line, its exit.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { chatChannel, testModels } from './gateway.js';
import { compiled } from './compiled.js';
import { repoRoot } from './paths.js';

export interface GatewayProcess {
  child: ChildProcess;
  lines: string[];
  /** Resolves with the first line (already logged or still to come) that matches. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
}

export function spawnGateway(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): GatewayProcess {
  const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env } });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];
  let buffer = '';
  const onData = (data: Buffer) => {
    buffer += data.toString();
    const parts = buffer.split('\n');
    buffer = parts.pop()!;
    for (const line of parts) {
      lines.push(line);
      for (const waiter of [...waiters]) {
        const match = waiter.pattern.exec(line);
        if (match) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(match);
        }
      }
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    lines,
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      for (const line of lines) {
        const match = pattern.exec(line);
        if (match) return Promise.resolve(match);
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no line matched ${pattern} in ${timeoutMs} ms:\n${lines.slice(-20).join('\n')}`)), timeoutMs);
        waiters.push({ pattern, resolve: (m) => (clearTimeout(timer), resolve(m)) });
        void exited.then((code) => reject(new Error(`the process exited (${code}) before a line matched ${pattern}:\n${lines.slice(-20).join('\n')}`)));
      });
    },
  };
}

/** Whether a process is still alive (signal 0 probes without signalling). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The child processes of `pid` (pgrep -P). */
export function childrenOf(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)]).toString().trim().split('\n').map(Number).filter(Boolean);
  } catch {
    return [];
  }
}

/** Every process below `pid`: its children, theirs, and so on. */
export const processTree = (pid: number): number[] => childrenOf(pid).flatMap((child) => [child, ...processTree(child)]);

/** Kills a spawned gateway and every process below it (a primary's workers, and whatever they started). */
export function killTree(gateway: GatewayProcess | undefined): void {
  if (gateway) for (const pid of [gateway.child.pid!, ...processTree(gateway.child.pid!)]) if (alive(pid)) process.kill(pid, 'SIGKILL');
}

/**
 * A gateway in its own process (the compiled one, dist/) on `configFile`, without jobs: resolves with its URL once it
 * listens. The script is a module file beside the config (a spend thread inherits node's flags, and --input-type=module
 * would be refused for its file).
 */
export async function spawnChildGateway(configFile: string): Promise<{ child: ChildProcess; url: string }> {
  const script = join(dirname(configFile), 'child-gateway.mjs');
  writeFileSync(
    script,
    `
import { loadConfig } from '${compiled('compile/load-config')}';
import { createServices } from '${compiled('services')}';
import { buildApp } from '${compiled('app')}';
const services = await createServices(await loadConfig(process.argv[2]));
const app = await buildApp(services, { logger: false });
console.log(await app.listen({ host: '127.0.0.1', port: 0 }));
`,
  );
  const child = spawn(process.execPath, [script, configFile], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
  const [url] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return { child, url };
}

/** A gateway of two worker processes on `config` (its server.workers: 2), written as `dir`/config.yaml. Resolves once both workers listen. */
export async function spawnWorkers(dir: string, config: string): Promise<{ gateway: GatewayProcess; url: string }> {
  writeFileSync(join(dir, 'config.yaml'), config);
  const gateway = spawnGateway(process.execPath, [compiled('main')], { cwd: repoRoot, env: { GATEWAY_CONFIG: join(dir, 'config.yaml'), PORT: '0', HOST: '127.0.0.1' } });
  const url = (await gateway.waitFor(/listening at (http:\/\/127\.0\.0\.1:\d+) with 2 workers/, 90_000))[1];
  return { gateway, url };
}

/**
 * A gateway of two worker processes (server.workers: 2) on a config written in `dir`: one channel `fake` (flat-chat,
 * one cent a request) at `upstreamUrl`, plus `extraConfig` (top-level YAML) and `storageConfig` (lines inside
 * `storage:`, indented two spaces). Resolves once both workers listen.
 */
export async function spawnTwoWorkers(dir: string, upstreamUrl: string, extraConfig: string, storageConfig = ''): Promise<{ gateway: GatewayProcess; url: string }> {
  mkdirSync(join(dir, 'channels'));
  writeFileSync(join(dir, 'channels', 'fake.yaml'), chatChannel('fake', upstreamUrl, { models: testModels.flatChat }));
  return spawnWorkers(dir, `server:\n  workers: 2\nstorage:\n  dataDir: ${dir}/data\n${storageConfig}channels:\n  dir: ./channels\n  protocolsDir: ${repoRoot}/channels/protocols\n${extraConfig}`);
}

/**
 * Runs `script` (an ES module's text, under tsx) in a child process that records every module it loads
 * (test/kit/loaded-modules.ts: `globalThis.loadedModules()`), on the SQLite test database, with `args` after it; the
 * script's last line of output is its answer, as JSON.
 */
export async function runWatchingModules<T>(script: string, ...args: string[]): Promise<T> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--import', './test/kit/loaded-modules.ts', '--input-type=module', '-e', script, ...args], {
    cwd: repoRoot,
    env: { ...process.env, GATEWAY_TEST_DATABASE: 'sqlite' },
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as T;
}
