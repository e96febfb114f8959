// Starts the gateway: load config (exit 1 on errors), open stores, bootstrap, listen on PORT/HOST or the configured address (and metrics.listen).
// With server.workers above 1 this process is the cluster's primary (src/cluster.ts) and each worker runs serve().
import cluster from 'node:cluster';
import type { FastifyInstance } from 'fastify';
import { ConfigError } from './base/errors.js';
import { resolveConfigPath, startupWarnings, summarize } from './config/load.js';
import { loadConfig, type LoadedConfig } from './compile/load-config.js';
import type { Services } from './services.js';
import { bootstrapDefaultWorkspace, firstStartBanner } from './auth/bootstrap.js';
import { printPlain } from './http/log-format.js';
import { PID_FILE, pidFileContents, reloadConfig, reloadForPrimary } from './compile/reload.js';
import { runPrimary, workerCount } from './cluster.js';
import { answerPrimary, askPrimary } from './base/cluster-ipc.js';
import { checkPortFree, portInUseMessage } from './net/port-in-use.js';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { resettleWhenIdle, settleHeap } from './base/settle-heap.js';
import { keepParsedTexts } from './config/yaml-source.js';

const SHUTDOWN_GRACE_MS = 10_000;

async function main() {
  const file = resolveConfigPath();
  let config;
  try {
    config = await loadConfig(file);
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const problem of err.problems) console.error(problem);
      console.error(`config invalid: ${err.problems.length} error(s); nothing started`);
      process.exit(1);
    }
    throw err;
  }
  if (cluster.isWorker) return serve(config, true);
  // A port already taken is said in one line before anything is touched (the other gateway's pid file included).
  const { host, port } = listenAddress(config);
  await checkPortFree(host, port).catch((err: unknown) => exitIfPortInUse(err, host, port));
  const workers = workerCount(config);
  if (workers > 1) return runPrimary(config, workers);
  return serve(config, false);
}

/** Exits 1 with one line when `err` is a port in use; rethrows anything else. */
function exitIfPortInUse(err: unknown, host: string, port: number): never {
  const line = portInUseMessage(err, host, port);
  if (!line) throw err;
  console.error(line);
  process.exit(1);
}

/** Where the gateway listens: HOST and PORT, else the config's server.host and server.port. */
function listenAddress(config: LoadedConfig): { host: string; port: number } {
  return { host: process.env.HOST || config.gateway.server.host, port: process.env.PORT ? Number(process.env.PORT) : config.gateway.server.port };
}

/**
 * Listens where the config says; a port taken since the start's check is one line, by the primary when this is a worker
 * (it stops the others), else here, and exit 1.
 */
async function listenOrExit(app: FastifyInstance, config: LoadedConfig, worker: boolean): Promise<string> {
  const { host, port } = listenAddress(config);
  // A worker's own "Server listening at" line would repeat, once a worker, what the primary says once for all of them.
  if (worker) app.log.level = 'warn';
  const address = await app.listen({ host, port }).catch(async (err: unknown) => {
    // Taken since the check: one line, by the primary when this is a worker (it stops the others), else here.
    const line = worker ? portInUseMessage(err, host, port) : undefined;
    if (!line) return exitIfPortInUse(err, host, port);
    await askPrimary('listen-failed', line).catch(() => undefined);
    process.exit(1);
  });
  if (worker) app.log.level = config.gateway.server.logLevel;
  return address;
}

/**
 * What the start alone needed (its modules' bytecode, a young generation grown to its largest) is given back once the
 * process listens, in full collections 5.5 s apart, each skipped while the event loop is busy (src/base/settle-heap.ts);
 * up to 6 of them: it stops once the young generation has shrunk, which takes two on a quiet start; and a few
 * again whenever it goes quiet after serving (resettleWhenIdle: load regrows the young generation). The YAML
 * texts parsed at start, kept to speed later loads, are not held for the process's life: a reload parses again.
 * GATEWAY_SETTLE_HEAP=off leaves the heap as it is: the test suites start gateway after gateway and stop each within
 * seconds, and those collections (about 0.5 s of CPU a process) gave back memory no one was waiting for.
 */
function settleAfterListen(services: Services): void {
  keepParsedTexts(false);
  if (process.env.GATEWAY_SETTLE_HEAP === 'off') return;
  const settling = settleHeap({ rounds: 6 });
  // And again each time it goes quiet after serving (30 s without requests): load regrows what the start gave back.
  const resettling = resettleWhenIdle();
  services.onClose(() => {
    settling.stop();
    resettling.stop();
  });
}

/** What serving needs, imported when a process serves, not at the top: a cluster's primary never loads the app, its stores or its routes. */
const servingModules = () => Promise.all([import('./services.js'), import('./app.js'), import('./jobs.js'), import('./telemetry/metrics-server.js')]);

/** One gateway process: alone, or one worker of several (the primary then did the one-time start-up and owns the pid file). */
async function serve(config: LoadedConfig, worker: boolean) {
  const [{ createServices }, { buildApp }, { startBackgroundJobs }, { metricsOptions, startMetricsServer }] = await servingModules();
  const services = await createServices(config);
  const app = await buildApp(services);
  const issued = worker ? undefined : await bootstrapDefaultWorkspace(services.db);
  await startBackgroundJobs(services, app.log);
  // SIGHUP (or `npm run admin -- reload`, which sends it): swap in the checked config, or keep serving the old one.
  // A worker gets it from the primary (whose pid is the one written), as soon as it listens: the handler is in place by then.
  process.on('SIGHUP', () => void reloadConfig(services, app.log));
  // SIGHUP to the group, or the admin API's reload taken by another worker: the primary asks every worker to swap, and
  // says how it went once for all of them.
  if (worker) answerPrimary('reload', () => reloadForPrimary(services, app.log));

  const address = await listenOrExit(app, config, worker);
  settleAfterListen(services);
  // The first start's key and owner link come first, then what the config says (its channels), so neither is lost.
  if (issued) {
    printPlain(firstStartBanner(issued, config.gateway.server.publicUrl || address));
    app.log.info({ workspace: issued.workspace, keyId: issued.id }, 'first start: printed the key and the owner link above');
  }
  if (!worker) {
    for (const warning of startupWarnings(config)) app.log.warn(warning);
    app.log.info(`config ${config.file}: ${summarize(config)}`);
  }
  const { listen: metricsListen } = metricsOptions(config);
  if (metricsListen) {
    // Workers share this address too (node:cluster); any of them answers with every worker's metrics.
    const metricsServer = await startMetricsServer(services.metrics, metricsListen);
    services.onClose(() => metricsServer.close());
    if (!worker) app.log.info(`metrics: ${metricsServer.url}/metrics`);
  }
  if (!worker) {
    const pidFile = services.dataPath(PID_FILE);
    mkdirSync(dirname(pidFile), { recursive: true });
    writeFileSync(pidFile, pidFileContents());
    services.onClose(() => rmSync(pidFile, { force: true }));
    app.log.info(`pid ${process.pid} (written to ${pidFile}): kill -HUP ${process.pid} reloads the config, SIGTERM drains and stops`);
  }
  let draining = false;
  const drain = (signal: string) => {
    if (draining) return;
    draining = true;
    app.log.info(`${signal}: draining, then closing`);
    // Drain: no new connections, requests and streams in flight get a grace period; a keep-alive socket must not hold the process open.
    setTimeout(() => process.exit(0), SHUTDOWN_GRACE_MS).unref();
    app.close().then(() => process.exit(0), () => process.exit(1));
  };
  if (worker) {
    // Ctrl-C reaches the whole process group: the primary turns it into one SIGTERM for each worker, so a second one does no harm.
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => drain(signal));
    // The primary is gone (killed): no one would replace or stop this worker.
    process.on('disconnect', () => drain('primary gone'));
  } else {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => drain(signal));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
