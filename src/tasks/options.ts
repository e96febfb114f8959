// The gateway config's `tasks:` section (schemas/config/tasks.json), with each task's own timeout and poll interval under it.
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { TaskSpec } from './spec.js';

export interface TasksOptions {
  tickMs: number;
  leaseMs: number;
  batchSize: number;
  maxNotFound: number;
  archiveMaxBytes: number;
  maxInFlightPerKey: number;
  timeoutSeconds?: number;
  poll?: { firstSeconds?: number; maxSeconds?: number };
}

export function tasksOptions(config: LoadedConfig): TasksOptions {
  const section = config.gateway.tasks;
  return {
    tickMs: section.tickMilliseconds,
    leaseMs: section.leaseSeconds * 1000,
    batchSize: section.batchSize,
    maxNotFound: section.maxNotFound,
    archiveMaxBytes: section.archiveMaxBytes,
    maxInFlightPerKey: section.maxInFlightPerKey,
    timeoutSeconds: section.timeoutSeconds,
    poll: section.poll,
  };
}

/** How long a task may run before it fails: the config's override, else the task's own. */
export const timeoutMsOf = (options: TasksOptions, spec: TaskSpec) => (options.timeoutSeconds ?? spec.timeoutSeconds) * 1000;

/** The wait before poll number `attempt` (0 first): the first interval, doubling up to the maximum. */
export function pollDelayMs(options: TasksOptions, spec: TaskSpec, attempt: number): number {
  const first = options.poll?.firstSeconds ?? spec.poll.interval.firstSeconds;
  const max = Math.max(first, options.poll?.maxSeconds ?? spec.poll.interval.maxSeconds);
  return Math.round(Math.min(max, first * 2 ** Math.min(attempt, 30)) * 1000);
}
