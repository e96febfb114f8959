// Hot reload (SIGHUP, or `npm run admin -- reload`): check the config file again and swap the runtime snapshot, or keep serving.
import type { FastifyBaseLogger } from 'fastify';
import { renameSync, writeFileSync } from 'node:fs';
import { ConfigError } from '../base/errors.js';
import { dataPathFor } from '../config/locate.js';
import type { LoadedConfig } from '../engine/loaded-config.js';

export { gatewayPid, PID_FILE, pidFileContents, processStartTime } from '../base/pid-file.js';

/** The reloadable part of the assembled gateway: its current config, the swap, and the requests still on an old snapshot. */
export interface Reloadable {
  readonly config: LoadedConfig;
  reload(): Promise<LoadedConfig>;
  readonly runtime: { readonly draining: number };
}

/**
 * The settings a reload applies at once: read from the current snapshot on each use. Everything else is built into
 * long-lived services at start (database, blob store, listeners, the task and webhook timers, limits, the fetcher).
 */
const APPLY_AT_ONCE = new Set([
  'channels',
  'admin',
  'dashboard',
  'evaluate',
  'billing.defaultLimits',
  'server.upstreamAnswerMaxBytes',
  'server.referenceBytesInFlight',
  ...['leaseSeconds', 'batchSize', 'maxNotFound', 'archiveMaxBytes', 'archiveGraceSeconds', 'timeoutSeconds', 'maxInFlightPerKey', 'poll'].map((s) => `tasks.${s}`),
  ...['leaseSeconds', 'batchSize', 'timeoutSeconds', 'maxAnswerBytes', 'maxAttempts', 'retrySeconds', 'rotationGraceSeconds'].map((s) => `webhooks.${s}`),
]);

const isSection = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The settings (`section` or `section.key`) that changed and apply only at the next restart. */
export function settingsNeedingRestart(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const changed: string[] = [];
  for (const section of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const [was, now] = [before[section], after[section]];
    if (APPLY_AT_ONCE.has(section) || JSON.stringify(was) === JSON.stringify(now)) continue;
    if (!isSection(was) || !isSection(now)) {
      changed.push(section);
      continue;
    }
    for (const key of new Set([...Object.keys(was), ...Object.keys(now)])) {
      const path = `${section}.${key}`;
      if (!APPLY_AT_ONCE.has(path) && JSON.stringify(was[key]) !== JSON.stringify(now[key])) changed.push(path);
    }
  }
  return changed;
}

/** The levels a reload logs at (a quiet one sends them all to debug). */
type ReloadLog = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;

/** How the last reload went, for /readyz: a refused one is reported until a good one replaces it. */
export interface ReloadOutcome {
  ok: boolean;
  /** Unix seconds. */
  at: number;
  /** Why it was refused (the config's problems, bounded). */
  problems?: string[];
}

const lastReloads = new WeakMap<object, ReloadOutcome>();

export function lastReload(services: object): ReloadOutcome | undefined {
  return lastReloads.get(services);
}

/** What a reload did: the config now serving, what changed, the settings waiting for a restart, and the channels not serving and why. */
export interface ReloadResult {
  config: LoadedConfig;
  /** Empty: the files and the environment say what they said; nothing was applied. */
  changes: string[];
  restart: string[];
  /** The config's warnings that the running one did not have (said once, when new). */
  warnings: string[];
  /** Each disabled channel's reason ("channel "x" is disabled: environment variable X is not set"); never a value. */
  disabled: string[];
}

/**
 * Loads the config file again and swaps it in, logging what changed (or that nothing did) and the sections that wait for
 * a restart; a config that does not load, or changes what only a restart applies (the catalogue's routes), throws its
 * ConfigError, recorded for /readyz, and the running one keeps serving.
 */
export async function applyReload(services: Reloadable, logger: FastifyBaseLogger, how: string, quiet = false): Promise<ReloadResult> {
  // A worker reloading at its primary's request says it at debug: the primary says it once for the group.
  const log: ReloadLog = quiet ? { info: logger.debug.bind(logger), warn: logger.debug.bind(logger), error: logger.debug.bind(logger) } : logger;
  // Loaded here, not at the top: modules that import this one only for lastReload (/readyz) need none of the config loader.
  const { summarize } = await import('../config/load.js');
  const { reloadChanges } = await import('./reload-changes.js');
  const before = services.config;
  const at = Math.floor(Date.now() / 1000);
  try {
    const next = await services.reload();
    // A warning is said when it is new: the ones the running config had were said at start or at an earlier reload.
    const warnings = next.warnings.filter((warning) => !before.warnings.includes(warning));
    for (const warning of warnings) log.warn(warning);
    const changes = reloadChanges(before, next);
    if (changes.length) log.info({ changes }, `reloaded ${before.file}${how}: ${changes.join('; ')}; now ${summarize(next)}; ${services.runtime.draining} request(s) finishing on the previous config`);
    else log.info(`reload of ${before.file}${how}: nothing changed (files and environment as before)`);
    const restart = settingsNeedingRestart(before.gateway, next.gateway);
    if (restart.length) log.warn({ settings: restart }, `config settings ${restart.join(', ')} changed; they apply at the next restart (a reload swaps the rest)`);
    lastReloads.set(services, { ok: true, at });
    return { config: next, changes, restart, warnings, disabled: next.channels.flatMap((c) => (c.disabledReason ? [c.disabledReason] : [])) };
  } catch (err) {
    const problems = err instanceof ConfigError ? err.problems : ['the config could not be loaded; see the log'];
    lastReloads.set(services, { ok: false, at, problems: problems.slice(0, 20).map((p) => p.slice(0, 300)) });
    if (err instanceof ConfigError) log.error({ problems: err.problems }, `reload refused, the running config keeps serving:\n${err.problems.join('\n')}`);
    else log.error({ err }, 'reload failed; the running config keeps serving');
    throw err;
  }
}

/** Where a gateway writes how its last signalled reload went, in storage.dataDir: `npm run admin -- reload` reads it back. */
export const RELOAD_OUTCOME_FILE = 'reload-outcome.json';

/** What a signalled reload writes for the admin CLI: this process, when, and the answer (problems, or what changed). */
export interface WrittenOutcome {
  pid: number;
  /** Unix milliseconds when the reload ended. */
  at: number;
  ok: boolean;
  problems?: string[];
  changes?: string[];
  restart?: string[];
  disabled?: string[];
}

/** Written whole (a temporary file renamed over the last), so a reader never sees half of one. */
function writeOutcome(services: Reloadable, outcome: Omit<WrittenOutcome, 'pid' | 'at'>): void {
  try {
    const file = dataPathFor(services.config)(RELOAD_OUTCOME_FILE);
    writeFileSync(`${file}.${process.pid}.tmp`, JSON.stringify({ pid: process.pid, at: Date.now(), ...outcome }));
    renameSync(`${file}.${process.pid}.tmp`, file);
  } catch {
    // The data folder is not writable: the log still says how the reload went.
  }
}

/** A reload on a signal (SIGHUP): whether it was swapped in. Its outcome is written for the admin CLI. */
export async function reloadConfig(services: Reloadable, log: FastifyBaseLogger): Promise<boolean> {
  return (await reloadReport(services, log, false)).ok;
}

/** What a worker answers its primary's reload: how it went, logged at debug here and said once by the primary. */
export type WorkerReload = Omit<WrittenOutcome, 'pid' | 'at'> & { warnings?: string[] };

/** A worker's reload at its primary's request (SIGHUP to the group, or the admin API taken by another worker). */
export function reloadForPrimary(services: Reloadable, log: FastifyBaseLogger): Promise<WorkerReload> {
  return reloadReport(services, log, true);
}

async function reloadReport(services: Reloadable, log: FastifyBaseLogger, quiet: boolean): Promise<WorkerReload> {
  return applyReload(services, log, '', quiet).then(
    ({ changes, restart, disabled, warnings }) => {
      writeOutcome(services, { ok: true, changes, restart, disabled });
      return { ok: true, changes, restart, disabled, warnings };
    },
    (err) => {
      const problems = err instanceof ConfigError ? err.problems.slice(0, 50) : ['the config could not be loaded; see the log'];
      writeOutcome(services, { ok: false, problems });
      return { ok: false, problems };
    },
  );
}
