// What one API request contributes to its request-log row while it runs: the settlement (model, channel, tokens, cost),
// the first streamed byte and the error answered. Made only for requests that get that far; the row itself is made
// when the answer is done (writer.ts).
import type { SettleObserver } from '../billing/charge.js';
import type { AttemptRecord } from '../engine/upstream.js';
import type { GuardrailVerdict } from '../config/types.js';
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
  /** What the response cache did: hit, miss or bypass; null where the route does not cache. */
  cache: 'hit' | 'miss' | 'bypass' | null = null;
  /** A routed request's attempts at its targets, in order; the last one that answered is the one settled. */
  attempts?: AttemptRecord[];

  /** Each guardrail's verdict on each stage it ran at (never what it matched). */
  guardrails?: GuardrailVerdict[];

  guardrailVerdict(verdict: GuardrailVerdict): void {
    (this.guardrails ??= []).push(verdict);
  }

  /** The verdicts as the row stores them, times in whole-ish milliseconds. */
  guardrailsJson(): string | null {
    return this.guardrails ? JSON.stringify(this.guardrails.map((v) => ({ ...v, ms: Math.round(v.ms * 100) / 100 }))) : null;
  }

  attempted(attempt: AttemptRecord): void {
    (this.attempts ??= []).push(attempt);
  }

  /**
   * The attempts as the row stores them: each with its cost (what the answering attempt was charged; a failed attempt,
   * nothing; each answering attempt of a stream continued on another target, its own part) and why a stream broke.
   */
  attemptsJson(): string | null {
    const attempts = this.attempts;
    if (!attempts) return null;
    let answered = attempts.length - 1;
    while (answered >= 0 && attempts[answered].status >= 400) answered--;
    // Written out rather than mapped to objects and stringified: one string a routed request, nothing else made.
    let json = '[';
    for (let i = 0; i < attempts.length; i++) {
      const a = attempts[i];
      const cost = a.costMicros ?? (i === answered ? this.costMicros : 0);
      json += `${i ? ',' : ''}{"channel":${JSON.stringify(a.channel)},"model":${JSON.stringify(a.model)},"status":${jsonNumber(a.status)},"latency_ms":${jsonNumber(Math.round(a.latencyMs))},"cost_micros":${jsonNumber(cost)}${a.broken ? `,"broken":${JSON.stringify(a.broken)}` : ''}}`;
    }
    return `${json}]`;
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

/** A number as JSON.stringify writes it (null when not finite). */
const jsonNumber = (n: number) => (Number.isFinite(n) ? String(n) : 'null');
