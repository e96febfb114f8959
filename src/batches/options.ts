// The gateway config's `tasks.batches:` section (schemas/config/tasks.json), with the tasks' tick and lease it shares.
import type { LoadedConfig } from '../engine/loaded-config.js';

export interface BatchesOptions {
  tickMs: number;
  leaseMs: number;
  batchSize: number;
  linesPerTick: number;
  inFlightPerChannel: number;
  maxAttempts: number;
  maxLines: number;
  maxLineBytes: number;
  completionWindowMs: number;
  /** When a batch goes to its vendor's batch API (src/batches/relay-choice.ts). */
  relay: 'priced' | 'always' | 'never';
}

export function batchesOptions(config: LoadedConfig): BatchesOptions {
  const tasks = config.gateway.tasks;
  const section = tasks.batches;
  return {
    tickMs: tasks.tickMilliseconds,
    leaseMs: tasks.leaseSeconds * 1000,
    batchSize: tasks.batchSize,
    linesPerTick: section.linesPerTick,
    inFlightPerChannel: section.inFlightPerChannel,
    maxAttempts: section.maxAttempts,
    maxLines: section.maxLines,
    maxLineBytes: section.maxLineBytes,
    completionWindowMs: section.completionWindowHours * 3600 * 1000,
    relay: section.relay,
  };
}
