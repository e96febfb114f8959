// The gateway config's `webhooks:` section (schemas/config/webhooks.json), and the retry schedule it sets.
import type { GatewayConfig } from '../config/types.js';

export interface WebhooksOptions {
  tickMs: number;
  leaseMs: number;
  batchSize: number;
  timeoutMs: number;
  maxAnswerBytes: number;
  maxAttempts: number;
  retrySeconds: readonly number[];
  rotationGraceMs: number;
}

export function webhooksOptions(config: { gateway: Pick<GatewayConfig, 'webhooks'> }): WebhooksOptions {
  const section = config.gateway.webhooks;
  const timeoutMs = section.timeoutSeconds * 1000;
  return {
    tickMs: section.tickMilliseconds,
    // The lease outlives one attempt, so a slow receiver is never sent the same attempt from a second replica.
    leaseMs: Math.max(section.leaseSeconds * 1000, timeoutMs + 5000),
    batchSize: section.batchSize,
    timeoutMs,
    maxAnswerBytes: section.maxAnswerBytes,
    maxAttempts: section.maxAttempts,
    retrySeconds: section.retrySeconds,
    rotationGraceMs: section.rotationGraceSeconds * 1000,
  };
}

/** The wait after failed attempt number `attempts` (1 first): the schedule's entry (its last repeats), plus up to 10% jitter. */
export function retryDelayMs(options: Pick<WebhooksOptions, 'retrySeconds'>, attempts: number, random = Math.random): number {
  const schedule = options.retrySeconds;
  const seconds = schedule[Math.min(Math.max(attempts, 1), schedule.length) - 1];
  return Math.round(seconds * 1000 * (1 + random() * 0.1));
}
