// The settle stage: usage mapped once per operation becomes the charge. No final usage: the reservation. Usage above the
// reservation is charged in full; the overage is recorded (ledger, metric, warning).
import { tokenCostMicros, type TokenUsage } from '../billing/cost.js';
import type { Charge, SettleOutcome, Settlement } from '../billing/meter.js';
import type { ModelRoute } from '../config/types.js';
import type { UsageReader } from './usage.js';
import type { Call, CallLog } from './call.js';

/**
 * Whether an answer may go out before its settlement commits: yes on a store that batches commits (the reservation
 * holds the cap until the batch lands); no on one that commits each settlement on its own (PostgreSQL), which settles
 * first so the ledger already holds the charge when the client reads the answer.
 */
export function answerBeforeCommit(call: Call): boolean {
  return call.services.spend.commitsInBatches;
}

/** An answer whose charge is still settling: the pipeline sends it and waits for the settlement, in the order the store allows. */
export class SettlingAnswer {
  constructor(
    readonly answer: unknown,
    readonly settled: Promise<void>,
    /**
     * The charge is above its reservation: the reservation no longer holds the cap for it, so the answer waits for the
     * commit whatever the store (a client that saw the answer never gets a call admitted on a cap the answer spent).
     */
    readonly overReservation = false,
  ) {}
}

/** Whether the final usage read so far costs more than the charge reserved (unreadable usage is charged the reservation: no). */
export function exceedsReservation(charge: Charge, route: ModelRoute, usage: UsageReader): boolean {
  try {
    const counts = usage.final ? usage.counts() : undefined;
    return counts !== undefined && tokenCostMicros(route.model.price, counts) > charge.ref.amountMicros;
  } catch {
    return false;
  }
}

/**
 * Settles a charge from the usage an upstream reported: in full, what it cost beyond the reservation recorded as overage
 * and logged; or, when the usage is impossible for the model (billing/usage-bounds.ts says why), the reservation, logged,
 * never overage. Every billed path that reads reported usage settles here (the settle stage, a task's completion).
 */
export async function settleReported(charge: Charge, route: ModelRoute, log: CallLog, reported: Settlement | { impossible: string }): Promise<SettleOutcome> {
  if ('impossible' in reported) {
    log.warn({ channel: route.channel.id, model: route.model.id, reason: reported.impossible, reservedMicros: charge.ref.amountMicros }, 'upstream reported impossible usage; charging the reservation, no overage');
    return charge.settleReserved();
  }
  const outcome = await charge.settle(reported);
  if (outcome.overageMicros > 0) {
    log.warn({ channel: route.channel.id, model: route.model.id, overageMicros: outcome.overageMicros, reservedMicros: charge.ref.amountMicros }, 'upstream usage cost more than the reservation; charged in full, overage recorded');
  }
  return outcome;
}

/**
 * Settles from the usage read so far; usage that is missing, not final or malformed charges the reservation. A stream cut
 * short whose start reported usage (Anthropic's message_start) is charged that usage plus the output it streamed
 * (`streamedOutput`, estimated), not the reservation.
 */
export async function settleFromUsage(charge: Charge, route: ModelRoute, usage: UsageReader, log: CallLog, streamedOutput?: number): Promise<void> {
  let counts;
  try {
    counts = usage.final ? usage.counts() : streamedOutput === undefined ? undefined : usage.counts();
  } catch (err) {
    if (usage.final) {
      await settleReported(charge, route, log, { impossible: (err as Error).message });
      return;
    }
    counts = undefined;
  }
  if (counts && !usage.final) counts = { ...counts, outputTokens: Math.max(counts.outputTokens, streamedOutput ?? 0) };
  if (!counts) {
    log.warn({ channel: route.channel.id, final: usage.final }, 'upstream reported no final usage; charging the reserved worst case');
    await charge.settleReserved();
    return;
  }
  await settleReported(charge, route, log, { costMicros: tokenCostMicros(route.model.price, counts), ...settledTokens(counts), route });
}

/**
 * The usage read so far; usage that is not counts, or that the request makes impossible, charges the reservation (logged,
 * no overage) and is thrown, answered 502 upstream_malformed. Every non-streamed answer that reports usage reads it here.
 */
export async function reportedCounts(call: Call, charge: Charge, route: ModelRoute, usage: UsageReader): Promise<TokenUsage | undefined> {
  try {
    return usage.counts();
  } catch (err) {
    if ((err as { code?: string }).code === 'upstream_malformed') await settleReported(charge, route, call.log, { impossible: (err as Error).message });
    throw err;
  }
}

/** One answering attempt of a stream continued on other targets: its usage, and what it is charged when it reported none. */
export interface AttemptUsage {
  route: ModelRoute;
  usage: UsageReader;
  /** Output tokens it streamed, estimated. */
  streamedOutput?: number;
  /** Input tokens it was sent, estimated from its request's size. */
  inputEstimate: number;
}

/**
 * Settles one charge for the attempts of a stream continued on other targets: each one its reported usage, an attempt
 * cut short without final usage its input (reported, else estimated) and the output it streamed; the sum is charged
 * once, on the ledger row of the target that answered last. Usage that is impossible charges the reservation (logged).
 * Each attempt's cost, or undefined when the reservation was charged.
 */
export async function settleAttempts(charge: Charge, attempts: readonly AttemptUsage[], log: CallLog): Promise<number[] | undefined> {
  const sum: Required<Pick<TokenUsage, 'inputTokens' | 'outputTokens' | 'cachedInputTokens'>> = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };
  const costs: number[] = [];
  for (const attempt of attempts) {
    let counts: TokenUsage | undefined;
    try {
      counts = attempt.usage.counts();
    } catch (err) {
      await settleReported(charge, attempt.route, log, { impossible: (err as Error).message });
      return undefined;
    }
    if (!attempt.usage.final) {
      counts = { ...counts, inputTokens: counts?.inputTokens || attempt.inputEstimate, outputTokens: Math.max(counts?.outputTokens ?? 0, attempt.streamedOutput ?? 0) };
    }
    costs.push(tokenCostMicros(attempt.route.model.price, counts!));
    sum.inputTokens += counts!.inputTokens;
    sum.outputTokens += counts!.outputTokens;
    sum.cachedInputTokens += counts!.cachedInputTokens ?? 0;
  }
  const route = attempts[attempts.length - 1].route;
  await settleReported(charge, route, log, { costMicros: costs.reduce((a, b) => a + b, 0), ...sum, route });
  return costs;
}

/** The ledger's figures of `usage`: its token counts, and its first unit's count as `units`. */
export function settledTokens(usage: TokenUsage): Omit<Settlement, 'costMicros'> {
  const { units, ...tokens } = usage;
  const first = units && Object.values(units)[0];
  return { ...tokens, ...(first === undefined ? {} : { units: first }) };
}

/** Ends a charge after a failure: work the upstream did (an answer arrived, or the client left it working) is charged the reservation. */
export async function settleAfterFailure(charge: Charge, upstreamWorked: boolean): Promise<void> {
  if (charge.ended) return;
  await (upstreamWorked ? charge.settleReserved() : charge.release());
}
