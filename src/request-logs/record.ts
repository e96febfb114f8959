// What one API request contributes to its request-log row while it runs: the settlement (model, channel, tokens, cost),
// the first streamed byte and the error answered. Made only for requests that get that far; the row itself is made
// when the answer is done (writer.ts).
import type { SettleObserver } from '../billing/charge.js';
import type { AttemptRecord } from '../engine/upstream.js';
import type { LedgerEntry } from '../store/usage-ledger.js';

export class RequestLogRecord implements SettleObserver {
  model = '';
  channel = '';
  inputTokens = 0;
  outputTokens = 0;
  cachedInputTokens = 0;
  units = 0;
  costMicros = 0;
  currency = '';
  /** Milliseconds from the request's arrival to its first streamed event; null for an answer that was not streamed. */
  ttftMs: number | null = null;
  errorType: string | null = null;
  errorCode: string | null = null;
  /** A routed request's attempts at its targets, in order; the last one that answered is the one settled. */
  attempts?: AttemptRecord[];

  attempted(attempt: AttemptRecord): void {
    (this.attempts ??= []).push(attempt);
  }

  /**
   * The attempts as the row stores them: each with its cost (what the answering attempt was charged; a failed attempt,
   * nothing; each answering attempt of a stream continued on another target, its own part) and why a stream broke.
   */
  attemptsJson(): string | null {
    if (!this.attempts) return null;
    let answered = this.attempts.length - 1;
    while (answered >= 0 && this.attempts[answered].status >= 400) answered--;
    return JSON.stringify(
      this.attempts.map((a, i) => ({
        channel: a.channel,
        model: a.model,
        status: a.status,
        latency_ms: Math.round(a.latencyMs),
        cost_micros: a.costMicros ?? (i === answered ? this.costMicros : 0),
        ...(a.broken ? { broken: a.broken } : {}),
      })),
    );
  }

  /** Several charges (an evaluate request's, a fallback's) add up; the last one names the model and channel. */
  settled(entry: LedgerEntry): void {
    this.model = entry.model;
    this.channel = entry.channel;
    this.inputTokens += Number(entry.input_tokens ?? 0);
    this.outputTokens += Number(entry.output_tokens ?? 0);
    this.cachedInputTokens += Number(entry.cached_input_tokens ?? 0);
    this.units += Number(entry.units ?? 0);
    this.costMicros += Number(entry.cost_micros ?? 0);
    this.currency = entry.currency;
  }
}

const recordKey = Symbol('requestLogRecord');
type WithRecord = { [recordKey]?: RequestLogRecord };

/** The record of a request (any object a transport knows it by), made on first use. */
export function recordOf(carrier: object): RequestLogRecord {
  return ((carrier as WithRecord)[recordKey] ??= new RequestLogRecord());
}

/** The record of a request, when anything was recorded. */
export function recordIfAny(carrier: object): RequestLogRecord | undefined {
  return (carrier as WithRecord)[recordKey];
}
