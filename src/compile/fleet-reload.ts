// What the primary of several workers says of a reload it passed on (SIGHUP): one line for the group, not one per
// worker. Each worker answers how its reload went (src/compile/reload.ts, reloadForPrimary) and logs it at debug only.
import type { Logger } from 'pino';
import type { WorkerReload } from './reload.js';

/** One worker's answer, or why there was none (it exited, or did not answer in time). */
export type WorkerAnswer = { pid: number | undefined } & ({ report: WorkerReload } | { failed: string });

/**
 * Says once what the workers' reloads did: the changes (the first worker's: every worker reads the same files), new
 * warnings once, a refusal with its problems, and any worker that did not reload.
 */
export function sayFleetReload(log: Logger, answers: readonly WorkerAnswer[], total: number): void {
  const reports = answers.flatMap((a) => ('report' in a ? [a.report] : []));
  for (const a of answers) if ('failed' in a) log.error(`worker ${a.pid} did not reload: ${a.failed}`);
  const refused = reports.find((r) => !r.ok);
  const done = reports.filter((r) => r.ok);
  const of = `${done.length} of ${total} worker(s)`;
  if (refused) log.error({ problems: refused.problems }, `reload refused in ${reports.length - done.length} of ${total} worker(s), the running config keeps serving:\n${(refused.problems ?? []).join('\n')}`);
  const first = done[0];
  if (!first) return;
  for (const warning of first.warnings ?? []) log.warn(warning);
  if (first.changes?.length) log.info({ changes: first.changes }, `reloaded in ${of}: ${first.changes.join('; ')}`);
  else log.info(`reload in ${of}: nothing changed (files and environment as before)`);
  if (first.restart?.length) log.warn({ settings: first.restart }, `config settings ${first.restart.join(', ')} changed; they apply at the next restart (a reload swaps the rest)`);
}
