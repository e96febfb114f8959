// Several gateway processes on one port (server.workers, node:cluster). The primary serves no requests: it applies the
// migrations and the first-start bootstrap once, forks the workers and replaces one that dies, prints the one-time
// startup output once, passes SIGHUP on, drains every worker on SIGTERM, and keeps in memory what the workers must
// share besides the database and the file store: the rate-limit counters (storage.cache.driver memory) and the metrics
// they add up. Workers ask it over the cluster's IPC channel (askPrimary, src/base/cluster-ipc.ts).
import cluster, { type Address, type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import Keyv from 'keyv';
import type { Logger } from 'pino';
import { gatewayLogger, printPlain } from './http/log-format.js';
import { AggregatorRegistry } from 'prom-client';
import { askWorker, type FleetReload, type PrimaryReply, type PrimaryRequest } from './base/cluster-ipc.js';
import type { LoadedConfig } from './engine/loaded-config.js';
import { dataPathFor, startupWarnings, summarize } from './config/load.js';
import { keepParsedTexts } from './config/yaml-source.js';
import { settleHeap } from './base/settle-heap.js';
import { openConfiguredDatabase } from './store/open.js';
import { bootstrapDefaultWorkspace, firstStartBanner } from './auth/bootstrap.js';
import { KeyvRateStore, type RateSlot } from './billing/rate-store.js';
import { PID_FILE, pidFileContents, type WorkerReload } from './compile/reload.js';
import { sayFleetReload, type WorkerAnswer } from './compile/fleet-reload.js';

/** server.workers: that many processes; unset, one per core. An in-memory database cannot be shared: one. */
export function workerCount(config: LoadedConfig): number {
  const { driver, path } = config.gateway.storage.database;
  if (driver === 'sqlite' && path === ':memory:') return 1;
  return (config.gateway.server as { workers?: number }).workers ?? availableParallelism();
}

/** How long the primary waits for draining workers before it stops them (a worker's own grace is 10 s). */
const PRIMARY_GRACE_MS = 15_000;

/** How long the primary waits for a worker to answer a reload (it loads and compiles the whole config). */
const WORKER_RELOAD_MS = 30_000;

type Handler = (payload: unknown, from: Worker) => Promise<unknown> | unknown;

/** What the primary answers workers: the shared rate-limit counters and the metrics of every worker added up. */
function primaryHandlers(): Record<string, Handler> {
  const rates = new KeyvRateStore(new Keyv());
  const aggregator = new AggregatorRegistry();
  return {
    'rate-consume': (payload) => {
      const { slots, now } = payload as { slots: RateSlot[]; now: number };
      return rates.consume(slots, now);
    },
    metrics: () => aggregator.clusterMetrics(),
  };
}

function serveWorker(worker: Worker, handlers: Record<string, Handler>): void {
  worker.on('message', (message: PrimaryRequest) => {
    if (message?.gateway !== 'request') return;
    const handler = handlers[message.kind];
    Promise.resolve()
      .then(() => (handler ? handler(message.payload, worker) : Promise.reject(new Error(`no primary handler for ${message.kind}`))))
      .then(
        (result) => ({ gateway: 'reply', id: message.id, result }) satisfies PrimaryReply,
        (err: Error) => ({ gateway: 'reply', id: message.id, error: err.message }) satisfies PrimaryReply,
      )
      .then((reply) => {
        if (worker.isConnected()) worker.send(reply);
      });
  });
}

/** The first-start bootstrap's result: the key and owner link shown once, or nothing when already set up. */
type Issued = Awaited<ReturnType<typeof bootstrapDefaultWorkspace>>;

/**
 * What the primary's pieces share: what it says of its config once all listen, its workers, what each has done, and
 * whether it is stopping. Not the loaded config itself: the workers serve it, and the primary would hold its compiled
 * mappings, validators and fixtures for its life (issue 52).
 */
interface PrimaryState {
  said: { publicUrl: string; warnings: string[]; summary: string };
  count: number;
  log: Logger;
  issued: Issued;
  pidFile: string;
  handlers: Record<string, Handler>;
  /** Workers alive (cluster.workers may still list one whose exit is being reported). */
  live: Set<Worker>;
  stopping: boolean;
  exitCode: number;
  announced: boolean;
  listened: WeakSet<Worker>;
  reloadPending: WeakSet<Worker>;
  /** Why a worker could not listen (a port taken meanwhile), said once when the primary stops. */
  listenFailure?: string;
}

/** Applies the migrations and the first-start bootstrap once, before any worker opens the database. */
async function prepareDatabase(config: LoadedConfig): Promise<Issued> {
  const database = await openConfiguredDatabase(config);
  const issued = await bootstrapDefaultWorkspace(database.db);
  await database.close();
  return issued;
}

/** Writes the primary's pid file (what `kill -HUP` reads) and returns its path. */
function writePidFile(config: LoadedConfig): string {
  const pidFile = dataPathFor(config)(PID_FILE);
  mkdirSync(dirname(pidFile), { recursive: true });
  writeFileSync(pidFile, pidFileContents());
  return pidFile;
}

/** The one-time startup output, printed once every worker listens. */
function announce(state: PrimaryState, address: Address): void {
  const { said, count, log, issued, pidFile } = state;
  const host = address.address && address.address !== '::' && address.address !== '0.0.0.0' ? address.address : '127.0.0.1';
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  log.info(`listening at ${url} with ${count} workers`);
  // The first start's key and owner link come first, then what the config says (its channels), so neither is lost.
  if (issued) {
    printPlain(firstStartBanner(issued, said.publicUrl || url));
    log.info({ workspace: issued.workspace, keyId: issued.id }, 'first start: printed the key and the owner link above');
  }
  for (const warning of said.warnings) log.warn(warning);
  log.info(`${said.summary}; ${count} worker processes`);
  log.info(`pid ${process.pid} (written to ${pidFile}): kill -HUP ${process.pid} reloads the config, SIGTERM drains and stops`);
  // What the start needed (the config's load, the migrations) is given back: the primary only forwards messages from now on.
  if (process.env.GATEWAY_SETTLE_HEAP !== 'off') settleHeap({ rounds: 6 });
}

/**
 * What a worker's environment adds to the primary's. glibc's malloc gives each thread that allocates an arena of its
 * own (up to 8 a core), and an arena keeps what was freed inside it: V8's compiler and collector threads and the spend
 * thread left a worker ~10 MiB more resident after a busy spell, for good. Two arenas a worker hold ~4 MiB less at
 * start and ~10 MiB less after a busy spell, for no more CPU a request (bench/README.md, issue 52). An operator's own
 * MALLOC_ARENA_MAX is kept; the primary itself and a single-process gateway take it from `npm start` and the image.
 */
export function workerEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return { MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX || '2' };
}

/** Forks one worker, serves its requests, and records when it listens (announcing once all do). */
function forkWorker(state: PrimaryState): void {
  const worker = cluster.fork(workerEnvironment());
  state.live.add(worker);
  serveWorker(worker, state.handlers);
  worker.once('listening', (address) => {
    state.listened.add(worker);
    // A SIGHUP that came while it started: it may have read the config before the change.
    if (state.reloadPending.delete(worker)) void askReload(worker).then((answer) => sayFleetReload(state.log, [answer], state.live.size));
    // Said once every worker listens: requests are then spread over all of them.
    if (state.announced || [...state.live].filter((w) => state.listened.has(w)).length < state.count) return;
    state.announced = true;
    announce(state, address);
  });
}

/** A worker exited: the last one while stopping ends the primary; one that never listened stops it; else another is forked. */
function onWorkerExit(state: PrimaryState, worker: Worker, code: number, signal: string): void {
  state.live.delete(worker);
  if (state.stopping) {
    if (!state.live.size) {
      rmSync(state.pidFile, { force: true });
      process.exit(state.exitCode);
    }
    return;
  }
  if (!state.listened.has(worker)) {
    // It died starting (a port in use, a store it cannot open): another would too. Stop rather than fork in a loop.
    if (state.listenFailure) console.error(state.listenFailure);
    else state.log.error(`worker ${worker.process.pid} exited (${signal ?? code}) before it listened; stopping`);
    state.exitCode = 1;
    stopPrimary(state, 'SIGTERM', !!state.listenFailure);
    return;
  }
  state.log.error(`worker ${worker.process.pid} exited (${signal ?? code}); starting another`);
  forkWorker(state);
}

/** Drains every worker (SIGTERM), killing them after PRIMARY_GRACE_MS; the primary exits once none is left. */
function stopPrimary(state: PrimaryState, signal: NodeJS.Signals, quiet = false): void {
  if (state.stopping) return;
  state.stopping = true;
  const { live, pidFile } = state;
  if (!quiet) state.log.info(`${signal}: draining ${live.size} worker(s), then closing`);
  setTimeout(() => {
    for (const worker of live) worker.process.kill('SIGKILL');
    rmSync(pidFile, { force: true });
    process.exit(1);
  }, PRIMARY_GRACE_MS).unref();
  if (!live.size) {
    rmSync(pidFile, { force: true });
    process.exit(state.exitCode);
  }
  for (const worker of live) worker.process.kill('SIGTERM');
}

/** One worker's reload, at the primary's request: its answer, or why there was none. */
function askReload(worker: Worker): Promise<WorkerAnswer> {
  const pid = worker.process.pid;
  return askWorker<WorkerReload>(worker, 'reload', WORKER_RELOAD_MS).then(
    (report) => ({ pid, report }),
    (err: Error) => ({ pid, failed: err.message }),
  );
}

/** The workers that listen; each one still starting is marked to reload once it listens. */
function listeningElsePending(state: PrimaryState, workers: Worker[]): Worker[] {
  const listening: Worker[] = [];
  for (const worker of workers) {
    if (state.listened.has(worker)) listening.push(worker);
    else state.reloadPending.add(worker);
  }
  return listening;
}

/**
 * Passes SIGHUP on: every listening worker reloads and the outcome is said once for the group; a worker still starting
 * reloads once it listens (it may have read the config before the change).
 */
async function reloadWorkers(state: PrimaryState): Promise<void> {
  sayFleetReload(state.log, await Promise.all(listeningElsePending(state, [...state.live]).map(askReload)), state.live.size);
}

/**
 * One worker reloaded through the admin API (and said so): every other one reloads too, quietly, and the answer counts
 * those that did (a worker still starting reloads once it listens, and is not counted).
 */
async function reloadOthers(state: PrimaryState, from: Worker): Promise<FleetReload> {
  const answers = await Promise.all(listeningElsePending(state, [...state.live].filter((worker) => worker !== from)).map(askReload));
  for (const a of answers) if ('failed' in a) state.log.error(`worker ${a.pid} did not reload: ${a.failed}`);
  return { reloaded: answers.filter((a) => 'report' in a && a.report.ok).length, total: state.live.size };
}

/** The primary of `count` workers; resolves once it has started them (it then runs until SIGTERM). */
export async function runPrimary(config: LoadedConfig, count: number): Promise<void> {
  const log: Logger = gatewayLogger({ level: config.gateway.server.logLevel });

  const issued = await prepareDatabase(config);
  const pidFile = writePidFile(config);
  keepParsedTexts(false);
  const state: PrimaryState = {
    said: { publicUrl: config.gateway.server.publicUrl, warnings: startupWarnings(config), summary: `config ${config.file}: ${summarize(config)}` },
    count,
    log,
    issued,
    pidFile,
    handlers: primaryHandlers(),
    live: new Set<Worker>(),
    stopping: false,
    exitCode: 0,
    announced: false,
    listened: new WeakSet<Worker>(),
    reloadPending: new WeakSet<Worker>(),
  };

  state.handlers['reload-others'] = (_payload, from) => reloadOthers(state, from);
  state.handlers['listen-failed'] = (line) => void (state.listenFailure ??= String(line));
  cluster.on('exit', (worker, code, signal) => onWorkerExit(state, worker, code, signal));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stopPrimary(state, signal));
  process.on('SIGHUP', () => void reloadWorkers(state));

  for (let i = 0; i < count; i++) forkWorker(state);
}
